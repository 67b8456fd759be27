-- Placeholder for schema version 17, which another change of issue 34 takes
-- (currency scales). It exists only so that this branch's version 18 has no
-- gap; it is dropped when the two branches meet.
SELECT 1;
