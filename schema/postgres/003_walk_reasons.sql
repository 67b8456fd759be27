-- 003_walk_reasons: why a walk was inconsistent, and on which pages, as
-- in the SQLite warehouse (schema/006_walk_reasons.sql says what the
-- values are). inconsistent_pages is JSON text (a JSON array of page
-- numbers), like SQLite's, so that both warehouses answer alike.
ALTER TABLE sync_walks ADD COLUMN inconsistent_reason text;
ALTER TABLE sync_walks ADD COLUMN inconsistent_pages text CHECK (inconsistent_pages IS NULL OR inconsistent_pages::jsonb IS NOT NULL);
