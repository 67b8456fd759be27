-- 004_field_retention: card_fields is bounded, as in the SQLite warehouse
-- (schema/009_field_retention.sql). Each row gains last_seen_at, when a
-- page commit last saw its field; package load/postgres deletes the rows
-- not seen for warehouse.field_retention (default 90 days) after a
-- complete walk, and cards_flat loses their columns. The rows stored
-- before this version count as seen at the upgrade (now() is the
-- migration transaction's start): none is pruned before a full retention
-- has passed. The default is dropped afterwards: every insert sets it.
ALTER TABLE card_fields ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE card_fields ALTER COLUMN last_seen_at DROP DEFAULT;
