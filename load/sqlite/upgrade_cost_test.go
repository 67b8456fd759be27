package sqlite

import (
	"reflect"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestUpgradeOpenWalk upgrades a release-1 warehouse in the middle of a
// walk: walk_seen's per-card rows become one row per page with the same
// ids, the walk's running summary comes over from run_pages, WalkSummary
// reports what it reported before the upgrade, and the walk resumes and
// closes.
func TestUpgradeOpenWalk(t *testing.T) {
	path := release1Warehouse(t)
	db := rawDB(t, path)
	// Run 7 committed pages 1 and 2 of a walk, then failed. Page 2 lists
	// 1015 again (a duplicate) and reports a total of 41.
	for _, q := range []string{
		`INSERT INTO sync_runs (run_id, trigger, started_at, heartbeat_at, status, pages) VALUES (7, 'schedule', '2026-03-01T14:00:00Z', '2026-03-01T14:00:00Z', 'failed', 2)`,
		`INSERT INTO sync_walks (walk_id, stream, started_at, started_run, first_total, last_total) VALUES (6, 'cards', '2026-03-01T14:00:00Z', 7, 40, 41)`,
		`INSERT INTO walk_seen (walk_id, card_id, page, run_id, seen_at)
			SELECT 6, card_id, 1, 7, '2026-03-01T14:00:00Z' FROM (SELECT card_id FROM cards WHERE card_id < '9' ORDER BY card_id LIMIT 15)`,
		`INSERT INTO walk_seen (walk_id, card_id, page, run_id, seen_at)
			SELECT 6, card_id, 2, 7, '2026-03-01T14:00:10Z' FROM (SELECT card_id FROM cards WHERE card_id < '9' ORDER BY card_id LIMIT 15 OFFSET 14)`,
		`INSERT INTO run_pages VALUES (7, 'cards', 1, 6, '2026-03-01T14:00:00Z', '2026-03-01T14:00:00Z', 15, 40, 3, 0, '00', 0, 0, 15)`,
		`INSERT INTO run_pages VALUES (7, 'cards', 2, 6, '2026-03-01T14:00:10Z', '2026-03-01T14:00:10Z', 15, 41, 3, 0, '00', 0, 0, 15)`,
		`UPDATE sync_checkpoints SET run_id = 7, next_page = 3 WHERE stream = 'cards'`,
	} {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var seenRows int64
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM walk_seen`).Scan(&seenRows); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if seenRows != 30 {
		t.Fatalf("release-1 walk_seen holds %d rows, want 30", seenRows)
	}

	w, err := Open(t.Context(), path, load.Options{})
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	defer w.Close()
	if got := queryInt(t, w, `SELECT count(*) FROM walk_seen`); got != 2 {
		t.Errorf("walk_seen: %d rows, want one per page (2)", got)
	}
	if got := queryInt(t, w, `SELECT sum(json_array_length(ids)) FROM walk_seen`); got != seenRows {
		t.Errorf("walk_seen lists %d ids, want the %d it held", got, seenRows)
	}
	sum, err := w.WalkSummary(t.Context(), load.StreamCards)
	if err != nil {
		t.Fatal(err)
	}
	want := load.WalkSummary{WalkID: 6, StartedAt: sum.StartedAt, StartedRun: 7, Runs: 1, Pages: 2, LastPage: 2, TotalPages: 3,
		DistinctIDs: 29, DuplicateIDs: 1, FirstTotal: 40, LastTotal: 41, TotalChanged: true, MinTotal: 40, MaxTotal: 41}
	if !reflect.DeepEqual(sum, want) {
		t.Errorf("WalkSummary after the upgrade = %+v\nwant %+v", sum, want)
	}

	// The walk resumes at page 3 and closes (inconsistent: its total
	// changed), leaving no walk_seen row and nothing removed.
	run := startRun(t, w)
	ww := w.NewWalkWriter(run, load.StreamCards)
	if _, err := ww.Add(t.Context(), page(3, []int{1094}, 1, 41)); err != nil {
		t.Fatal(err)
	}
	if err := ww.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if sum, err = w.WalkSummary(t.Context(), load.StreamCards); err != nil || sum.Pages != 3 || sum.Runs != 2 || sum.LastPage != 3 {
		t.Errorf("after page 3: %+v, %v; want 3 pages from 2 runs", sum, err)
	}
	if _, err := finishWalk(t.Context(), w, run, false); err != nil {
		t.Fatal(err)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM walk_seen`); got != 0 {
		t.Errorf("%d walk_seen rows after the walk closed", got)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM card_state WHERE removed_at IS NOT NULL`); got != 1 {
		t.Errorf("%d removed cards, want release 1's one", got)
	}
}
