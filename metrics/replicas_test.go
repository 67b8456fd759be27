package metrics

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// runRecorder is the part of a warehouse a replica's run writes to
// sync_runs.
type runRecorder interface {
	Warehouse
	StartRun(ctx context.Context, trigger, version string) (int64, error)
	FinishRun(ctx context.Context, runID int64, r load.RunResult) error
}

// recordRun records one finished scheduled run of status in w, as a
// replica's run would.
func recordRun(t *testing.T, w runRecorder, status string) {
	t.Helper()
	id, err := w.StartRun(t.Context(), worker.TriggerSchedule, "test")
	if err != nil {
		t.Fatal(err)
	}
	res := load.RunResult{Status: status}
	if status != load.StatusSucceeded {
		res.Error = "upstream unavailable"
	}
	if err := w.FinishRun(t.Context(), id, res); err != nil {
		t.Fatal(err)
	}
}

// replicaView is one replica's metrics and its observer of account acme.
type replicaView struct {
	m   *Metrics
	obs worker.Observer
}

func newReplicaView(clk *sim.Clock, w Warehouse, log *slog.Logger) replicaView {
	m := New(Options{Accounts: []string{"acme"}, HealthyWithin: time.Hour, Now: clk.Now, Logger: log})
	return replicaView{m: m, obs: m.RunObserver("acme", w)}
}

func (r replicaView) tick(ctx context.Context) { r.obs.(worker.TickObserver).Tick(ctx) }

func (r replicaView) gauge(t *testing.T, name string) float64 {
	t.Helper()
	return mustValue(t, families(t, r.m), name, "account=acme")
}

// checkSharedHealth drives two replicas of one warehouse (wa, wb: each
// replica's own connection to it): the runs a records move b's gauges and
// /healthz at b's next tick, although b ran nothing.
func checkSharedHealth(t *testing.T, clk *sim.Clock, wa, wb runRecorder) {
	a, b := newReplicaView(clk, wa, nil), newReplicaView(clk, wb, nil)
	clk.Advance(2 * time.Hour)
	b.tick(t.Context())
	if code, body := get(t, b.m.Handler(), "/healthz"); code != 503 || !strings.Contains(body, "no successful run in the 2h0m0s since start-up") {
		t.Fatalf("b's /healthz before any run = %d %q, want 503, no success", code, body)
	}
	for range 3 {
		recordRun(t, wa, load.StatusFailed)
		a.obs.RunFinished(t.Context(), worker.Result{Trigger: worker.TriggerSchedule, Status: load.StatusFailed})
		a.tick(t.Context()) // the daemon ticks after the tick's run
	}
	b.tick(t.Context())
	if got := b.gauge(t, "cardsync_runs_failed_in_a_row"); got != 3 {
		t.Errorf("b's failed in a row after a's 3 failures = %v, want 3", got)
	}
	clk.Advance(time.Minute)
	recordRun(t, wa, load.StatusSucceeded)
	b.tick(t.Context())
	code, body := get(t, b.m.Handler(), "/healthz")
	if code != 200 || body != "ok: account acme ok: the last successful run ended 0s ago (healthy_within 1h0m0s); the last run ended succeeded 0s ago\n" {
		t.Errorf("b's /healthz after a's success = %d %q, want 200, the success 0s ago", code, body)
	}
	if got, want := b.gauge(t, "cardsync_last_success_timestamp_seconds"), float64(clk.Now().Unix()); got != want {
		t.Errorf("b's last success = %v, want a's %v", got, want)
	}
	if got := b.gauge(t, "cardsync_runs_failed_in_a_row"); got != 0 {
		t.Errorf("b's failed in a row after a's success = %v, want 0 (a gauge must not stay at 3 on a replica that did not run)", got)
	}
	if got := b.gauge(t, "cardsync_last_run_timestamp_seconds"); got != float64(clk.Now().Unix()) {
		t.Errorf("b's last run = %v, want a's", got)
	}
	// b's own failure is counted, then read back as the warehouse has it.
	clk.Advance(time.Minute)
	recordRun(t, wb, load.StatusFailed)
	b.obs.RunFinished(t.Context(), worker.Result{Trigger: worker.TriggerSchedule, Status: load.StatusFailed})
	b.tick(t.Context())
	a.tick(t.Context())
	for _, r := range []replicaView{a, b} {
		if got := r.gauge(t, "cardsync_runs_failed_in_a_row"); got != 1 {
			t.Errorf("failed in a row after b's failure = %v, want 1 on both replicas", got)
		}
	}
}

