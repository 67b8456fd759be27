package worker

import (
	"context"
	"slices"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
)

// runRecorder is an Observer keeping what it is told.
type runRecorder struct{ got []Result }

func (r *runRecorder) RunFinished(ctx context.Context, res Result) {
	if ctx.Err() != nil {
		panic("observer called with an ended context")
	}
	r.got = append(r.got, res)
}

func TestObserverHearsEveryRecordedRun(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 4, Cards: 20})
	rec := &runRecorder{}
	f.job.Observer = rec
	// A run left running by a dead process: the next run marks it abandoned.
	if _, err := f.wh.StartRun(t.Context(), TriggerDemo, "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.job.Run(t.Context(), TriggerSchedule, Options{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(rec.got) != 1 {
		t.Fatalf("observer told about %d runs, want 1", len(rec.got))
	}
	r := rec.got[0]
	if r.Trigger != TriggerSchedule || r.Status != load.StatusSucceeded || r.New != 20 {
		t.Errorf("result trigger %q status %q new %d; want schedule, succeeded, 20", r.Trigger, r.Status, r.New)
	}
	if !slices.Equal(r.Abandoned, []string{TriggerDemo}) {
		t.Errorf("Abandoned = %v, want [demo]", r.Abandoned)
	}
	if r.AccountSnapshotAt.IsZero() {
		t.Error("AccountSnapshotAt is zero after a run that took a snapshot")
	}
}

func TestObserverHearsFailedRuns(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 5, Cards: 20, Faults: []sim.Fault{{Endpoint: "account", Kind: sim.FaultStatus, Status: 400}, {Endpoint: "cards", Kind: sim.FaultStatus, Status: 400}}})
	rec := &runRecorder{}
	f.job.Observer = rec
	if _, err := f.job.Run(t.Context(), TriggerBackfill, Options{}); err == nil {
		t.Fatal("run succeeded against an API answering 400")
	}
	if len(rec.got) != 1 || rec.got[0].Status != load.StatusFailed || rec.got[0].Trigger != TriggerBackfill {
		t.Fatalf("observer got %+v, want one failed backfill", rec.got)
	}
	if !rec.got[0].AccountSnapshotAt.IsZero() {
		t.Error("AccountSnapshotAt set for a run without a snapshot")
	}
}

// startRecorder is also a StartObserver.
type startRecorder struct {
	runRecorder
	notStarted []string
}

func (r *startRecorder) RunNotStarted(what string, _ error) {
	r.notStarted = append(r.notStarted, what)
}

// TestStartObserverHearsRunsThatCouldNotStart: a run whose warehouse file
// check fails records no sync_runs row, so only RunNotStarted tells of it.
func TestStartObserverHearsRunsThatCouldNotStart(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 6, Cards: 5})
	rec := &startRecorder{}
	f.job.Observer = rec
	f.wh.Close() // the file check fails on a closed warehouse
	if _, err := f.job.Run(t.Context(), TriggerSchedule, Options{}); err == nil {
		t.Fatal("a run on a closed warehouse started")
	}
	if len(rec.notStarted) != 1 || len(rec.got) != 0 {
		t.Fatalf("RunNotStarted %v, RunFinished %d times; want one start failure and no finished run", rec.notStarted, len(rec.got))
	}
}
