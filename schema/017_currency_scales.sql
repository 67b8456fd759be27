-- cardsync warehouse schema, version 17: card money at its currency's
-- scale (issue 34).
--
-- A decimal card field's minor units (card_state.minor, cards_flat's
-- _minor columns) are at the scale of the card's own currency: the ISO
-- 4217 minor unit of the code in its currency field (2 for USD and EUR, 0
-- for JPY, 3 for KWD), else [cards] amount_scale (default 2). The scale
-- no longer grows with the most decimals seen: a value with more decimals
-- is rounded half to even and marked, one beyond int64 minor units is a
-- conflict.
--
-- card_state.amount_scale: the decimals of the card's minor units.
-- amount_currency: the ISO 4217 code (upper case) whose minor unit that
-- is, NULL when the card named no code ISO 4217 knows (amount_scale is
-- then the writer's [cards] amount_scale). amounts_rounded: 1 when a
-- decimal value of the card was rounded to amount_scale, else 0.
-- card_fields.rounded: the values stored since the field was typed that
-- were rounded (as conflicts counts the misfits). card_fields.scale of a
-- decimal field is now [cards] amount_scale. Package load/sqlite's Go step
-- sets it and recomputes every stored card's money and every decimal
-- field's conflicts and rounded.
ALTER TABLE card_state ADD COLUMN amount_scale INTEGER;
ALTER TABLE card_state ADD COLUMN amount_currency TEXT;
ALTER TABLE card_state ADD COLUMN amounts_rounded INTEGER NOT NULL DEFAULT 0 CHECK (amounts_rounded IN (0, 1));
ALTER TABLE card_fields ADD COLUMN rounded INTEGER NOT NULL DEFAULT 0;
