-- cardsync warehouse schema, version 5: one file can hold several API
-- accounts. Every row that belongs to an account says which one in an
-- account column (TEXT NOT NULL DEFAULT 'default', 1 to 64 characters of
-- a-z, 0-9, _ and -); the rows stored before this version, and every row a
-- single-account setup writes, belong to the account named 'default'.
-- account is the last column of every table and view that has one, so a
-- reader of the former columns by position keeps working.
--
-- Which tables get the column, and why:
--   card_state, card_versions, removal_pending: a card id is unique within
--     its account only; the key becomes (account, card_id), which SQLite can
--     only change by rebuilding the table (create, copy, drop, rename).
--   sync_checkpoints: one checkpoint per (account, stream): rebuilt.
--   sync_runs, sync_walks, account_snapshots, rejected_cards: rows of one
--     account; their key (a rowid) does not change, so ADD COLUMN is enough.
--   walk_seen, run_pages: no column. Their rows belong to one walk or run
--     (walk_id, run_id), which already names its account; a copy of it
--     could only disagree.
--   card_fields: no column. It lists the columns of the one cards_flat view
--     of the file, whose columns are the union of every account's fields.
--   column_docs: describes the schema, not an account.
-- Package load regenerates cards_flat (it gains the account column) and
-- refreshes column_docs in the same transaction as this file.

-- The views read the tables rebuilt below: they go first and are made
-- again at the end.
DROP VIEW cards_current;
DROP VIEW cards_flat;
DROP VIEW cards;
DROP VIEW sync_health;
DROP VIEW account_balance_changes;
DROP VIEW account_balances;

-- Tables keyed by a rowid gain the column in place.
ALTER TABLE sync_runs ADD COLUMN account TEXT NOT NULL DEFAULT 'default'
    CHECK (length(account) BETWEEN 1 AND 64 AND account NOT GLOB '*[^a-z0-9_-]*');
ALTER TABLE sync_walks ADD COLUMN account TEXT NOT NULL DEFAULT 'default'
    CHECK (length(account) BETWEEN 1 AND 64 AND account NOT GLOB '*[^a-z0-9_-]*');
ALTER TABLE account_snapshots ADD COLUMN account TEXT NOT NULL DEFAULT 'default'
    CHECK (length(account) BETWEEN 1 AND 64 AND account NOT GLOB '*[^a-z0-9_-]*');
ALTER TABLE rejected_cards ADD COLUMN account TEXT NOT NULL DEFAULT 'default'
    CHECK (length(account) BETWEEN 1 AND 64 AND account NOT GLOB '*[^a-z0-9_-]*');

DROP INDEX sync_runs_status;
CREATE INDEX sync_runs_status ON sync_runs (account, status, run_id);
CREATE INDEX sync_runs_account ON sync_runs (account, run_id);
DROP INDEX sync_walks_open;
CREATE UNIQUE INDEX sync_walks_open ON sync_walks (account, stream) WHERE finished_at IS NULL;
CREATE INDEX sync_walks_account ON sync_walks (account, outcome, walk_id);
DROP INDEX account_snapshots_taken;
CREATE INDEX account_snapshots_taken ON account_snapshots (account, taken_at);
DROP INDEX rejected_cards_card;
CREATE INDEX rejected_cards_card ON rejected_cards (account, card_id, reason, data_sha256);

-- The rebuilt tables: the old ones are renamed out of the way first (the
-- rename carries the foreign keys between them), the new ones take the
-- names, the rows are copied parents first, and the old tables are dropped
-- children first, so foreign keys hold at every step.
ALTER TABLE card_state RENAME TO card_state_v4;
ALTER TABLE card_versions RENAME TO card_versions_v4;
ALTER TABLE removal_pending RENAME TO removal_pending_v4;
ALTER TABLE sync_checkpoints RENAME TO sync_checkpoints_v4;

CREATE TABLE card_state (
    card_id        TEXT    NOT NULL,
    data           TEXT    NOT NULL CHECK (json_valid(data)),
    first_seen_at  TEXT    NOT NULL,
    last_seen_at   TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    removed_at     TEXT,
    first_seen_run INTEGER NOT NULL REFERENCES sync_runs (run_id),
    last_seen_run  INTEGER NOT NULL REFERENCES sync_runs (run_id),
    data_hash      BLOB,
    account        TEXT    NOT NULL DEFAULT 'default'
        CHECK (length(account) BETWEEN 1 AND 64 AND account NOT GLOB '*[^a-z0-9_-]*'),
    PRIMARY KEY (account, card_id)
) STRICT;

