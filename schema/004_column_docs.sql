-- cardsync warehouse schema, version 4: the warehouse describes itself.
-- One row per column of every public table and view, so that any SQL client
-- can ask what a column means:
--   SELECT column_name, description, unit FROM column_docs WHERE table_name = 'sync_runs';
-- Package load fills it from package schema's documentation (schema/docs.json)
-- in the same transaction as this file, and refreshes it whenever a writer
-- opens a warehouse whose rows differ from what the binary knows, so it never
-- goes stale. unit: cents, currency units, seconds, milliseconds or bytes;
-- NULL when the column has none. The columns of cards_flat other than
-- card_id and removed_at are the card fields themselves (see card_fields).
CREATE TABLE column_docs (
    table_name  TEXT NOT NULL,
    column_name TEXT NOT NULL,
    description TEXT NOT NULL,
    unit        TEXT,
    PRIMARY KEY (table_name, column_name)
) STRICT, WITHOUT ROWID;
