-- 014_currency_scales: card money at its currency's scale (issue 34), as
-- SQLite schema version 17.
--
-- A decimal card field's minor units (card_state.minor, cards_flat's
-- _minor columns) are at the scale of the card's own currency: the ISO
-- 4217 minor unit of the code in its currency field, else [cards]
-- amount_scale (default 2); a value with more decimals is rounded half to
-- even and marked, one beyond int64 minor units is a conflict.
-- card_state.amount_scale: the decimals of the card's minor units;
-- amount_currency: the ISO 4217 code whose minor unit that is (NULL: the
-- writer's [cards] amount_scale); amounts_rounded: a decimal value of the
-- card was rounded. card_fields.rounded counts the rounded values as
-- conflicts counts the misfits. The cards and cards_current views show the
-- card's three columns. Package load/postgres's Go step sets every decimal
-- field's scale to [cards] amount_scale and recomputes every stored card's
-- money and every decimal field's conflicts and rounded.
ALTER TABLE card_state ADD COLUMN amount_scale integer;
ALTER TABLE card_state ADD COLUMN amount_currency text;
ALTER TABLE card_state ADD COLUMN amounts_rounded smallint NOT NULL DEFAULT 0 CHECK (amounts_rounded IN (0, 1));
ALTER TABLE card_fields ADD COLUMN rounded bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE VIEW cards AS
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

CREATE OR REPLACE VIEW cards_current AS
SELECT card_id, data, first_seen_at, last_seen_at, updated_at, first_seen_run, last_seen_run, account,
       amount_scale, amount_currency, amounts_rounded
FROM cards
WHERE removed_at IS NULL;
