-- 011_run_duration: each run's exact duration, as SQLite schema version 14.
--
-- sync_runs.duration_ms: the run's wall-clock duration in milliseconds,
-- measured by the process that ran it on a monotonic clock (from the run's
-- row to its result), written with the result. NULL while the run runs, for
-- an abandoned run, and for runs recorded before this migration.
ALTER TABLE sync_runs ADD COLUMN duration_ms bigint;
