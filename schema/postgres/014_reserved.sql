-- Placeholder for migration 14, which another change of issue 34 takes
-- (currency scales). It exists only so that this branch's migration 15 has
-- no gap; it is dropped when the two branches meet.
SELECT 1;
