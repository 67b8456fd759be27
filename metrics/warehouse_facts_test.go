package metrics

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// TestInconsistentInARowFollowsTheWarehouse: two replicas of one warehouse
// each run one inconsistent walk, one after the other. Each replica's
// counter only reaches 1, but cardsync_walks_inconsistent_in_a_row, read
// from the warehouse, is 2 on both (the alert fires on either), as /healthz
// says; a consistent walk by either sets it back to 0 on both.
func TestInconsistentInARowFollowsTheWarehouse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	const account = "acme"
	opts := sim.Options{Seed: 4, Cards: 45} // 3 pages
	ma, mb := New(Options{Accounts: []string{account}}), New(Options{Accounts: []string{account}})
	a := newAccountJob(t, ma, path, account, opts)
	b := newAccountJob(t, mb, path, account, opts)
	inARow := func(m *Metrics) float64 {
		return mustValue(t, families(t, m), "cardsync_walks_inconsistent_in_a_row", "account="+account)
	}
	if inARow(ma) != 0 || inARow(mb) != 0 {
		t.Fatal("cardsync_walks_inconsistent_in_a_row not created at 0")
	}
	run := func(j *simJob, consistent bool) {
		t.Helper()
		res, err := j.job.Run(t.Context(), worker.TriggerSchedule, worker.Options{})
		if err != nil || res.WalkConsistent != consistent {
			t.Fatalf("run: consistent %v, err %v; want consistent %v", res.WalkConsistent, err, consistent)
		}
	}
	run(a, true)
	a.sim.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultEmptyPage})
	b.sim.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultEmptyPage})
	run(a, false)
	run(b, false)
	a.obs.(worker.TickObserver).Tick(t.Context())
	for name, m := range map[string]*Metrics{"a": ma, "b": mb} {
		if got := mustValue(t, families(t, m), "cardsync_walks_inconsistent_total", "account=acme,reason=empty_page"); got != 1 {
			t.Errorf("%s's counter = %v, want 1 (its own walk)", name, got)
		}
		if got := inARow(m); got != 2 {
			t.Errorf("%s's in a row = %v, want 2 (the warehouse's)", name, got)
		}
		if code, body := get(t, m.Handler(), "/healthz"); code != 503 || !strings.Contains(body, "the last two walks were inconsistent") {
			t.Errorf("%s's /healthz = %d %q, want 503", name, code, body)
		}
	}
	b.sim.ClearFaults()
	run(b, true)
	a.obs.(worker.TickObserver).Tick(t.Context())
	if inARow(ma) != 0 || inARow(mb) != 0 {
		t.Errorf("in a row after a consistent walk = %v, %v; want 0, 0", inARow(ma), inARow(mb))
	}
}

// TestFencedRunFollowsTheWarehouse: replica a's run is fenced off (its
// result refused: the warehouse still has it running) while b takes the
// account over, marks a's run abandoned and succeeds. a does not count its
// run as failed (b counts it as abandoned, as sync_runs has it), and a's
// /healthz tells the warehouse's last run, b's success, not a's failure.
func TestFencedRunFollowsTheWarehouse(t *testing.T) {
	clk := sim.NewClock()
	path := filepath.Join(t.TempDir(), "w.db")
	open := func() *sqlite.Warehouse {
		w, err := sqlite.Open(t.Context(), path, load.Options{Account: "acme", Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		return w
	}
	wa, wb := open(), open()
	a, b := newReplicaView(clk, wa, nil), newReplicaView(clk, wb, nil)
	id, err := wa.StartRun(t.Context(), worker.TriggerSchedule, "test")
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	// a is paused; b takes over: the run a left is abandoned, b's succeeds.
	if _, err := wb.AbandonStaleRuns(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	b.obs.RunFinished(t.Context(), worker.Result{Trigger: worker.TriggerSchedule, Status: load.StatusSucceeded, Abandoned: []string{worker.TriggerSchedule}})
	recordRun(t, wb, load.StatusSucceeded)
	b.tick(t.Context())
	clk.Advance(6 * time.Second)
	// a wakes up: its run ends failed, its lease lost, its result refused.
	a.obs.RunFinished(t.Context(), worker.Result{RunID: id, Trigger: worker.TriggerSchedule, Status: load.StatusFailed})
	fams := families(t, a.m)
	for _, s := range []string{load.StatusFailed, load.StatusAbandoned} {
		if got := mustValue(t, fams, "cardsync_runs_total", "account=acme,status="+s+",trigger=schedule"); got != 0 {
			t.Errorf("a's runs_total{status=%s} = %v, want 0 (b counts the run abandoned)", s, got)
		}
	}
	if got := mustValue(t, families(t, b.m), "cardsync_runs_total", "account=acme,status=abandoned,trigger=schedule"); got != 1 {
		t.Errorf("b's runs_total{status=abandoned} = %v, want 1", got)
	}
	code, body := get(t, a.m.Handler(), "/healthz")
	if code != 200 || !strings.Contains(body, "the last run ended succeeded 6s ago") || strings.Contains(body, "failed") {
		t.Errorf("a's /healthz = %d %q; want 200, the warehouse's last run (b's success)", code, body)
	}
	if got := a.gauge(t, "cardsync_runs_failed_in_a_row"); got != 0 {
		t.Errorf("a's failed in a row = %v, want 0", got)
	}
	// A run the warehouse records as a's is counted as a saw it end.
	recordRun(t, wa, load.StatusFailed)
	runs, err := wa.Runs(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	a.obs.RunFinished(t.Context(), worker.Result{RunID: runs[0].ID, Trigger: worker.TriggerSchedule, Status: load.StatusFailed})
	if got := mustValue(t, families(t, a.m), "cardsync_runs_total", "account=acme,status=failed,trigger=schedule"); got != 1 {
		t.Errorf("a's runs_total{status=failed} after a recorded failure = %v, want 1", got)
	}
}

// TestLeaseTakenClearsUnreadWarehouse: after the warehouse comes back, a
// lease taken reads the facts at once, so /healthz stops saying the
// warehouse cannot be read before the next tick; a lease taken while reads
// work reads nothing.
func TestLeaseTakenClearsUnreadWarehouse(t *testing.T) {
	clk := sim.NewClock()
	good, broken := goodAndClosed(t, clk)
	sw := &switchable{w: good}
	r := newReplicaView(clk, sw, nil)
	recordRun(t, good, load.StatusSucceeded)
	r.tick(t.Context())
	sw.set(broken)
	r.tick(t.Context())
	clk.Advance(27 * time.Second)
	lo := r.obs.(worker.LeaseObserver)
	lo.LeaseHeld(false)
	if _, body := get(t, r.m.Handler(), "/healthz"); !strings.Contains(body, "could not be read for 27s") {
		t.Fatalf("/healthz while reads fail = %q, want the note", body)
	}
	sw.set(good)
	lo.LeaseHeld(true)
	if code, body := get(t, r.m.Handler(), "/healthz"); code != 200 || strings.Contains(body, "could not be read") {
		t.Errorf("/healthz after the lease was taken again = %d %q; want 200 without the note", code, body)
	}
	if got := r.gauge(t, "cardsync_lease_held"); got != 1 {
		t.Errorf("lease held = %v, want 1", got)
	}
}
