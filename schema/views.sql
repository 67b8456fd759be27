-- The views of the warehouse, in their current definitions: the one home of
-- every view but cards_flat (package load generates that one from
-- card_fields). Package load drops every view before it applies pending
-- migrations and creates these after them, in the same transaction, so a
-- numbered migration changes tables and moves data only; a change to a view
-- is a change to this file.
-- Views use only functions available in the sqlite3 CLI 3.40 (Debian 12);
-- money is INTEGER minor units (cents) in the tables, exact decimal text
-- here.

-- One row per card ever seen, with the columns of the cards table of
-- version 1, then account, then the scale of the card's minor units
-- (amount_scale, amount_currency) and whether one was rounded
-- (amounts_rounded). last_seen_at/last_seen_run: the last complete
-- walk of the card's own account that listed it. For a current card
-- (removed_at NULL) not in removal_pending, that is the later of its stored
-- values (stamped when it was last written) and that walk's
-- finished_at/finished_run; for a removed or pending card, its stored
-- values (set when it was last written and, when it went pending, moved to
-- the last complete walk that did list it). walk_accounts lists
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
           s.account, s.amount_scale, s.amount_currency, s.amounts_rounded
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
    account,
    amount_scale,
    amount_currency,
    amounts_rounded
FROM c;

-- Cards the API currently lists.
CREATE VIEW cards_current AS
SELECT card_id, data, first_seen_at, last_seen_at, updated_at, first_seen_run, last_seen_run, account,
       amount_scale, amount_currency, amounts_rounded
FROM cards
WHERE removed_at IS NULL;

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

-- One row per (snapshot, amount) whose value differs from the previous
-- snapshot of the same account; old_value NULL on an account's first
-- snapshot. change = new - old as exact text (NULL when either side is
-- NULL).
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

-- Is the sync healthy? One row per account that has runs (every card came
-- with a run of its account; a warehouse without runs has one row for
-- 'default'), computed over that account's rows only. Ages are measured
-- against the reader's clock ('now'); an interrupted run (SIGTERM, Ctrl-C)
-- is not a failure in a row; pending_removals: cards the last complete walk
-- did not list, marked removed if the next one misses them too.
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
