-- 001_init: the warehouse's first schema.
--
-- Public interface for analysts (sqlite3, DuckDB, Datasette): table and
-- column names below never change without a new migration (nor the names of
-- the views, which live in views.sql).
-- Times are UTC text 'YYYY-MM-DDTHH:MM:SSZ'. Money is INTEGER minor units
-- (cents); views format it as exact decimal text.

-- One row per sync run (a walk of the API started by the scheduler, a
-- backfill or the demo).
CREATE TABLE sync_runs (
    run_id          INTEGER PRIMARY KEY,
    trigger         TEXT    NOT NULL,
    started_at      TEXT    NOT NULL,
    finished_at     TEXT,
    heartbeat_at    TEXT    NOT NULL,
    status          TEXT    NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted', 'abandoned')),
    pages           INTEGER NOT NULL DEFAULT 0,
    cards_seen      INTEGER NOT NULL DEFAULT 0,
    cards_new       INTEGER NOT NULL DEFAULT 0,
    cards_changed   INTEGER NOT NULL DEFAULT 0,
    cards_unchanged INTEGER NOT NULL DEFAULT 0,
    cards_removed   INTEGER NOT NULL DEFAULT 0,
    requests        INTEGER NOT NULL DEFAULT 0,
    retries         INTEGER NOT NULL DEFAULT 0,
    rate_limited    INTEGER NOT NULL DEFAULT 0,
    auth_requests   INTEGER NOT NULL DEFAULT 0,
    walk_consistent INTEGER CHECK (walk_consistent IN (0, 1)),
    error           TEXT,
    version         TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX sync_runs_status ON sync_runs (status, run_id);

-- One row per card ever seen. data is the latest redacted JSON.
CREATE TABLE cards (
    card_id        TEXT    PRIMARY KEY,
    data           TEXT    NOT NULL CHECK (json_valid(data)),
    first_seen_at  TEXT    NOT NULL,
    last_seen_at   TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    removed_at     TEXT,
    first_seen_run INTEGER NOT NULL REFERENCES sync_runs (run_id),
    last_seen_run  INTEGER NOT NULL REFERENCES sync_runs (run_id)
) STRICT;

-- History: a new row only when a card first appears, its content changes,
-- it is marked removed (missed by two consecutive complete, consistent
-- walks), or it comes back. The current row has
-- valid_to NULL; change says why the row exists.
CREATE TABLE card_versions (
    card_id    TEXT    NOT NULL REFERENCES cards (card_id),
    version    INTEGER NOT NULL,
    valid_from TEXT    NOT NULL,
    valid_to   TEXT,
    run_id     INTEGER NOT NULL REFERENCES sync_runs (run_id),
    change     TEXT    NOT NULL CHECK (change IN ('new', 'changed', 'removed', 'returned')),
    data       TEXT    NOT NULL CHECK (json_valid(data)),
    PRIMARY KEY (card_id, version)
) STRICT, WITHOUT ROWID;

CREATE UNIQUE INDEX card_versions_current ON card_versions (card_id) WHERE valid_to IS NULL;
CREATE INDEX card_versions_run ON card_versions (run_id);

-- Every top-level card field ever seen, with the JSON types observed
-- (comma-separated, sorted: array, boolean, null, number, object, string).
CREATE TABLE card_fields (
    name          TEXT    PRIMARY KEY,
    json_types    TEXT    NOT NULL,
    first_run     INTEGER NOT NULL REFERENCES sync_runs (run_id),
    last_run      INTEGER NOT NULL REFERENCES sync_runs (run_id),
    first_seen_at TEXT    NOT NULL
) STRICT;

-- One row per successful account read. Amounts are minor units (cents).
CREATE TABLE account_snapshots (
    snapshot_id                      INTEGER PRIMARY KEY,
    run_id                           INTEGER NOT NULL REFERENCES sync_runs (run_id),
    taken_at                         TEXT    NOT NULL,
    name                             TEXT,
    email                            TEXT,
    timezone                         TEXT,
    transfer_amount_minor            INTEGER,
    reach_amount_minor               INTEGER,
    authorizations_minor             INTEGER,
    balance_minor                    INTEGER,
    cards_balance_minor              INTEGER,
    available_recharge_balance_minor INTEGER,
    available_to_apply_card_count    INTEGER,
    applied_card_count               INTEGER,
    raw                              TEXT CHECK (raw IS NULL OR json_valid(raw))
) STRICT;

CREATE INDEX account_snapshots_taken ON account_snapshots (taken_at);

-- Where the next run resumes each stream ('cards'). next_page 1 = start.
CREATE TABLE sync_checkpoints (
    stream      TEXT    PRIMARY KEY,
    run_id      INTEGER REFERENCES sync_runs (run_id),
    next_page   INTEGER NOT NULL DEFAULT 1,
    total_pages INTEGER NOT NULL DEFAULT 0,
    total_items INTEGER NOT NULL DEFAULT 0,
    updated_at  TEXT    NOT NULL
) STRICT;

-- A walk: pages 1..N of a stream, possibly over several resumed runs.
-- finished_at NULL = the walk in progress. outcome: complete (consistent:
-- removals confirmed, new misses made pending), inconsistent (nothing added
-- or removed), reset (abandoned by -restart). removed: cards this walk
-- confirmed removed; pending_removals: rows left in removal_pending when the
-- walk closed.
CREATE TABLE sync_walks (
    walk_id       INTEGER PRIMARY KEY,
    stream        TEXT    NOT NULL,
    started_at    TEXT    NOT NULL,
    started_run   INTEGER NOT NULL REFERENCES sync_runs (run_id),
    finished_at   TEXT,
    finished_run  INTEGER REFERENCES sync_runs (run_id),
    first_total   INTEGER NOT NULL,
    last_total    INTEGER NOT NULL,
    pages         INTEGER NOT NULL DEFAULT 0,
    distinct_ids  INTEGER NOT NULL DEFAULT 0,
    duplicate_ids INTEGER NOT NULL DEFAULT 0,
    removed       INTEGER NOT NULL DEFAULT 0,
    outcome       TEXT CHECK (outcome IN ('complete', 'inconsistent', 'reset')),
    pending_removals INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE UNIQUE INDEX sync_walks_open ON sync_walks (stream) WHERE finished_at IS NULL;

-- Cards a complete, consistent walk did not list, awaiting confirmation.
-- Offset pagination can skip a listed card without any count noticing (a
-- card removed before the cursor while another is added after it), so one
-- miss is not proof: a card is marked removed only when the next complete,
-- consistent walk misses it too. Any walk that lists it again deletes its
-- row. walk_id is the walk that first missed it.
CREATE TABLE removal_pending (
    card_id   TEXT    PRIMARY KEY REFERENCES cards (card_id),
    walk_id   INTEGER NOT NULL REFERENCES sync_walks (walk_id),
    missed_at TEXT    NOT NULL
) STRICT;

-- Scratch: which card ids the open walk saw, on which page. Emptied when the
-- walk finishes (the counts stay in sync_walks).
CREATE TABLE walk_seen (
    walk_id INTEGER NOT NULL REFERENCES sync_walks (walk_id),
    card_id TEXT    NOT NULL,
    page    INTEGER NOT NULL,
    run_id  INTEGER NOT NULL,
    seen_at TEXT    NOT NULL,
    PRIMARY KEY (walk_id, card_id, page)
) STRICT, WITHOUT ROWID;

-- Audit: one row per committed page.
CREATE TABLE run_pages (
    run_id      INTEGER NOT NULL REFERENCES sync_runs (run_id),
    stream      TEXT    NOT NULL,
    page        INTEGER NOT NULL,
    walk_id     INTEGER REFERENCES sync_walks (walk_id),
    fetched_at  TEXT    NOT NULL,
    committed_at TEXT   NOT NULL,
    items       INTEGER NOT NULL,
    total_items INTEGER NOT NULL,
    total_pages INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    body_sha256 TEXT    NOT NULL,
    cards_new       INTEGER NOT NULL,
    cards_changed   INTEGER NOT NULL,
    cards_unchanged INTEGER NOT NULL,
    PRIMARY KEY (run_id, stream, page)
) STRICT;

CREATE INDEX run_pages_walk ON run_pages (walk_id, page);
