-- cardsync warehouse schema, version 14: each run's exact duration.
--
-- duration_ms: the run's wall-clock duration in milliseconds, measured by
-- the process that ran it on a monotonic clock (from the run's row to its
-- result; immune to clock steps), written with the result. NULL while the
-- run runs, for an abandoned run (its process stopped without a result),
-- and for runs recorded before this version: their duration is known only
-- from started_at and finished_at, to the second.
ALTER TABLE sync_runs ADD COLUMN duration_ms INTEGER;
