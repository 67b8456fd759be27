-- 012_card_id_key: card ids that are card numbers, and what the rules
-- removed, counted per run, as SQLite schema version 15
-- (schema/015_card_id_key.sql).
--
-- card_id_key holds one row, written once by this migration's Go step (32
-- bytes from a cryptographic random source, in the migration's transaction
-- under its advisory lock, so two processes migrating at once agree) and
-- never changed: the key of the keyed hash by which a card id that holds a
-- card number is stored. Whoever can read it can test a guessed card number
-- against a stored id.
CREATE TABLE card_id_key (
    singleton  integer     NOT NULL PRIMARY KEY CHECK (singleton = 1),
    key        bytea       NOT NULL CHECK (length(key) = 32),
    created_at timestamptz NOT NULL
);

ALTER TABLE sync_runs ADD COLUMN card_numbers_masked bigint NOT NULL DEFAULT 0;
ALTER TABLE sync_runs ADD COLUMN codes_dropped bigint NOT NULL DEFAULT 0;
ALTER TABLE sync_runs ADD COLUMN track_data_dropped bigint NOT NULL DEFAULT 0;
ALTER TABLE sync_runs ADD COLUMN fields_dropped bigint NOT NULL DEFAULT 0;
