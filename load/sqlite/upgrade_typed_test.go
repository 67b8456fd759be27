package sqlite

// schema13Undo turns a file of schema 13 back into one of schema 12 (its
// user_version aside): card_fields without types, card_state without
// minor units. cards_flat, which may read card_state.minor, goes first;
// the upgrade makes it again.
const schema13Undo = `DROP VIEW IF EXISTS cards_flat;
ALTER TABLE card_fields DROP COLUMN type;
ALTER TABLE card_fields DROP COLUMN scale;
ALTER TABLE card_fields DROP COLUMN conflicts;
ALTER TABLE card_fields DROP COLUMN minor_column;
ALTER TABLE card_state DROP COLUMN minor`
