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
-- The views (views.sql) gain the account column and read per account;
-- package load regenerates cards_flat (it gains the account column too) and
-- refreshes column_docs in the same transaction as this file.

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
