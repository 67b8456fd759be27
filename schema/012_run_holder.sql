-- cardsync warehouse schema, version 12: the replica that ran each run.
--
-- holder: the [cluster] holder of the replica that ran the run, on a shared
-- PostgreSQL warehouse (its migration 008 adds the same column). A SQLite
-- file has no replicas: its runs keep NULL.
ALTER TABLE sync_runs ADD COLUMN holder TEXT;
