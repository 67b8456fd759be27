-- 001_init: the PostgreSQL warehouse, the same public interface as the
-- SQLite warehouse at its schema version 5 (tables, views and column names,
-- one account column on every row that belongs to an account).
--
-- Where the types differ from SQLite's: amounts are bigint minor units
-- (cents) and the views expose them as numeric(21,2); JSON documents are
-- jsonb; times are timestamptz (UTC); flags stay smallint 0/1 so that a
-- query written for the SQLite file (walk_consistent = 1) reads the same.
--
-- Left out on purpose:
--   * card_fields and the one-column-per-field cards_flat view: SQLite
--     rebuilds that view whenever a field appears, which in PostgreSQL is
--     DDL under an ACCESS EXCLUSIVE lock in the middle of every replica's
--     page commits. Query the jsonb instead (data->>'status'); the GIN
--     index card_state_data serves containment queries (data @> '{...}').
--   * column_docs: the descriptions live in package schema (schema.Objects)
--     and the README.
-- walk_seen keeps a page's listed ids as a text[] (SQLite: a JSON array),
-- read back with unnest.

CREATE TABLE sync_runs (
    run_id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    trigger         text        NOT NULL,
    started_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    heartbeat_at    timestamptz NOT NULL,
    status          text        NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted', 'abandoned')),
    pages           bigint      NOT NULL DEFAULT 0,
    cards_seen      bigint      NOT NULL DEFAULT 0,
    cards_new       bigint      NOT NULL DEFAULT 0,
    cards_changed   bigint      NOT NULL DEFAULT 0,
    cards_unchanged bigint      NOT NULL DEFAULT 0,
    cards_removed   bigint      NOT NULL DEFAULT 0,
    requests        bigint      NOT NULL DEFAULT 0,
    retries         bigint      NOT NULL DEFAULT 0,
    rate_limited    bigint      NOT NULL DEFAULT 0,
    auth_requests   bigint      NOT NULL DEFAULT 0,
    walk_consistent smallint    CHECK (walk_consistent IN (0, 1)),
    error           text,
    version         text        NOT NULL DEFAULT '',
    cards_rejected  bigint      NOT NULL DEFAULT 0,
    removals_held   bigint      NOT NULL DEFAULT 0,
    account_error   text,
    account         text        NOT NULL DEFAULT 'default'
        CHECK (account ~ '^[a-z0-9_-]{1,64}$')
);

CREATE INDEX sync_runs_status ON sync_runs (account, status, run_id);
CREATE INDEX sync_runs_account ON sync_runs (account, run_id);

-- One row per card ever seen, per account. data is the latest redacted
-- document; data_hash the first 16 bytes of the SHA-256 of its canonical
-- JSON text (computed before jsonb reorders keys), compared to skip writes.
CREATE TABLE card_state (
    card_id        text        NOT NULL,
    data           jsonb       NOT NULL,
    first_seen_at  timestamptz NOT NULL,
    last_seen_at   timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    removed_at     timestamptz,
    first_seen_run bigint      NOT NULL REFERENCES sync_runs (run_id),
    last_seen_run  bigint      NOT NULL REFERENCES sync_runs (run_id),
    data_hash      bytea       NOT NULL,
    account        text        NOT NULL DEFAULT 'default'
        CHECK (account ~ '^[a-z0-9_-]{1,64}$'),
    PRIMARY KEY (account, card_id)
);

CREATE INDEX card_state_card ON card_state (card_id);
CREATE INDEX card_state_data ON card_state USING gin (data jsonb_path_ops);

CREATE TABLE card_versions (
    card_id    text        NOT NULL,
    version    integer     NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to   timestamptz,
    run_id     bigint      NOT NULL REFERENCES sync_runs (run_id),
    change     text        NOT NULL CHECK (change IN ('new', 'changed', 'removed', 'returned')),
    data       jsonb       NOT NULL,
    account    text        NOT NULL DEFAULT 'default',
    PRIMARY KEY (account, card_id, version),
    FOREIGN KEY (account, card_id) REFERENCES card_state (account, card_id)
);

CREATE UNIQUE INDEX card_versions_current ON card_versions (account, card_id) WHERE valid_to IS NULL;
CREATE INDEX card_versions_run ON card_versions (run_id);
CREATE INDEX card_versions_card ON card_versions (card_id, version);

