-- cardsync warehouse schema, version 2: odd data is quarantined, never halts
-- a sync; account amounts with float noise are rounded and marked; mass
-- removals are held; the flat view knows which fields it shows.
-- Package load also re-applies the current redaction policy to the rows
-- already stored (cards, card_versions, account_snapshots.raw, sync_runs.error)
-- and rebuilds cards_flat, in the same transaction as this file.

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

-- sync_health gains the account snapshot's age and the last run's
-- rejections and held removals; an interrupted run (SIGTERM, Ctrl-C) no
-- longer counts as a failure in a row.
DROP VIEW sync_health;
CREATE VIEW sync_health AS
WITH last_success AS (
    SELECT max(run_id) AS run_id FROM sync_runs WHERE status = 'succeeded'
),
last_run AS (
    SELECT run_id, status, started_at, cards_rejected, removals_held, account_error
    FROM sync_runs ORDER BY run_id DESC LIMIT 1
),
last_snapshot AS (
    SELECT taken_at FROM account_snapshots ORDER BY taken_at DESC, snapshot_id DESC LIMIT 1
)
SELECT
    (SELECT run_id FROM last_success) AS last_success_run,
    (SELECT finished_at FROM sync_runs WHERE run_id = (SELECT run_id FROM last_success)) AS last_success_at,
    CAST(strftime('%s', 'now') - strftime('%s', (SELECT finished_at FROM sync_runs WHERE run_id = (SELECT run_id FROM last_success))) AS INTEGER) AS last_success_age_seconds,
    (SELECT count(*) FROM sync_runs
      WHERE status IN ('failed', 'abandoned')
        AND run_id > coalesce((SELECT run_id FROM last_success), 0)) AS failures_in_a_row,
    (SELECT run_id FROM last_run) AS last_run,
    (SELECT status FROM last_run) AS last_status,
    (SELECT started_at FROM last_run) AS last_started_at,
    (SELECT count(*) FROM sync_runs WHERE status = 'running') AS running,
    (SELECT CASE outcome WHEN 'complete' THEN 1 WHEN 'inconsistent' THEN 0 END
       FROM sync_walks WHERE outcome IN ('complete', 'inconsistent')
      ORDER BY walk_id DESC LIMIT 1) AS last_walk_consistent,
    (SELECT count(*) FROM cards WHERE removed_at IS NULL) AS current_cards,
    (SELECT count(*) FROM removal_pending) AS pending_removals,
    (SELECT taken_at FROM last_snapshot) AS last_snapshot_at,
    CAST(strftime('%s', 'now') - strftime('%s', (SELECT taken_at FROM last_snapshot)) AS INTEGER) AS last_snapshot_age_seconds,
    (SELECT account_error FROM last_run) AS last_account_error,
    (SELECT cards_rejected FROM last_run) AS last_cards_rejected,
    (SELECT removals_held FROM last_run) AS last_removals_held;
