-- cardsync warehouse schema, version 6: every WITHOUT ROWID table declares
-- its primary-key columns first, in key order.
--
-- Why: the SQLite our users have (Debian 12's sqlite3 3.40.1, the CLI and
-- Python's sqlite3 module) reports false "NULL value in T.col" errors from
-- PRAGMA integrity_check and quick_check on a WITHOUT ROWID table whose
-- primary-key columns are not the leading columns in declaration order,
-- so the README's backup check failed on every warehouse. Newer SQLite
-- (the one cardsync links) does not; the data was never wrong.
--
-- Which tables, checked one by one:
--   card_versions: PRIMARY KEY (account, card_id, version), but account was
--     the last column (schema 5 appended it): rebuilt with account, card_id,
--     version first. Its other columns keep their order. A reader of
--     SELECT * FROM card_versions by position sees account first now; every
--     query that names its columns answers the same.
--   walk_seen (walk_id, page, ...), column_docs (table_name, column_name,
--     ...): already key first, in order: unchanged. walk_seen_pages was
--     renamed walk_seen by schema 3; no other table is WITHOUT ROWID.
-- PostgreSQL has no WITHOUT ROWID tables and is unaffected.
--
-- The rebuild, as in schema 5: the old table is renamed out of the way, the
-- new one takes the name, the rows are copied exactly (STRICT types, so a
-- copy cannot convert a value), the old table is dropped (with its indexes)
-- and the indexes are created again. Nothing references card_versions; its
-- foreign keys go to card_state and sync_runs, which stay. No view exists
-- while migrations run.
ALTER TABLE card_versions RENAME TO card_versions_v5;

CREATE TABLE card_versions (
    account    TEXT    NOT NULL DEFAULT 'default',
    card_id    TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    valid_from TEXT    NOT NULL,
    valid_to   TEXT,
    run_id     INTEGER NOT NULL REFERENCES sync_runs (run_id),
    change     TEXT    NOT NULL CHECK (change IN ('new', 'changed', 'removed', 'returned')),
    data       TEXT    NOT NULL CHECK (json_valid(data)),
    PRIMARY KEY (account, card_id, version),
    FOREIGN KEY (account, card_id) REFERENCES card_state (account, card_id)
) STRICT, WITHOUT ROWID;

INSERT INTO card_versions (account, card_id, version, valid_from, valid_to, run_id, change, data)
    SELECT account, card_id, version, valid_from, valid_to, run_id, change, data
    FROM card_versions_v5 ORDER BY account, card_id, version;

DROP TABLE card_versions_v5;

CREATE UNIQUE INDEX card_versions_current ON card_versions (account, card_id) WHERE valid_to IS NULL;
CREATE INDEX card_versions_run ON card_versions (run_id);
CREATE INDEX card_versions_card ON card_versions (card_id, version);