// TestTickReadsTheSharedWarehouse (SQLite): two processes' views of one
// warehouse file.
func TestTickReadsTheSharedWarehouse(t *testing.T) {
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
	checkSharedHealth(t, clk, open(), open())
}

// TestTickReadsTheSharedWarehousePostgres: two replicas of one PostgreSQL
// warehouse.
func TestTickReadsTheSharedWarehousePostgres(t *testing.T) {
	srv := pgServer(t)
	url := srv.NewDatabase(t)
	clk := sim.NewClock()
	open := func() *postgres.Warehouse {
		w, err := postgres.Open(t.Context(), url, postgres.Options{Common: load.Options{Account: "acme", Now: clk.Now}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		return w
	}
	checkSharedHealth(t, clk, open(), open())
}

// switchable is a real warehouse that can be swapped for another (a closed
// one), so a test can make reads fail and work again.
type switchable struct {
	mu sync.Mutex
	w  *sqlite.Warehouse
}

func (s *switchable) Summary(ctx context.Context) (load.Summary, error) {
	s.mu.Lock()
	w := s.w
	s.mu.Unlock()
	return w.Summary(ctx)
}

func (s *switchable) Runs(ctx context.Context, n int) ([]load.Run, error) {
	s.mu.Lock()
	w := s.w
	s.mu.Unlock()
	return w.Runs(ctx, n)
}

func (s *switchable) set(w *sqlite.Warehouse) { s.mu.Lock(); s.w = w; s.mu.Unlock() }

// TestTickKeepsTheLastFactsWhenTheWarehouseFails: a failing read leaves
// /healthz and the gauges as last read (never turning healthy by itself),
// says so, logs one warning, not one a tick, and the next good read
// clears it.
func TestTickKeepsTheLastFactsWhenTheWarehouseFails(t *testing.T) {
	clk := sim.NewClock()
	good, broken := goodAndClosed(t, clk)
	var logs bytes.Buffer
	sw := &switchable{w: good}
	r := newReplicaView(clk, sw, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	recordRun(t, good, load.StatusSucceeded)
	r.tick(t.Context())
	success := r.gauge(t, "cardsync_last_success_timestamp_seconds")

	sw.set(broken)
	clk.Advance(10 * time.Minute)
	for range 5 {
		r.tick(t.Context())
	}
	code, body := get(t, r.m.Handler(), "/healthz")
	if code != 200 || !strings.Contains(body, "the last successful run ended 10m0s ago") ||
		!strings.Contains(body, "the warehouse could not be read for 0s") {
		t.Errorf("/healthz while reads fail = %d %q; want 200 from the last facts, saying reads fail", code, body)
	}
	if got := r.gauge(t, "cardsync_last_success_timestamp_seconds"); got != success {
		t.Errorf("last success while reads fail = %v, want the last known %v", got, success)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings for 5 failing ticks, want 1:\n%s", n, logs.String())
	}
	clk.Advance(time.Hour)
	if code, body := get(t, r.m.Handler(), "/healthz"); code != 503 || !strings.Contains(body, "could not be read for 1h0m0s") {
		t.Errorf("/healthz an hour into failing reads = %d %q; want 503 (the last success is too old)", code, body)
	}

	sw.set(good)
	recordRun(t, good, load.StatusSucceeded)
	r.tick(t.Context())
	if code, body := get(t, r.m.Handler(), "/healthz"); code != 200 || strings.Contains(body, "could not be read") {
		t.Errorf("/healthz after reads work again = %d %q; want 200 without the note", code, body)
	}
	if !strings.Contains(logs.String(), "the warehouse can be read again") {
		t.Errorf("no line saying reads work again:\n%s", logs.String())
	}
}

// TestTickReadsTheSummaryOnlyWhenRunsChange: a tick lists the account's
// last runs (a small read) and reads the whole summary, whose counts grow
// with the cards, only when they changed: after a run of any replica.
func TestTickReadsTheSummaryOnlyWhenRunsChange(t *testing.T) {
	clk := sim.NewClock()
	path := filepath.Join(t.TempDir(), "w.db")
	var ws [2]*sqlite.Warehouse
	for i := range ws {
		w, err := sqlite.Open(t.Context(), path, load.Options{Account: "acme", Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		ws[i] = w
	}
	c := &countingWarehouse{w: ws[0]}
	r := newReplicaView(clk, c, nil)
	recordRun(t, ws[0], load.StatusSucceeded)
	r.obs.RunFinished(t.Context(), worker.Result{Trigger: worker.TriggerSchedule, Status: load.StatusSucceeded})
	for range 3 {
		r.tick(t.Context())
	}
	if c.summaries != 1 || c.lists != 3 {
		t.Errorf("a run and 3 quiet ticks read %d summaries and listed runs %d times, want 1 and 3", c.summaries, c.lists)
	}
	clk.Advance(time.Minute)
	recordRun(t, ws[1], load.StatusFailed) // another replica's run
	r.tick(t.Context())
	if c.summaries != 2 {
		t.Errorf("%d summaries after another replica's run and a tick, want 2", c.summaries)
	}
	if got := r.gauge(t, "cardsync_runs_failed_in_a_row"); got != 1 {
		t.Errorf("failed in a row = %v, want 1", got)
	}
	r.tick(t.Context())
	if c.summaries != 2 {
		t.Errorf("%d summaries after a quiet tick, want still 2", c.summaries)
	}
}

// countingWarehouse counts the reads of a real warehouse.
type countingWarehouse struct {
	w                *sqlite.Warehouse
	summaries, lists int
}

func (c *countingWarehouse) Summary(ctx context.Context) (load.Summary, error) {
	c.summaries++
	return c.w.Summary(ctx)
}

func (c *countingWarehouse) Runs(ctx context.Context, n int) ([]load.Run, error) {
	c.lists++
	return c.w.Runs(ctx, n)
}

// TestLeaseSeries: the lease series exist at 0 for every account and
// reason from start-up and follow what the lease code tells the observer.
func TestLeaseSeries(t *testing.T) {
	m := New(Options{Accounts: []string{"acme", "globex"}})
	fams := families(t, m)
	for _, a := range []string{"acme", "globex"} {
		for _, name := range []string{"cardsync_lease_held", "cardsync_leases_lost_total"} {
			if got := mustValue(t, fams, name, "account="+a); got != 0 {
				t.Errorf("%s{account=%s} = %v at start-up, want 0", name, a, got)
			}
		}
		for _, r := range []string{worker.SkipLeaseHeld, worker.SkipLocked, worker.SkipOverShare} {
			if got := mustValue(t, fams, "cardsync_runs_skipped_total", "account="+a+",reason="+r); got != 0 {
				t.Errorf("runs skipped {%s, %s} = %v at start-up, want 0", a, r, got)
			}
		}
	}
	l := m.RunObserver("acme", nil).(worker.LeaseObserver)
	l.LeaseHeld(true)
	l.RunSkipped(worker.SkipOverShare)
	l.RunSkipped(worker.SkipLeaseHeld)
	l.RunSkipped(worker.SkipLeaseHeld)
	l.RunSkipped("a reason from a newer build")
	l.LeaseLost()
	fams = families(t, m)
	for _, c := range []struct {
		name, labels string
		want         float64
	}{
		{"cardsync_lease_held", "account=acme", 1},
		{"cardsync_lease_held", "account=globex", 0},
		{"cardsync_runs_skipped_total", "account=acme,reason=lease_held", 2},
		{"cardsync_runs_skipped_total", "account=acme,reason=over_share", 1},
		{"cardsync_runs_skipped_total", "account=acme,reason=locked", 0},
		{"cardsync_runs_skipped_total", "account=acme,reason=other", 1},
		{"cardsync_leases_lost_total", "account=acme", 1},
	} {
		if got := mustValue(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	l.LeaseHeld(false)
	if got := mustValue(t, families(t, m), "cardsync_lease_held", "account=acme"); got != 0 {
		t.Errorf("lease held after release = %v, want 0", got)
	}
}

// goodAndClosed opens account acme of a new warehouse file twice: one
// open to read, one already closed, whose every read fails.
func goodAndClosed(t *testing.T, clk *sim.Clock) (good, closed *sqlite.Warehouse) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.db")
	good, err := sqlite.Open(t.Context(), path, load.Options{Account: "acme", Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { good.Close() })
	closed, err = sqlite.Open(t.Context(), path, load.Options{Account: "acme", Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	return good, closed
}
