-- 008: reserved for the leases helper's migration of issue 24 (sticky
-- leases, sync_runs.holder). This placeholder only keeps the numbering
-- without a gap on the branch that adds 009_raw_text; delete it when the
-- real 008 is merged.
SELECT 1;
