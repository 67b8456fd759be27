-- cardsync warehouse schema, version 9: card_fields is bounded. Each row
-- gains last_seen_at, when a page commit last saw its field (UTC text, like
-- first_seen_at; every commit that records a run's fields stamps it).
-- Package load deletes the rows not seen for warehouse.field_retention
-- (default 90 days) after a complete walk, and cards_flat loses their
-- columns. The rows stored before this version count as seen now, at the
-- upgrade: none is pruned before a full retention has passed.
-- SQLite adds a NOT NULL column only with a constant default: '' is never
-- kept, the UPDATE below and every insert set the time.
ALTER TABLE card_fields ADD COLUMN last_seen_at TEXT NOT NULL DEFAULT '';
UPDATE card_fields SET last_seen_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now');
