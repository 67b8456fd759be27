package sqlite

import (
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

func TestPruneAudit(t *testing.T) {
	w, _, clk := openTest(t, load.Options{})
	finish := func(run int64) {
		t.Helper()
		if _, err := finishWalk(t.Context(), w, run, true); err != nil {
			t.Fatal(err)
		}
		if err := w.FinishRun(t.Context(), run, load.RunResult{Status: load.StatusSucceeded}); err != nil {
			t.Fatal(err)
		}
	}
	// Run 1, 40 days ago: a complete walk of two pages.
	old := startRun(t, w)
	commit(t, w, old, page(1, idRange(1, 15), 0, 30))
	commit(t, w, old, page(2, idRange(16, 30), 0, 30))
	finish(old)
	clk.Advance(20 * 24 * time.Hour)
	// Run 2, 20 days ago: commits page 1 of a walk it leaves open. Only a
	// page that changes something gets an audit row: these cards changed.
	open := startRun(t, w)
	commit(t, w, open, page(1, idRange(1, 15), 1, 30))
	if err := w.FinishRun(t.Context(), open, load.RunResult{Status: load.StatusFailed, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(20 * 24 * time.Hour)
	// Run 3, now: resumes that walk.
	now := startRun(t, w)
	commit(t, w, now, page(2, idRange(16, 30), 1, 30))

	n, err := w.PruneAudit(t.Context(), clk.Now().Add(-30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("pruned %d rows, want the 2 of the old complete walk", n)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM run_pages`); got != 2 {
		t.Errorf("%d audit rows left, want the open walk's 2", got)
	}
	sum, err := w.WalkSummary(t.Context(), load.StreamCards)
	if err != nil || sum.Pages != 2 || sum.Runs != 2 {
		t.Errorf("open walk summary %+v, %v: its audit rows must survive pruning", sum, err)
	}
	finish(now)
	if n, err := w.PruneAudit(t.Context(), clk.Now().Add(time.Hour)); err != nil || n != 2 {
		t.Errorf("pruning everything after the walk closed: %d, %v; want 2", n, err)
	}
}
