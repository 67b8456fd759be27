package worker

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// btreePages returns the pages each table uses, its indexes included
// (SQLite's dbstat), and the database's used pages (page_count -
// freelist_count).
func btreePages(t *testing.T, db *sql.DB) (map[string]int64, int64) {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT coalesce(m.tbl_name, d.name), count(*)
		FROM dbstat d LEFT JOIN sqlite_schema m ON m.name = d.name
		GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		out[name] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var pages, free int64
	if err := db.QueryRowContext(t.Context(), `SELECT (SELECT page_count FROM pragma_page_count), (SELECT freelist_count FROM pragma_freelist_count)`).
		Scan(&pages, &free); err != nil {
		t.Fatal(err)
	}
	return out, pages - free
}

// TestQuietRunsDoNotGrow runs 200 syncs of 300 cards (20 pages) through Job
// against the simulator over loopback with nothing changing upstream: only
// sync_runs and account_snapshots (the run history and the balance
// snapshots) may grow, by at most 2 KiB a run together, and every other
// table and index keeps the pages it had after the first quiet run. With
// odd items upstream, rejected again on every run, their pages' run_pages
// audit rows grow too (pruned after warehouse.page_audit_retention); nothing
// else does. QUIET_RUNS=8640 runs the 90 days of a 15-minute schedule
// instead (a few minutes).
func TestQuietRunsDoNotGrow(t *testing.T) {
	for _, odd := range []bool{false, true} {
		name := "plain"
		if odd {
			name = "odd items rejected every run"
		}
		t.Run(name, func(t *testing.T) { testQuietRuns(t, odd) })
	}
}

func testQuietRuns(t *testing.T, odd bool) {
	runs := 200
	if testing.Short() {
		runs = 40
	}
	if n, err := strconv.Atoi(os.Getenv("QUIET_RUNS")); err == nil && n > 1 {
		runs = n
	}
	f := newFixture(t, sim.Options{Seed: 5, Cards: 300, OddData: odd})
	db := f.wh.DB()
	run := func() {
		t.Helper()
		res, err := f.job.Run(t.Context(), TriggerSchedule, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.WalkConsistent || res.Cards < 300 {
			t.Fatalf("run %+v, want a consistent walk of 300 cards or more", res)
		}
		if odd != (res.Rejected > 0) {
			t.Fatalf("run %+v: %d items rejected", res, res.Rejected)
		}
	}
	run() // the backfill
	run() // the first quiet run: free pages of the first walk's close are reused from here on
	before, usedBefore := btreePages(t, db)
	for range runs - 1 {
		run()
	}
	after, usedAfter := btreePages(t, db)
	history := map[string]bool{"sync_runs": true, "account_snapshots": true}
	var historyGrowth, auditGrowth int64
	for name, n := range after {
		switch {
		case history[name]:
			historyGrowth += n - before[name]
		case odd && name == "run_pages":
			auditGrowth = n - before[name]
		case n > before[name]:
			t.Errorf("%s grew from %d to %d pages over %d quiet runs", name, before[name], n, runs-1)
		}
	}
	const pageSize = 4096
	if max := int64(runs-1) * 2 << 10 / pageSize; historyGrowth > max {
		t.Errorf("sync_runs and account_snapshots grew by %d pages over %d runs, more than 2 KiB a run (%d pages)", historyGrowth, runs-1, max)
	}
	// Nothing else takes pages: what the file uses grows with the history
	// (and the audit of rejections) alone, give or take a page or two of
	// b-tree splits.
	if usedAfter-usedBefore > historyGrowth+auditGrowth+2 {
		t.Errorf("used pages grew from %d to %d, the history by %d pages, the audit by %d", usedBefore, usedAfter, historyGrowth, auditGrowth)
	}
	t.Logf("%d quiet runs: used pages %d -> %d (history +%d pages, %.0f bytes a run; audit of rejections +%d pages)", runs-1, usedBefore, usedAfter,
		historyGrowth, float64(historyGrowth*pageSize)/float64(runs-1), auditGrowth)
	var walks, rows int64
	if err := db.QueryRowContext(t.Context(), `SELECT count(*), sum(walks) FROM sync_walks`).Scan(&rows, &walks); err != nil {
		t.Fatal(err)
	}
	// Every walk listed the same 300 cards on 20 pages: one row stands for
	// all of them.
	if rows != 1 || walks != int64(runs+1) {
		t.Errorf("sync_walks: %d rows for %d walks, want 1 row for %d (identical complete walks are folded)", rows, walks, runs+1)
	}
}

// TestInterruptedQuietRunCommitsBatchInHand: a shutdown during a run that
// finds nothing new commits the pages read so far (buffered, not yet
// committed), as a page in hand always was, so the next run resumes after
// them.
func TestInterruptedQuietRunCommitsBatchInHand(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 2, Cards: 100}) // 7 pages
	if _, err := f.job.Run(t.Context(), TriggerBackfill, Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	f.srv.OnPageServed(func(page int) {
		if page == 5 {
			cancel()
		}
	})
	var progress []int
	f.job.Progress = func(p Progress) { progress = append(progress, p.Page) }
	res, err := f.job.Run(ctx, TriggerBackfill, Options{})
	if !errors.Is(err, ErrInterrupted) || res.Status != "interrupted" {
		t.Fatalf("run: status %q err %v, want interrupted", res.Status, err)
	}
	// Pages 1-4 (and page 5 when its response won the race with the
	// cancel) changed nothing: they were buffered, and committed in one
	// transaction when the run stopped.
	if res.Pages < 4 || res.Pages > 5 || res.Unchanged != 15*res.Pages {
		t.Errorf("interrupted run %+v, want pages 1-4 or 1-5 committed, all unchanged", res)
	}
	if len(progress) != 1 || progress[0] != res.Pages {
		t.Errorf("progress reported after pages %v, want one commit ending at page %d", progress, res.Pages)
	}
	cp, err := f.wh.Checkpoint(t.Context(), Stream)
	if err != nil {
		t.Fatal(err)
	}
	if !cp.InProgress || cp.NextPage != res.Pages+1 {
		t.Fatalf("checkpoint %+v, want next page %d in progress", cp, res.Pages+1)
	}
	next := res.Pages + 1
	f.srv.OnPageServed(nil)
	res, err = f.job.Run(t.Context(), TriggerBackfill, Options{})
	if err != nil || !res.Resumed || res.StartPage != next || res.Pages != 8-next || !res.WalkConsistent {
		t.Errorf("resumed run %+v err %v, want pages %d-7 and a consistent walk", res, err, next)
	}
}
