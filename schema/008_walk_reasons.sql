-- cardsync warehouse schema, version 8: why a walk was inconsistent, and
-- on which pages. A walk no longer ends at an empty or short page before
-- its last one: it asks for such a page once more, goes on to the last
-- page, and records the reason here so that `cardsync status` can tell
-- a list that moved upstream from pages that came back wrong.
--
-- inconsistent_reason: NULL for a complete walk (or one still open with
-- nothing wrong yet); else one short reason: empty_page, repeated_page,
-- short_page, total_pages_changed (a page of the walk showed it, the
-- first such page's reason), or total_changed, duplicate_ids,
-- count_mismatch, no_pages (the walk's counts, judged when it closed).
-- inconsistent_pages: the pages that showed a page reason, as a JSON
-- array of page numbers in the order they were committed; NULL when none.
-- Walks closed before this version keep NULL in both.
ALTER TABLE sync_walks ADD COLUMN inconsistent_reason TEXT;
ALTER TABLE sync_walks ADD COLUMN inconsistent_pages TEXT CHECK (inconsistent_pages IS NULL OR json_valid(inconsistent_pages));
