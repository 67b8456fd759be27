-- 006_identity: a warehouse has an identity, as in the SQLite warehouse
-- (schema/007_identity.sql): one row, written once by this migration and
-- never changed, a random 128-bit id as 32 lowercase hex digits. backup and
-- restore work on SQLite files only; the id names the PostgreSQL warehouse
-- the same way (status, and tools that copy a database and must tell two
-- apart).
CREATE TABLE warehouse_identity (
    singleton    integer     NOT NULL PRIMARY KEY CHECK (singleton = 1),
    warehouse_id text        NOT NULL CHECK (warehouse_id ~ '^[0-9a-f]{32}$'),
    created_at   timestamptz NOT NULL
);
INSERT INTO warehouse_identity (singleton, warehouse_id, created_at)
VALUES (1, replace(gen_random_uuid()::text, '-', ''), now());