CREATE TABLE card_versions (
    card_id    TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    valid_from TEXT    NOT NULL,
    valid_to   TEXT,
    run_id     INTEGER NOT NULL REFERENCES sync_runs (run_id),
    change     TEXT    NOT NULL CHECK (change IN ('new', 'changed', 'removed', 'returned')),
    data       TEXT    NOT NULL CHECK (json_valid(data)),
    account    TEXT    NOT NULL DEFAULT 'default',
    PRIMARY KEY (account, card_id, version),
    FOREIGN KEY (account, card_id) REFERENCES card_state (account, card_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE removal_pending (
    card_id   TEXT    NOT NULL,
    walk_id   INTEGER NOT NULL REFERENCES sync_walks (walk_id),
    missed_at TEXT    NOT NULL,
    account   TEXT    NOT NULL DEFAULT 'default',
    PRIMARY KEY (account, card_id),
    FOREIGN KEY (account, card_id) REFERENCES card_state (account, card_id)
) STRICT;

CREATE TABLE sync_checkpoints (
    stream      TEXT    NOT NULL,
    run_id      INTEGER REFERENCES sync_runs (run_id),
    next_page   INTEGER NOT NULL DEFAULT 1,
    total_pages INTEGER NOT NULL DEFAULT 0,
    total_items INTEGER NOT NULL DEFAULT 0,
    updated_at  TEXT    NOT NULL,
    account     TEXT    NOT NULL DEFAULT 'default'
        CHECK (length(account) BETWEEN 1 AND 64 AND account NOT GLOB '*[^a-z0-9_-]*'),
    PRIMARY KEY (account, stream)
) STRICT;

INSERT INTO card_state (card_id, data, first_seen_at, last_seen_at, updated_at, removed_at,
        first_seen_run, last_seen_run, data_hash, account)
    SELECT card_id, data, first_seen_at, last_seen_at, updated_at, removed_at,
        first_seen_run, last_seen_run, data_hash, 'default'
    FROM card_state_v4 ORDER BY rowid;
INSERT INTO card_versions (card_id, version, valid_from, valid_to, run_id, change, data, account)
    SELECT card_id, version, valid_from, valid_to, run_id, change, data, 'default' FROM card_versions_v4;
INSERT INTO removal_pending (card_id, walk_id, missed_at, account)
    SELECT card_id, walk_id, missed_at, 'default' FROM removal_pending_v4 ORDER BY rowid;
INSERT INTO sync_checkpoints (stream, run_id, next_page, total_pages, total_items, updated_at, account)
    SELECT stream, run_id, next_page, total_pages, total_items, updated_at, 'default' FROM sync_checkpoints_v4;

DROP TABLE card_versions_v4;
DROP TABLE removal_pending_v4;
DROP TABLE card_state_v4;
DROP TABLE sync_checkpoints_v4;

-- A lookup by card id alone (a single-account query such as
-- WHERE card_id = '1') stays an index search, not a scan.
CREATE INDEX card_state_card ON card_state (card_id);
CREATE UNIQUE INDEX card_versions_current ON card_versions (account, card_id) WHERE valid_to IS NULL;
CREATE INDEX card_versions_run ON card_versions (run_id);
CREATE INDEX card_versions_card ON card_versions (card_id, version);

-- As in version 3, per account: a current card's last_seen_at/last_seen_run
-- come from the last complete walk of its own account. walk_accounts lists
-- the accounts of sync_walks one index seek each (not a scan of the
-- table), and last_walk, one row per account, is built once per query.
CREATE VIEW cards AS
WITH RECURSIVE walk_accounts(account) AS (
    SELECT min(account) FROM sync_walks
    UNION ALL
    SELECT (SELECT min(x.account) FROM sync_walks x WHERE x.account > walk_accounts.account)
    FROM walk_accounts WHERE walk_accounts.account IS NOT NULL
),
last_walk AS MATERIALIZED (
    SELECT w.account, w.finished_at, w.finished_run
    FROM walk_accounts a JOIN sync_walks w
      ON w.walk_id = (SELECT max(x.walk_id) FROM sync_walks x
                       WHERE x.account = a.account AND x.outcome = 'complete' AND x.finished_run IS NOT NULL)
    WHERE a.account IS NOT NULL
),
c AS (
    SELECT s.card_id, s.data, s.first_seen_at, s.last_seen_at, s.updated_at, s.removed_at,
           s.first_seen_run, s.last_seen_run, w.finished_at AS walk_at, w.finished_run AS walk_run,
           s.removed_at IS NULL
             AND (w.finished_run, w.finished_at) > (s.last_seen_run, s.last_seen_at)
             AND NOT EXISTS (SELECT 1 FROM removal_pending p WHERE p.account = s.account AND p.card_id = s.card_id) AS by_walk,
           s.account
    FROM card_state s LEFT JOIN last_walk w ON w.account = s.account
)
SELECT
    card_id,
    data,
    first_seen_at,
    CASE WHEN by_walk THEN walk_at ELSE last_seen_at END AS last_seen_at,
    updated_at,
    removed_at,
    first_seen_run,
    CASE WHEN by_walk THEN walk_run ELSE last_seen_run END AS last_seen_run,
    account
FROM c;

-- Cards the API currently lists.
CREATE VIEW cards_current AS
SELECT card_id, data, first_seen_at, last_seen_at, updated_at, first_seen_run, last_seen_run, account
FROM cards
WHERE removed_at IS NULL;

-- A placeholder: package load regenerates cards_flat from card_fields in
-- the same transaction.
CREATE VIEW cards_flat AS
SELECT card_id, removed_at, account
FROM card_state;

-- Account amounts as exact canonical decimal text with two decimals.
CREATE VIEW account_balances AS
SELECT
    snapshot_id,
    run_id,
    taken_at,
    name,
    email,
    timezone,
    CASE WHEN transfer_amount_minor IS NULL THEN NULL
         WHEN transfer_amount_minor < 0 THEN '-' || (-(transfer_amount_minor / 100)) || '.' || substr('0' || (-(transfer_amount_minor % 100)), -2)
         ELSE (transfer_amount_minor / 100) || '.' || substr('0' || (transfer_amount_minor % 100), -2) END AS transfer_amount,
    CASE WHEN reach_amount_minor IS NULL THEN NULL
         WHEN reach_amount_minor < 0 THEN '-' || (-(reach_amount_minor / 100)) || '.' || substr('0' || (-(reach_amount_minor % 100)), -2)
         ELSE (reach_amount_minor / 100) || '.' || substr('0' || (reach_amount_minor % 100), -2) END AS reach_amount,
    CASE WHEN authorizations_minor IS NULL THEN NULL
         WHEN authorizations_minor < 0 THEN '-' || (-(authorizations_minor / 100)) || '.' || substr('0' || (-(authorizations_minor % 100)), -2)
         ELSE (authorizations_minor / 100) || '.' || substr('0' || (authorizations_minor % 100), -2) END AS authorizations,
    CASE WHEN balance_minor IS NULL THEN NULL
         WHEN balance_minor < 0 THEN '-' || (-(balance_minor / 100)) || '.' || substr('0' || (-(balance_minor % 100)), -2)
         ELSE (balance_minor / 100) || '.' || substr('0' || (balance_minor % 100), -2) END AS balance,
    CASE WHEN cards_balance_minor IS NULL THEN NULL
         WHEN cards_balance_minor < 0 THEN '-' || (-(cards_balance_minor / 100)) || '.' || substr('0' || (-(cards_balance_minor % 100)), -2)
         ELSE (cards_balance_minor / 100) || '.' || substr('0' || (cards_balance_minor % 100), -2) END AS cards_balance,
    CASE WHEN available_recharge_balance_minor IS NULL THEN NULL
         WHEN available_recharge_balance_minor < 0 THEN '-' || (-(available_recharge_balance_minor / 100)) || '.' || substr('0' || (-(available_recharge_balance_minor % 100)), -2)
         ELSE (available_recharge_balance_minor / 100) || '.' || substr('0' || (available_recharge_balance_minor % 100), -2) END AS available_recharge_balance,
    available_to_apply_card_count,
    applied_card_count,
    account
FROM account_snapshots;

-- As in version 1, each account's snapshots compared with the previous
-- snapshot of the same account.
CREATE VIEW account_balance_changes AS
WITH s AS (
    SELECT
        snapshot_id, run_id, taken_at, account,
        lag(snapshot_id) OVER w AS previous_snapshot_id,
        lag(taken_at) OVER w AS previous_taken_at,
        transfer_amount_minor, lag(transfer_amount_minor) OVER w AS prev_transfer_amount_minor,
        reach_amount_minor, lag(reach_amount_minor) OVER w AS prev_reach_amount_minor,
        authorizations_minor, lag(authorizations_minor) OVER w AS prev_authorizations_minor,
        balance_minor, lag(balance_minor) OVER w AS prev_balance_minor,
        cards_balance_minor, lag(cards_balance_minor) OVER w AS prev_cards_balance_minor,
        available_recharge_balance_minor, lag(available_recharge_balance_minor) OVER w AS prev_available_recharge_balance_minor
    FROM account_snapshots
    WINDOW w AS (PARTITION BY account ORDER BY taken_at, snapshot_id)
),
l AS (
    SELECT snapshot_id, run_id, taken_at, account, previous_snapshot_id, previous_taken_at, 'transfer_amount' AS amount, prev_transfer_amount_minor AS old_minor, transfer_amount_minor AS new_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, account, previous_snapshot_id, previous_taken_at, 'reach_amount', prev_reach_amount_minor, reach_amount_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, account, previous_snapshot_id, previous_taken_at, 'authorizations', prev_authorizations_minor, authorizations_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, account, previous_snapshot_id, previous_taken_at, 'balance', prev_balance_minor, balance_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, account, previous_snapshot_id, previous_taken_at, 'cards_balance', prev_cards_balance_minor, cards_balance_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, account, previous_snapshot_id, previous_taken_at, 'available_recharge_balance', prev_available_recharge_balance_minor, available_recharge_balance_minor FROM s
),
d AS (
    SELECT *, new_minor - old_minor AS change_minor
    FROM l
    WHERE old_minor IS NOT new_minor
)
SELECT
    snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, amount,
    old_minor, new_minor, change_minor,
    CASE WHEN old_minor IS NULL THEN NULL
         WHEN old_minor < 0 THEN '-' || (-(old_minor / 100)) || '.' || substr('0' || (-(old_minor % 100)), -2)
         ELSE (old_minor / 100) || '.' || substr('0' || (old_minor % 100), -2) END AS old_value,
    CASE WHEN new_minor IS NULL THEN NULL
         WHEN new_minor < 0 THEN '-' || (-(new_minor / 100)) || '.' || substr('0' || (-(new_minor % 100)), -2)
         ELSE (new_minor / 100) || '.' || substr('0' || (new_minor % 100), -2) END AS new_value,
    CASE WHEN change_minor IS NULL THEN NULL
         WHEN change_minor < 0 THEN '-' || (-(change_minor / 100)) || '.' || substr('0' || (-(change_minor % 100)), -2)
         ELSE (change_minor / 100) || '.' || substr('0' || (change_minor % 100), -2) END AS change,
    account
FROM d;

-- One row per account that has runs (every card came with a run of its
-- account; a warehouse without runs has one row for 'default', as before),
-- with the columns of version 3 computed over that account's rows only.
-- run_accounts lists the accounts one index seek each.
CREATE VIEW sync_health AS
WITH RECURSIVE run_accounts(account) AS (
    SELECT min(account) FROM sync_runs
    UNION ALL
    SELECT (SELECT min(r.account) FROM sync_runs r WHERE r.account > run_accounts.account)
    FROM run_accounts WHERE run_accounts.account IS NOT NULL
),
accounts AS (
    SELECT account FROM run_accounts WHERE account IS NOT NULL
    UNION ALL
    SELECT 'default' WHERE NOT EXISTS (SELECT 1 FROM sync_runs)
),
a AS (
    SELECT
        account,
        (SELECT max(r.run_id) FROM sync_runs r WHERE r.account = accounts.account AND r.status = 'succeeded') AS success_run,
        (SELECT max(r.run_id) FROM sync_runs r WHERE r.account = accounts.account) AS last_run_id,
        (SELECT max(w.walk_id) FROM sync_walks w
          WHERE w.account = accounts.account AND w.outcome IN ('complete', 'inconsistent')) AS last_walk_id,
        (SELECT n.snapshot_id FROM account_snapshots n WHERE n.account = accounts.account
          ORDER BY n.taken_at DESC, n.snapshot_id DESC LIMIT 1) AS snapshot_id
    FROM accounts
)
SELECT
    a.success_run AS last_success_run,
    s.finished_at AS last_success_at,
    CAST(strftime('%s', 'now') - strftime('%s', s.finished_at) AS INTEGER) AS last_success_age_seconds,
    (SELECT count(*) FROM sync_runs r
      WHERE r.account = a.account AND r.status IN ('failed', 'abandoned')
        AND r.run_id > coalesce(a.success_run, 0)) AS failures_in_a_row,
    a.last_run_id AS last_run,
    l.status AS last_status,
    l.started_at AS last_started_at,
    (SELECT count(*) FROM sync_runs r WHERE r.account = a.account AND r.status = 'running') AS running,
    (SELECT CASE outcome WHEN 'complete' THEN 1 WHEN 'inconsistent' THEN 0 END
       FROM sync_walks WHERE walk_id = a.last_walk_id) AS last_walk_consistent,
    (SELECT count(*) FROM card_state c WHERE c.account = a.account AND c.removed_at IS NULL) AS current_cards,
    (SELECT count(*) FROM removal_pending p WHERE p.account = a.account) AS pending_removals,
    n.taken_at AS last_snapshot_at,
    CAST(strftime('%s', 'now') - strftime('%s', n.taken_at) AS INTEGER) AS last_snapshot_age_seconds,
    l.account_error AS last_account_error,
    l.cards_rejected AS last_cards_rejected,
    l.removals_held AS last_removals_held,
    a.account
FROM a
LEFT JOIN sync_runs s ON s.run_id = a.success_run
LEFT JOIN sync_runs l ON l.run_id = a.last_run_id
LEFT JOIN account_snapshots n ON n.snapshot_id = a.snapshot_id
ORDER BY a.account;
