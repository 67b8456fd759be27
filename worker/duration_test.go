package worker

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
)

// runMeasured runs job once and returns the wall time measured around it.
func runMeasured(t *testing.T, ctx context.Context, job *Job) time.Duration {
	t.Helper()
	start := time.Now()
	job.Run(ctx, TriggerBackfill, Options{}) // the outcome is checked by the caller
	return time.Since(start)
}

// checkDuration checks that the last run of w ended with status and has
// sync_runs.duration_ms recorded, at most wall.
func checkDuration(t *testing.T, w interface {
	Runs(context.Context, int) ([]load.Run, error)
}, status string, wall time.Duration) {
	t.Helper()
	runs, err := w.Runs(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != status {
		t.Fatalf("runs %+v, want one %s", runs, status)
	}
	// Whole milliseconds, truncated, from the run row to the result: a run
	// that fails within a millisecond of its row records 0, so only a walk
	// that succeeded must have taken more.
	d := runs[0].DurationMS
	if d == nil {
		t.Fatalf("%s run: no duration_ms", status)
	}
	if *d < 0 || *d > wall.Milliseconds() || *d == 0 && status == load.StatusSucceeded {
		t.Errorf("%s run: duration_ms %d, want at most the %d ms measured around it (above 0 for a success)", status, *d, wall.Milliseconds())
	}
	// status -json shows it beside duration_seconds.
	if rs := runStatuses(runs, nil); d != nil && (rs[0].DurationMS == nil || *rs[0].DurationMS != *d) {
		t.Errorf("status run %+v: duration_ms, want %d", rs[0], *d)
	}
}

// TestRunDurationRecorded: every way a run ends records its duration in
// sync_runs.duration_ms, measured on the monotonic clock whatever the
// Job's clock says: a success, a failure and an interruption.
func TestRunDurationRecorded(t *testing.T) {
	t.Run("succeeded", func(t *testing.T) {
		f := newFixture(t, sim.Options{Cards: 60, Seed: 3})
		// A clock stuck in the past moves the stamps, not the duration.
		f.job.Now = func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }
		checkDuration(t, f.wh, load.StatusSucceeded, runMeasured(t, t.Context(), f.job))
	})
	t.Run("failed", func(t *testing.T) {
		f := newFixture(t, sim.Options{Cards: 10, Password: "not-the-clients"})
		checkDuration(t, f.wh, load.StatusFailed, runMeasured(t, t.Context(), f.job))
	})
	t.Run("interrupted", func(t *testing.T) {
		f := newFixture(t, sim.Options{Cards: 60, Seed: 3})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f.job.Client = rewriteClientWith(t, f, func(r *http.Request) {
			if r.URL.Path == "/cards" && r.URL.Query().Get("page") == "2" {
				cancel()
			}
		}, nil)
		checkDuration(t, f.wh, load.StatusInterrupted, runMeasured(t, ctx, f.job))
	})
}

// TestPostgresRunDurationRecorded: the PostgreSQL warehouse records the
// run's duration_ms as the SQLite file does.
func TestPostgresRunDurationRecorded(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	_, client := pgFixture(t, 60)
	st := pgStore(t, url, "acme", "replica-a", 10*time.Second, false)
	wall := runMeasured(t, t.Context(), st.Job(client, nil, JobOptions{Version: "test"}))
	checkDuration(t, st.Warehouse, load.StatusSucceeded, wall)
}

// TestPendingResultKeepsItsDuration: a result recorded by the next run
// (from <warehouse>.unrecorded) keeps the duration its own run measured;
// one kept before results carried a duration leaves duration_ms NULL.
func TestPendingResultKeepsItsDuration(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 7, Cards: 15})
	var ids []int64
	for range 2 {
		id, err := f.wh.StartRun(t.Context(), TriggerBackfill, "test")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	pending := fmt.Sprintf(`[{"run_id":%d,"result":{"Status":"failed","Error":"disk full","Duration":1234567890}},`+
		`{"run_id":%d,"result":{"Status":"failed","Error":"disk full"}}]`, ids[0], ids[1])
	if err := os.WriteFile(f.wh.Path()+".unrecorded", []byte(pending), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := f.job.Run(t.Context(), TriggerSchedule, Options{}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"1234", "NULL"} {
		var got string
		f.wh.DB().QueryRow(`SELECT coalesce(CAST(duration_ms AS TEXT), 'NULL') FROM sync_runs WHERE run_id = ?`, ids[i]).Scan(&got)
		if got != want {
			t.Errorf("earlier run %d: duration_ms %s, want %s", ids[i], got, want)
		}
	}
}
