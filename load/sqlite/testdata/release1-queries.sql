-- Current cards with a few fields, no json_extract needed ("limit" is an SQL keyword: quote it).
SELECT card_id, status, balance, currency, json_extract("limit", '$.daily') AS daily_limit
FROM cards_flat WHERE removed_at IS NULL ORDER BY CAST(card_id AS INTEGER) LIMIT 10;

-- Cards that disappeared from the API, most recent first.
SELECT card_id, removed_at FROM cards WHERE removed_at IS NOT NULL ORDER BY removed_at DESC;

-- Cards the last walk did not list: marked removed if the next walk misses them too.
SELECT p.card_id, p.missed_at, c.last_seen_at FROM removal_pending p JOIN cards c USING (card_id);

-- Full history of one card.
SELECT version, change, valid_from, valid_to, json_extract(data, '$.balance') AS balance
FROM card_versions WHERE card_id = '1' ORDER BY version;

-- What a card looked like at a point in time.
SELECT data FROM card_versions
WHERE card_id = '1' AND valid_from <= '2025-03-01T13:30:00Z'
  AND (valid_to IS NULL OR valid_to > '2025-03-01T13:30:00Z') AND change != 'removed';

-- Latest account balances, exact.
SELECT taken_at, balance, cards_balance, available_recharge_balance, applied_card_count
FROM account_balances ORDER BY taken_at DESC LIMIT 5;

-- How balances moved between snapshots.
SELECT taken_at, amount, old_value, new_value, change
FROM account_balance_changes WHERE old_value IS NOT NULL ORDER BY taken_at DESC, amount;

-- Exact sums: add minor units, format at the end.
SELECT CASE WHEN t < 0 THEN '-' ELSE '' END || (abs(t) / 100) || '.' || substr('0' || (abs(t) % 100), -2) AS total
FROM (SELECT sum(balance_minor) AS t FROM account_snapshots);

-- Is the sync healthy? And the last runs.
SELECT * FROM sync_health;
SELECT run_id, trigger, status, started_at, finished_at, pages, cards_new, cards_changed, cards_removed, error
FROM sync_runs ORDER BY run_id DESC LIMIT 5;

-- Which fields the API has sent, with their JSON types.
SELECT name, json_types, first_run, last_run FROM card_fields ORDER BY rowid;
