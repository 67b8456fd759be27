package postgres

import (
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestMigrationCountsReturnedRuns: migration 007 gives the runs recorded
// before it their cards_returned from card_versions and takes those cards
// out of cards_changed, as SQLite's migration 011 does.
func TestMigrationCountsReturnedRuns(t *testing.T) {
	ctx := t.Context()
	w, url, clk := openPG(t, Options{})
	var runs []int64
	for i, ids := range [][]int{idRange(1, 5), idRange(1, 4), idRange(1, 4), idRange(1, 5)} {
		clk.Advance(time.Hour)
		run := startRun(t, w)
		runs = append(runs, run)
		rev := 1
		if i == 3 {
			rev = 2 // card 5 returns, cards 1 to 4 change
		}
		commit(t, w, run, page(1, ids, rev, len(ids)))
		if _, err := w.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
			t.Fatal(err)
		}
	}
	last := runs[3]
	counts := func(w *Warehouse, run int64) string {
		t.Helper()
		var s string
		if err := w.pool.QueryRow(ctx, `SELECT cards_returned || ',' || cards_changed FROM sync_runs WHERE run_id = $1`, run).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := counts(w, last); got != "1,4" {
		t.Fatalf("run %d: returned,changed = %s, want 1,4", last, got)
	}
	// The database as migration 006 left it: returned cards counted as
	// changed.
	if _, err := w.pool.Exec(ctx, `UPDATE sync_runs SET cards_changed = cards_changed + cards_returned;
		ALTER TABLE sync_runs DROP COLUMN cards_returned;
		DELETE FROM schema_migrations WHERE version = 7`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w2, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatalf("Open after migration 006: %v", err)
	}
	t.Cleanup(func() { w2.Close() })
	for _, r := range runs {
		want := "0,0"
		if r == last {
			want = "1,4"
		}
		if got := counts(w2, r); got != want {
			t.Errorf("run %d after migration: returned,changed = %s, want %s", r, got, want)
		}
	}
}
