-- 009_raw_text: account_snapshots.raw keeps the /account body as text,
-- exactly as received (redacted), as the SQLite warehouse does: jsonb wrote
-- numbers in its own form (1e2 as 100) and refused a body holding a lone
-- UTF-16 surrogate escape or a number beyond numeric's range, which failed
-- the run before any card. Rows stored before keep jsonb's text of them.
-- Query it as JSON with raw::jsonb (data->>'balance' becomes
-- raw::jsonb->>'balance').
ALTER TABLE account_snapshots ALTER COLUMN raw TYPE text USING raw::text;
