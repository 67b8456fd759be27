-- cardsync warehouse schema, version 7: a warehouse has an identity.
--
-- warehouse_identity holds one row, written once when the warehouse is
-- created (or, for a warehouse created by an earlier cardsync, when it is
-- upgraded to this version) and never changed: a random 128-bit id as 32
-- lowercase hex digits. A backup is a copy of the file, so it carries the
-- id of the warehouse it was taken from. restore compares the ids of the
-- warehouse and of the file it would put in its place, and backup prunes
-- only the backups that carry its warehouse's id, so the backups of two
-- warehouses in one directory never replace or prune each other.
--
-- The row is inserted by package load in the same transaction (its Go
-- step of migration 7), with the warehouse's clock.
CREATE TABLE warehouse_identity (
    singleton    INTEGER NOT NULL PRIMARY KEY CHECK (singleton = 1),
    warehouse_id TEXT    NOT NULL
        CHECK (length(warehouse_id) = 32 AND warehouse_id NOT GLOB '*[^0-9a-f]*'),
    created_at   TEXT    NOT NULL
) STRICT;
