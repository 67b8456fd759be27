-- cardsync warehouse schema, version 13: typed card fields (issue 25).
--
-- card_fields.type: the class of the field's values, set once from the
-- first batch of cards that holds non-null values of it, then sticky:
-- integer, decimal, boolean, timestamp, text, object, array, or null
-- (only nulls seen so far; decided later). scale: a decimal field's
-- number of decimals (NULL for other types). conflicts: the values stored
-- since the type was set that did not fit it (nulls never count).
-- minor_column: the field's <column>_minor column in cards_flat (decimal
-- fields in the view), NULL when none.
--
-- card_state.minor: the card's decimal fields in exact integer minor units
-- at their field's scale, as a JSON object ({"balance":496676}); NULL when
-- none. cards_flat's _minor columns read it. Package load/sqlite's Go step
-- types the fields of the cards already stored and fills their minor.
ALTER TABLE card_fields ADD COLUMN type TEXT NOT NULL DEFAULT 'null'
    CHECK (type IN ('null', 'integer', 'decimal', 'boolean', 'timestamp', 'text', 'object', 'array'));
ALTER TABLE card_fields ADD COLUMN scale INTEGER;
ALTER TABLE card_fields ADD COLUMN conflicts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE card_fields ADD COLUMN minor_column TEXT;
ALTER TABLE card_state ADD COLUMN minor TEXT;
