package load

import "testing"

// TestFailuresInARow checks that sync_health.failures_in_a_row and
// Summary count the same runs: failed and abandoned runs since the last
// success, never an interrupted one (a SIGTERM is not a failure).
func TestFailuresInARow(t *testing.T) {
	w, _, _ := openTest(t, Options{})
	ctx := t.Context()
	finish := func(status string) {
		t.Helper()
		run := startRun(t, w)
		r := RunResult{Status: status}
		if status != StatusSucceeded {
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
		{StatusFailed, 1},
		{StatusInterrupted, 1},
		{StatusAbandoned, 2},
		{StatusSucceeded, 0},
		{StatusInterrupted, 0},
		{StatusFailed, 1},
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
