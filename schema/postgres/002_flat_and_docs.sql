-- 002_flat_and_docs: card_fields, the generated cards_flat view and
-- column_docs, as in the SQLite warehouse, so that both have the same
-- public tables, views and column names.
--
-- card_fields is shared by every account (like SQLite's, it has no account
-- column): the page commit adds a field's row, under a transaction-scoped
-- advisory lock, the first time any account's card holds it. cards_flat is
-- re-created by package load/postgres after such a commit, in a
-- transaction of its own, never inside a page commit. Its fixed columns
-- come first (card_id, removed_at, account) so that a new field is a new
-- last column (CREATE OR REPLACE VIEW); PostgreSQL limits names to 63 bytes
-- and relations to 1,600 columns, so long field names get shorter column
-- names than in SQLite and the view holds fewer fields (see
-- load/postgres/fields.go).
--
-- column_docs is filled from package schema when a replica opens the
-- database and finds its rows differ from the binary's.

CREATE TABLE card_fields (
    name          text        PRIMARY KEY,
    json_types    text        NOT NULL,
    first_run     bigint      NOT NULL REFERENCES sync_runs (run_id),
    last_run      bigint      NOT NULL REFERENCES sync_runs (run_id),
    first_seen_at timestamptz NOT NULL,
    column_name   text,
    in_flat_view  smallint    NOT NULL DEFAULT 1 CHECK (in_flat_view IN (0, 1))
);

CREATE TABLE column_docs (
    table_name  text NOT NULL,
    column_name text NOT NULL,
    description text NOT NULL,
    unit        text,
    PRIMARY KEY (table_name, column_name)
);

CREATE VIEW cards_flat AS
SELECT card_id, removed_at, account
FROM card_state;
