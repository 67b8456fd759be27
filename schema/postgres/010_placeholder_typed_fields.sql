-- placeholder: replaced by the typed-fields migration at merge.
-- (Migrations must be numbered without a gap; migration 10 belongs to the
-- typed-fields change. This file changes nothing.)
SELECT 1;
