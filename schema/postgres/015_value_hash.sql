-- 015_value_hash: one content per card id and walk, and a change hash that
-- compares values, not their spelling, as SQLite schema version 18.
--
-- walk_seen.hashes (internal scratch): the data_hash of each storable card
-- the page listed, 16 bytes each, one after the other, in the order of ids
-- (the rejected items, at the end of ids, have none); NULL for a page
-- committed before this migration. When a walk closes, an id listed on more
-- than one page with different hashes keeps the content it had before the
-- walk, and the walk records duplicate_ids with those pages.
ALTER TABLE walk_seen ADD COLUMN IF NOT EXISTS hashes bytea;

-- card_state.data_hash becomes the hash of the card's hash form: numbers by
-- their exact value (1.0 = 1 = 1e0, 1.50 = 1.5, -0 = 0) and strings, keys
-- included, in Unicode NFC. The migration's Go step computes it again for
-- every stored card from its jsonb (any text of a card hashes alike), in
-- the same transaction; data is unchanged and no version is added.
