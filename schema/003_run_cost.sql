-- cardsync warehouse schema, version 3: a run that finds nothing new writes
-- almost nothing. Most scheduled runs list exactly what the warehouse holds;
-- until now each of them wrote ~40 MiB and left ~120 KiB behind (run_pages
-- rows for every page, walk_seen rows for every card, and a restamp of
-- last_seen_at/last_seen_run on every cards row when the walk closed).
-- Package load also fills card_state.data_hash, in the same transaction as
-- this file.

-- walk_seen (internal scratch, not public): one row per committed page of
-- the open walk instead of one per card. ids is a JSON array of the card ids
-- the page listed, rejected items included (their id, or an anonymous id for
-- an item without one). A page committed again replaces its row. Closing a
-- walk counts distinct and duplicated ids and finds the live cards it missed
-- over json_each(ids), then deletes the walk's rows.
CREATE TABLE walk_seen_pages (
    walk_id INTEGER NOT NULL REFERENCES sync_walks (walk_id),
    page    INTEGER NOT NULL,
    run_id  INTEGER NOT NULL,
    ids     TEXT    NOT NULL CHECK (json_valid(ids)),
    PRIMARY KEY (walk_id, page)
) STRICT, WITHOUT ROWID;

INSERT INTO walk_seen_pages (walk_id, page, run_id, ids)
SELECT walk_id, page, max(run_id), json_group_array(card_id)
FROM walk_seen
GROUP BY walk_id, page;

DROP TABLE walk_seen;
ALTER TABLE walk_seen_pages RENAME TO walk_seen;

-- sync_walks keeps the open walk's running summary, brought up to date with
-- every committed batch of pages, so nothing needs the run_pages audit to
-- judge a walk: pages (distinct pages committed so far; the final count once
-- closed), last_page (highest page committed), runs (runs that committed
-- pages to it), last_run (the latest of them), total_changed (1: some page
-- reported a total other than first_total), min_total and max_total (the
-- smallest and largest total any page reported).
-- walks: how many consecutive walks the row stands for. A complete walk
-- that changed nothing (no page wrote a card, nothing was removed, nothing
-- became or stopped being pending, the same totals, pages and ids as the
-- complete walk before it) is folded into that walk's row: walks + 1 and
-- finished_at/finished_run moved to it, so quiet runs add no row here.
ALTER TABLE sync_walks ADD COLUMN last_page INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sync_walks ADD COLUMN runs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sync_walks ADD COLUMN last_run INTEGER REFERENCES sync_runs (run_id);
ALTER TABLE sync_walks ADD COLUMN total_changed INTEGER NOT NULL DEFAULT 0
    CHECK (total_changed IN (0, 1));
ALTER TABLE sync_walks ADD COLUMN walks INTEGER NOT NULL DEFAULT 1
    CHECK (walks >= 1);
ALTER TABLE sync_walks ADD COLUMN min_total INTEGER;
ALTER TABLE sync_walks ADD COLUMN max_total INTEGER;

-- Until now the running summary came from run_pages.
UPDATE sync_walks SET
    pages = CASE WHEN finished_at IS NULL
        THEN (SELECT count(DISTINCT r.page) FROM run_pages r WHERE r.walk_id = sync_walks.walk_id)
        ELSE pages END,
    last_page = (SELECT coalesce(max(r.page), 0) FROM run_pages r WHERE r.walk_id = sync_walks.walk_id),
    runs = (SELECT count(DISTINCT r.run_id) FROM run_pages r WHERE r.walk_id = sync_walks.walk_id),
    last_run = (SELECT max(r.run_id) FROM run_pages r WHERE r.walk_id = sync_walks.walk_id),
    total_changed = (last_total IS NOT first_total OR EXISTS (SELECT 1 FROM run_pages r
        WHERE r.walk_id = sync_walks.walk_id AND r.total_items IS NOT sync_walks.first_total)),
    min_total = min(first_total, last_total, coalesce((SELECT min(r.total_items) FROM run_pages r WHERE r.walk_id = sync_walks.walk_id), first_total)),
    max_total = max(first_total, last_total, coalesce((SELECT max(r.total_items) FROM run_pages r WHERE r.walk_id = sync_walks.walk_id), first_total));

-- run_pages (audit) now gets a row only for a page that changed something:
-- new, changed or returned cards, or items set aside in rejected_cards. A
-- page that listed only unchanged cards is counted in sync_runs (pages,
-- cards_seen, cards_unchanged) and nowhere else.

-- cards becomes a view over the internal table card_state, so that a walk
-- no longer rewrites every row to move last_seen_at/last_seen_run. The
-- rename carries the foreign keys of card_versions and removal_pending.
-- data_hash: the first 16 bytes of the SHA-256 of data (package load fills
-- it for the rows already stored): a listed card whose hash matches and
-- that is not removed costs a lookup, not a write.
-- The view cards (views.sql) keeps the columns and order of the former
-- table. No view exists while migrations run, so the rename rewrites none.
ALTER TABLE cards RENAME TO card_state;
ALTER TABLE card_state ADD COLUMN data_hash BLOB;
