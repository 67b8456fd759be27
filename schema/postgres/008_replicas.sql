-- 008_replicas: the live replicas of a shared warehouse, and the replica
-- that ran each run.
--
-- sync_replicas: one row per [cluster] holder, renewed by its serve process
-- with its leases. A replica is live while expires_at > now() (the server's
-- clock); the live replicas split the accounts between them, and a second
-- live process with the same holder (another instance) is refused at start.
--
-- sync_runs.holder: the [cluster] holder of the replica that ran the run
-- (NULL for runs recorded before this version).
--
-- sync_leases.instance: the process that took the lease (a random id per
-- open warehouse). A lease is kept (same fencing token) only by the process
-- that took it: another live process given the same holder (a backfill
-- beside a serve, a second serve) is refused until it lapses, never shares it.
CREATE TABLE sync_replicas (
    holder     text PRIMARY KEY,
    instance   text NOT NULL,
    started_at timestamptz NOT NULL,
    seen_at    timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
ALTER TABLE sync_runs ADD COLUMN holder text;
ALTER TABLE sync_leases ADD COLUMN instance text;
