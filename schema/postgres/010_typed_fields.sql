-- 010_typed_fields: typed card fields (issue 25), as the SQLite warehouse
-- (schema/013_typed_fields.sql).
--
-- card_fields.type: the class of the field's values, set once from the
-- first batch of cards that holds non-null values of it, then sticky:
-- integer, decimal, boolean, timestamp, text, object, array, or null
-- (only nulls seen so far; decided later). scale: a decimal field's
-- number of decimals (NULL for other types). conflicts: the values stored
-- since the type was set that did not fit it (nulls never count).
-- minor_column: the field's <column>_minor column in cards_flat (decimal
-- fields in the view, bigint), NULL when none.
--
-- card_state.minor: the card's decimal fields in exact integer minor units
-- at their field's scale ({"balance": 496676}); NULL when none. Package
-- load/postgres's Go step types the fields of the cards already stored and
-- fills their minor.
ALTER TABLE card_fields ADD COLUMN type text NOT NULL DEFAULT 'null'
    CHECK (type IN ('null', 'integer', 'decimal', 'boolean', 'timestamp', 'text', 'object', 'array'));
ALTER TABLE card_fields ADD COLUMN scale integer;
ALTER TABLE card_fields ADD COLUMN conflicts bigint NOT NULL DEFAULT 0;
ALTER TABLE card_fields ADD COLUMN minor_column text;
ALTER TABLE card_state ADD COLUMN minor jsonb;