CREATE TABLE account_snapshots (
    snapshot_id                      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id                           bigint      NOT NULL REFERENCES sync_runs (run_id),
    taken_at                         timestamptz NOT NULL,
    name                             text,
    email                            text,
    timezone                         text,
    transfer_amount_minor            bigint,
    reach_amount_minor               bigint,
    authorizations_minor             bigint,
    balance_minor                    bigint,
    cards_balance_minor              bigint,
    available_recharge_balance_minor bigint,
    available_to_apply_card_count    bigint,
    applied_card_count               bigint,
    raw                              jsonb,
    amounts_rounded                  smallint    NOT NULL DEFAULT 0 CHECK (amounts_rounded IN (0, 1)),
    account                          text        NOT NULL DEFAULT 'default'
        CHECK (account ~ '^[a-z0-9_-]{1,64}$')
);

CREATE INDEX account_snapshots_taken ON account_snapshots (account, taken_at);

CREATE TABLE sync_checkpoints (
    stream      text        NOT NULL,
    run_id      bigint      REFERENCES sync_runs (run_id),
    next_page   integer     NOT NULL DEFAULT 1,
    total_pages integer     NOT NULL DEFAULT 0,
    total_items integer     NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL,
    account     text        NOT NULL DEFAULT 'default'
        CHECK (account ~ '^[a-z0-9_-]{1,64}$'),
    PRIMARY KEY (account, stream)
);

CREATE TABLE sync_walks (
    walk_id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stream           text        NOT NULL,
    started_at       timestamptz NOT NULL,
    started_run      bigint      NOT NULL REFERENCES sync_runs (run_id),
    finished_at      timestamptz,
    finished_run     bigint      REFERENCES sync_runs (run_id),
    first_total      integer     NOT NULL,
    last_total       integer     NOT NULL,
    pages            integer     NOT NULL DEFAULT 0,
    distinct_ids     integer     NOT NULL DEFAULT 0,
    duplicate_ids    integer     NOT NULL DEFAULT 0,
    removed          integer     NOT NULL DEFAULT 0,
    outcome          text        CHECK (outcome IN ('complete', 'inconsistent', 'reset')),
    pending_removals integer     NOT NULL DEFAULT 0,
    last_page        integer     NOT NULL DEFAULT 0,
    runs             integer     NOT NULL DEFAULT 0,
    last_run         bigint      REFERENCES sync_runs (run_id),
    total_changed    smallint    NOT NULL DEFAULT 0 CHECK (total_changed IN (0, 1)),
    walks            integer     NOT NULL DEFAULT 1 CHECK (walks >= 1),
    min_total        integer,
    max_total        integer,
    account          text        NOT NULL DEFAULT 'default'
        CHECK (account ~ '^[a-z0-9_-]{1,64}$')
);

CREATE UNIQUE INDEX sync_walks_open ON sync_walks (account, stream) WHERE finished_at IS NULL;
CREATE INDEX sync_walks_account ON sync_walks (account, outcome, walk_id);

CREATE TABLE removal_pending (
    card_id   text        NOT NULL,
    walk_id   bigint      NOT NULL REFERENCES sync_walks (walk_id),
    missed_at timestamptz NOT NULL,
    account   text        NOT NULL DEFAULT 'default',
    PRIMARY KEY (account, card_id),
    FOREIGN KEY (account, card_id) REFERENCES card_state (account, card_id)
);

-- Scratch: the ids each page of the open walk listed. Emptied when the
-- walk closes.
CREATE TABLE walk_seen (
    walk_id bigint  NOT NULL REFERENCES sync_walks (walk_id),
    page    integer NOT NULL,
    run_id  bigint  NOT NULL,
    ids     text[]  NOT NULL,
    PRIMARY KEY (walk_id, page)
);

CREATE TABLE run_pages (
    run_id          bigint      NOT NULL REFERENCES sync_runs (run_id),
    stream          text        NOT NULL,
    page            integer     NOT NULL,
    walk_id         bigint      REFERENCES sync_walks (walk_id),
    fetched_at      timestamptz NOT NULL,
    committed_at    timestamptz NOT NULL,
    items           integer     NOT NULL,
    total_items     integer     NOT NULL,
    total_pages     integer     NOT NULL,
    duration_ms     bigint      NOT NULL,
    body_sha256     text        NOT NULL,
    cards_new       integer     NOT NULL,
    cards_changed   integer     NOT NULL,
    cards_unchanged integer     NOT NULL,
    PRIMARY KEY (run_id, stream, page)
);

CREATE INDEX run_pages_walk ON run_pages (walk_id, page);

-- data is text, not jsonb: a rejected item may not be JSON at all.
CREATE TABLE rejected_cards (
    rejected_id      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id           bigint      NOT NULL REFERENCES sync_runs (run_id),
    page             integer     NOT NULL,
    card_id          text,
    reason           text        NOT NULL,
    data             text        NOT NULL,
    rejected_at      timestamptz NOT NULL,
    last_run_id      bigint      NOT NULL REFERENCES sync_runs (run_id),
    last_rejected_at timestamptz NOT NULL,
    times            integer     NOT NULL DEFAULT 1,
    data_sha256      text        NOT NULL,
    account          text        NOT NULL DEFAULT 'default'
        CHECK (account ~ '^[a-z0-9_-]{1,64}$')
);

