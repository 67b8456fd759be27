-- 007_cards_returned: returned cards counted apart, as in the SQLite
-- warehouse (schema/011_cards_returned.sql).
--
-- cards_returned: cards the run found listed again after they had been
-- marked removed (card_versions.change = 'returned'). Until this version
-- sync_runs.cards_changed counted them too; from now on cards_changed counts
-- content changes only.
--
-- Existing runs: a returned card always got a card_versions row with the
-- run's run_id (card_versions is never pruned), so cards_returned is
-- computed from those rows and taken out of cards_changed (never below 0).
ALTER TABLE sync_runs ADD COLUMN cards_returned bigint NOT NULL DEFAULT 0;
UPDATE sync_runs r SET cards_returned = v.n
FROM (SELECT run_id, count(*) AS n FROM card_versions WHERE change = 'returned' GROUP BY run_id) v
WHERE v.run_id = r.run_id;
UPDATE sync_runs SET cards_changed = greatest(cards_changed - cards_returned, 0) WHERE cards_returned > 0;
