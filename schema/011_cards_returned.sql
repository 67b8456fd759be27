-- cardsync warehouse schema, version 11: returned cards counted apart.
--
-- cards_returned: cards the run found listed again after they had been
-- marked removed (card_versions.change = 'returned'). Until this version
-- sync_runs.cards_changed counted them too; from now on cards_changed counts
-- content changes only.
--
-- Existing runs: a returned card always got a card_versions row with the
-- run's run_id (card_versions is never pruned), so cards_returned is
-- computed from those rows and taken out of cards_changed (never below 0).
ALTER TABLE sync_runs ADD COLUMN cards_returned INTEGER NOT NULL DEFAULT 0;
UPDATE sync_runs SET cards_returned = (
    SELECT count(*) FROM card_versions v WHERE v.run_id = sync_runs.run_id AND v.change = 'returned');
UPDATE sync_runs SET cards_changed = max(cards_changed - cards_returned, 0) WHERE cards_returned > 0;
