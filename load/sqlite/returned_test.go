package sqlite

import (
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestMigrationCountsReturnedRuns: migration 011 gives the runs recorded
// before it their cards_returned from card_versions and takes those cards
// out of cards_changed, which counted them until then; a run without a
// returned card keeps its counts.
func TestMigrationCountsReturnedRuns(t *testing.T) {
	ctx := t.Context()
	w, path, clk := openTest(t, load.Options{})
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
		if _, err := finishWalk(ctx, w, run, true); err != nil {
			t.Fatal(err)
		}
	}
	last := runs[3]
	if got := queryString(t, w, "SELECT cards_returned || ',' || cards_changed FROM sync_runs WHERE run_id = ?", last); got != "1,4" {
		t.Fatalf("run %d: returned,changed = %s, want 1,4", last, got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The file as schema 10 left it: returned cards counted as changed.
	db := rawDB(t, path)
	for _, q := range []string{
		"UPDATE sync_runs SET cards_changed = cards_changed + cards_returned",
		"ALTER TABLE sync_runs DROP COLUMN cards_returned",
		schema18Undo, schema17Undo,
		"DROP TABLE rules_state", // schema 16's
		schema15Undo,
		"ALTER TABLE sync_runs DROP COLUMN duration_ms", // schema 14's
		"ALTER TABLE sync_runs DROP COLUMN holder",      // schema 12's
		schema13Undo,
		"PRAGMA user_version = 10",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	w2, err := Open(ctx, path, load.Options{Now: clk.Now})
	if err != nil {
		t.Fatalf("Open after schema 10: %v", err)
	}
	t.Cleanup(func() { w2.Close() })
	if got := queryInt(t, w2, "PRAGMA user_version"); got != int64(latestVersion()) {
		t.Errorf("user_version = %d, want %d", got, latestVersion())
	}
	for _, r := range runs {
		want := "0,0"
		if r == last {
			want = "1,4"
		}
		if got := queryString(t, w2, "SELECT cards_returned || ',' || cards_changed FROM sync_runs WHERE run_id = ?", r); got != want {
			t.Errorf("run %d after migration: returned,changed = %s, want %s", r, got, want)
		}
	}
}
