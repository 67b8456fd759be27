package sqlite

import (
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestFailuresInARow checks that sync_health.failures_in_a_row and
// Summary count the same runs: failed and abandoned runs since the last
// success, never an interrupted one (a SIGTERM is not a failure).
func TestFailuresInARow(t *testing.T) {
	w, _, _ := openTest(t, load.Options{})
	ctx := t.Context()
	finish := func(status string) {
		t.Helper()
		run := startRun(t, w)
		r := load.RunResult{Status: status}
		if status != load.StatusSucceeded {
			r.Error = status + " for the test"
		}
		if err := w.FinishRun(ctx, run, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct {
		status string
		want   int64
	}{
		{load.StatusFailed, 1},
		{load.StatusInterrupted, 1},
		{load.StatusAbandoned, 2},
		{load.StatusSucceeded, 0},
		{load.StatusInterrupted, 0},
		{load.StatusFailed, 1},
	} {
		finish(step.status)
		if got := queryInt(t, w, `SELECT failures_in_a_row FROM sync_health`); got != step.want {
			t.Errorf("after a run %s: sync_health.failures_in_a_row = %d, want %d", step.status, got, step.want)
		}
		sum, err := w.Summary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if int64(sum.FailuresInARow) != step.want {
			t.Errorf("after a run %s: Summary.FailuresInARow = %d, want %d", step.status, sum.FailuresInARow, step.want)
		}
	}
}

// TestLastSnapshotAge checks sync_health's snapshot columns: NULL before
// any snapshot, then the time of the newest one and its age in seconds
// (measured against SQLite's clock, so a snapshot stamped an hour ago by
// the injected clock is an hour old).
func TestLastSnapshotAge(t *testing.T) {
	w, _, clk := openTest(t, load.Options{})
	ctx := t.Context()
	if got := queryInt(t, w, `SELECT last_snapshot_age_seconds IS NULL AND last_snapshot_at IS NULL FROM sync_health`); got != 1 {
		t.Errorf("before any snapshot: last_snapshot_* not NULL")
	}
	clk.Advance(time.Now().Add(-time.Hour).Sub(clk.Now())) // an hour ago
	run := startRun(t, w)
	if err := w.SaveAccount(ctx, run, load.Account{Raw: []byte(`{"name":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	age := queryInt(t, w, `SELECT last_snapshot_age_seconds FROM sync_health`)
	if age < 3595 || age > 3700 {
		t.Errorf("last_snapshot_age_seconds = %d, want about 3600", age)
	}
	var at string
	if err := w.db.QueryRowContext(ctx, `SELECT last_snapshot_at FROM sync_health`).Scan(&at); err != nil {
		t.Fatal(err)
	}
	if want := clk.Now().Format("2006-01-02T15:04:05Z"); at != want {
		t.Errorf("last_snapshot_at = %q, want %q", at, want)
	}
}
