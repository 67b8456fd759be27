-- 001_init: the warehouse's first schema.
--
-- Public interface for analysts (sqlite3, DuckDB, Datasette): table, column
-- and view names below never change without a new migration.
-- Times are UTC text 'YYYY-MM-DDTHH:MM:SSZ'. Money is INTEGER minor units
-- (cents); views format it as exact decimal text.
-- Views use only functions available in the sqlite3 CLI 3.40 (Debian 12).

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

-- Cards the API currently lists.
CREATE VIEW cards_current AS
SELECT card_id, data, first_seen_at, last_seen_at, updated_at, first_seen_run, last_seen_run
FROM cards
WHERE removed_at IS NULL;

-- One column per known top-level field. Package load regenerates this view
-- (same name, more columns) whenever a new field appears.
CREATE VIEW cards_flat AS
SELECT card_id, removed_at
FROM cards;

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
    applied_card_count
FROM account_snapshots;

-- One row per (snapshot, amount) whose value differs from the previous
-- snapshot's; old_value NULL on the first snapshot. change = new - old as
-- exact text (NULL when either side is NULL).
CREATE VIEW account_balance_changes AS
WITH s AS (
    SELECT
        snapshot_id, run_id, taken_at,
        lag(snapshot_id) OVER w AS previous_snapshot_id,
        lag(taken_at) OVER w AS previous_taken_at,
        transfer_amount_minor, lag(transfer_amount_minor) OVER w AS prev_transfer_amount_minor,
        reach_amount_minor, lag(reach_amount_minor) OVER w AS prev_reach_amount_minor,
        authorizations_minor, lag(authorizations_minor) OVER w AS prev_authorizations_minor,
        balance_minor, lag(balance_minor) OVER w AS prev_balance_minor,
        cards_balance_minor, lag(cards_balance_minor) OVER w AS prev_cards_balance_minor,
        available_recharge_balance_minor, lag(available_recharge_balance_minor) OVER w AS prev_available_recharge_balance_minor
    FROM account_snapshots
    WINDOW w AS (ORDER BY taken_at, snapshot_id)
),
l AS (
    SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'transfer_amount' AS amount, prev_transfer_amount_minor AS old_minor, transfer_amount_minor AS new_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'reach_amount', prev_reach_amount_minor, reach_amount_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'authorizations', prev_authorizations_minor, authorizations_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'balance', prev_balance_minor, balance_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'cards_balance', prev_cards_balance_minor, cards_balance_minor FROM s
    UNION ALL SELECT snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, 'available_recharge_balance', prev_available_recharge_balance_minor, available_recharge_balance_minor FROM s
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
         ELSE (change_minor / 100) || '.' || substr('0' || (change_minor % 100), -2) END AS change
FROM d;

-- One row: is the sync healthy? age_seconds is measured against the
-- reader's clock ('now'). pending_removals: cards the last complete walk did
-- not list, marked removed if the next one misses them too.
CREATE VIEW sync_health AS
WITH last_success AS (
    SELECT max(run_id) AS run_id FROM sync_runs WHERE status = 'succeeded'
),
last_run AS (
    SELECT run_id, status, started_at FROM sync_runs ORDER BY run_id DESC LIMIT 1
)
SELECT
    (SELECT run_id FROM last_success) AS last_success_run,
    (SELECT finished_at FROM sync_runs WHERE run_id = (SELECT run_id FROM last_success)) AS last_success_at,
    CAST(strftime('%s', 'now') - strftime('%s', (SELECT finished_at FROM sync_runs WHERE run_id = (SELECT run_id FROM last_success))) AS INTEGER) AS last_success_age_seconds,
    (SELECT count(*) FROM sync_runs
      WHERE status IN ('failed', 'interrupted', 'abandoned')
        AND run_id > coalesce((SELECT run_id FROM last_success), 0)) AS failures_in_a_row,
    (SELECT run_id FROM last_run) AS last_run,
    (SELECT status FROM last_run) AS last_status,
    (SELECT started_at FROM last_run) AS last_started_at,
    (SELECT count(*) FROM sync_runs WHERE status = 'running') AS running,
    (SELECT CASE outcome WHEN 'complete' THEN 1 WHEN 'inconsistent' THEN 0 END
       FROM sync_walks WHERE outcome IN ('complete', 'inconsistent')
      ORDER BY walk_id DESC LIMIT 1) AS last_walk_consistent,
    (SELECT count(*) FROM cards WHERE removed_at IS NULL) AS current_cards,
    (SELECT count(*) FROM removal_pending) AS pending_removals;
