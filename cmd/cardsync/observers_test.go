package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/metrics"
	"github.com/cardsync/cardsync/worker"
)

// TestObserversForwardTicksAndLeases: serve's observers list
// (worker.Observers) passes the daemon's ticks and lease events on to the
// metrics (the daemon finds the hooks on the list by type assertion),
// skipping those that do not listen.
func TestObserversForwardTicksAndLeases(t *testing.T) {
	w, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "w.db"), load.Options{Account: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	met := metrics.New(metrics.Options{Accounts: []string{"acme"}})
	var obs worker.Observer = worker.Observers{met.RunObserver("acme", w), nil}
	l, ok := obs.(worker.LeaseObserver)
	if !ok {
		t.Fatal("worker.Observers is not a worker.LeaseObserver")
	}
	tick, ok := obs.(worker.TickObserver)
	if !ok {
		t.Fatal("worker.Observers is not a worker.TickObserver")
	}
	l.LeaseHeld(true)
	l.RunSkipped(worker.SkipLocked)
	l.LeaseLost()
	id, err := w.StartRun(t.Context(), worker.TriggerSchedule, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(t.Context(), id, load.RunResult{Status: load.StatusFailed, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	tick.Tick(t.Context())
	mfs, err := met.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{
		`cardsync_lease_held{account="acme"} 1`,
		`cardsync_runs_skipped_total{account="acme",reason="locked"} 1`,
		`cardsync_leases_lost_total{account="acme"} 1`,
		`cardsync_runs_failed_in_a_row{account="acme"} 1`,
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
}
