-- cardsync warehouse schema, version 2: odd data is quarantined, never halts
-- a sync; account amounts with float noise are rounded and marked; mass
-- removals are held; the flat view knows which fields it shows.
-- Package load also re-applies the current redaction policy to the rows
-- already stored (cards, card_versions, account_snapshots.raw, sync_runs.error)
-- and names every field's cards_flat column, in the same transaction as this
-- file.

-- One row per card item that could not be stored as a card (no usable id,
-- not an object, nested deeper than SQLite's JSON functions allow, not
-- UTF-8, its id used twice on one page). A rejected item whose id was read
-- counts as listed, so it is never marked removed because of it. The same
-- rejection seen again (same card id, reason and data) updates last_run_id,
-- last_rejected_at and times instead of adding a row.
CREATE TABLE rejected_cards (
    rejected_id      INTEGER PRIMARY KEY,
    run_id           INTEGER NOT NULL REFERENCES sync_runs (run_id),
    page             INTEGER NOT NULL,
    card_id          TEXT,
    reason           TEXT    NOT NULL,
    data             TEXT    NOT NULL,
    rejected_at      TEXT    NOT NULL,
    last_run_id      INTEGER NOT NULL REFERENCES sync_runs (run_id),
    last_rejected_at TEXT    NOT NULL,
    times            INTEGER NOT NULL DEFAULT 1,
    data_sha256      TEXT    NOT NULL
) STRICT;

CREATE INDEX rejected_cards_card ON rejected_cards (card_id, reason, data_sha256);
CREATE INDEX rejected_cards_run ON rejected_cards (last_run_id);

-- cards_rejected: items of this run's pages set aside in rejected_cards.
-- removals_held: cards a complete, consistent walk did not list but did not
-- mark removed because they were more than warehouse.max_removed_fraction
-- of the live cards (or the list came back empty); run
-- `cardsync backfill -confirm-removals` to apply them.
-- account_error: why no account snapshot was taken in this run (the card
-- walk goes on without it); NULL when the snapshot was taken.
ALTER TABLE sync_runs ADD COLUMN cards_rejected INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sync_runs ADD COLUMN removals_held INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sync_runs ADD COLUMN account_error TEXT;

-- 1 when an amount came with more decimals than api.amount_scale (PHP float
-- noise such as 1234.5600000000002) and was rounded half to even into its
-- *_minor column; raw keeps the exact text.
ALTER TABLE account_snapshots ADD COLUMN amounts_rounded INTEGER NOT NULL DEFAULT 0
    CHECK (amounts_rounded IN (0, 1));

-- column_name: the field's column in cards_flat (unique case-insensitively,
-- a usable SQL name); in_flat_view: 0 when the view already holds its
-- maximum of 1,900 field columns (the field stays in cards.data).
ALTER TABLE card_fields ADD COLUMN column_name TEXT;
ALTER TABLE card_fields ADD COLUMN in_flat_view INTEGER NOT NULL DEFAULT 1
    CHECK (in_flat_view IN (0, 1));
