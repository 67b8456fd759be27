-- cardsync warehouse schema, version 15: card ids that are card numbers, and
-- what the rules removed, counted per run.
--
-- card_id_key holds one row, written once when the warehouse is created (or,
-- for a warehouse created by an earlier cardsync, when it is upgraded to
-- this version) and never changed: 32 random bytes. A card id that is or
-- holds a card number is stored as its masked form, '~' and a keyed hash
-- (HMAC-SHA256 with this key) of the id as sent, so the same card keeps the
-- same id in every run. A backup is a copy of the file and carries the key.
-- Whoever can read this row can test a guessed card number against a stored
-- id: it is as sensitive as the warehouse itself.
--
-- The row is inserted by package load in the same transaction (its Go step
-- of migration 15), from a cryptographic random source.
CREATE TABLE card_id_key (
    singleton  INTEGER NOT NULL PRIMARY KEY CHECK (singleton = 1),
    key        BLOB    NOT NULL CHECK (length(key) = 32),
    created_at TEXT    NOT NULL
) STRICT;

-- Per-run counters, added to as secrets_redacted is: the card numbers
-- masked (a card id stored by its pseudonym counts one), the security codes
-- and PINs dropped, the track data dropped, and the top-level card fields
-- [cards] keep_fields left out. Runs recorded before this version read 0.
ALTER TABLE sync_runs ADD COLUMN card_numbers_masked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sync_runs ADD COLUMN codes_dropped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sync_runs ADD COLUMN track_data_dropped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sync_runs ADD COLUMN fields_dropped INTEGER NOT NULL DEFAULT 0;