CREATE INDEX rejected_cards_card ON rejected_cards (account, card_id, reason, data_sha256);
CREATE INDEX rejected_cards_run ON rejected_cards (last_run_id);

-- Which replica syncs which account. A replica takes an expired or free
-- lease, or renews its own, in one transaction; fencing_token goes up on
-- every take-over, and every page commit checks, in its own transaction,
-- that the row still names its holder and token and has not expired by the
-- server's clock (now()). No session-level advisory lock: this works
-- behind PgBouncer in transaction pooling mode.
CREATE TABLE sync_leases (
    account       text        PRIMARY KEY CHECK (account ~ '^[a-z0-9_-]{1,64}$'),
    holder        text        NOT NULL,
    fencing_token bigint      NOT NULL,
    expires_at    timestamptz NOT NULL,
    acquired_at   timestamptz NOT NULL,
    renewed_at    timestamptz NOT NULL
);

-- As in SQLite: a current card's last_seen_at/last_seen_run come from the
-- last complete walk of its account, unless it is pending removal or was
-- stamped later.
CREATE VIEW cards AS
WITH last_walk AS (
    SELECT DISTINCT ON (account) account, finished_at, finished_run
    FROM sync_walks
    WHERE outcome = 'complete' AND finished_run IS NOT NULL
    ORDER BY account, walk_id DESC
),
c AS (
    SELECT s.card_id, s.data, s.first_seen_at, s.last_seen_at, s.updated_at, s.removed_at,
           s.first_seen_run, s.last_seen_run, w.finished_at AS walk_at, w.finished_run AS walk_run,
           coalesce(s.removed_at IS NULL
             AND (w.finished_run, w.finished_at) > (s.last_seen_run, s.last_seen_at)
             AND NOT EXISTS (SELECT 1 FROM removal_pending p WHERE p.account = s.account AND p.card_id = s.card_id), false) AS by_walk,
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

CREATE VIEW cards_current AS
SELECT card_id, data, first_seen_at, last_seen_at, updated_at, first_seen_run, last_seen_run, account
FROM cards
WHERE removed_at IS NULL;

-- Account amounts as exact numeric with two decimals (a bigint times 0.01
-- is exact; dividing by 100 would round to 16 significant digits).
CREATE VIEW account_balances AS
SELECT
    snapshot_id,
    run_id,
    taken_at,
    name,
    email,
    timezone,
    (transfer_amount_minor * 0.01)::numeric(21, 2) AS transfer_amount,
    (reach_amount_minor * 0.01)::numeric(21, 2) AS reach_amount,
    (authorizations_minor * 0.01)::numeric(21, 2) AS authorizations,
    (balance_minor * 0.01)::numeric(21, 2) AS balance,
    (cards_balance_minor * 0.01)::numeric(21, 2) AS cards_balance,
    (available_recharge_balance_minor * 0.01)::numeric(21, 2) AS available_recharge_balance,
    available_to_apply_card_count,
    applied_card_count,
    account
FROM account_snapshots;

-- change_minor is numeric: the difference of two bigint amounts may not fit
-- a bigint.
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
    SELECT *, new_minor::numeric - old_minor AS change_minor
    FROM l
    WHERE old_minor IS DISTINCT FROM new_minor
)
SELECT
    snapshot_id, run_id, taken_at, previous_snapshot_id, previous_taken_at, amount,
    old_minor, new_minor, change_minor,
    (old_minor * 0.01)::numeric(21, 2) AS old_value,
    (new_minor * 0.01)::numeric(21, 2) AS new_value,
    (change_minor * 0.01)::numeric(21, 2) AS change,
    account
FROM d;

-- One row per account that has runs ('default' when there are none), ages
-- against the server's clock.
CREATE VIEW sync_health AS
WITH accounts AS (
    SELECT DISTINCT account FROM sync_runs
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
    floor(extract(epoch FROM now() - s.finished_at))::bigint AS last_success_age_seconds,
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
    floor(extract(epoch FROM now() - n.taken_at))::bigint AS last_snapshot_age_seconds,
    l.account_error AS last_account_error,
    l.cards_rejected AS last_cards_rejected,
    l.removals_held AS last_removals_held,
    a.account
FROM a
LEFT JOIN sync_runs s ON s.run_id = a.success_run
LEFT JOIN sync_runs l ON l.run_id = a.last_run_id
LEFT JOIN account_snapshots n ON n.snapshot_id = a.snapshot_id
ORDER BY a.account;
