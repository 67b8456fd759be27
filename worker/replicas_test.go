package worker

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/sim"
)

// leaseRecorder is an Observer that records the optional hooks the daemon
// calls: ticks, lease states, losses and skipped runs.
type leaseRecorder struct {
	mu      sync.Mutex
	ticks   int
	runs    int
	held    []bool
	lost    int
	skipped map[string]int
}

func (r *leaseRecorder) RunFinished(context.Context, Result) { r.mu.Lock(); r.runs++; r.mu.Unlock() }
func (r *leaseRecorder) Tick(context.Context)                { r.mu.Lock(); r.ticks++; r.mu.Unlock() }
func (r *leaseRecorder) LeaseHeld(h bool)                    { r.mu.Lock(); r.held = append(r.held, h); r.mu.Unlock() }
func (r *leaseRecorder) LeaseLost()                          { r.mu.Lock(); r.lost++; r.mu.Unlock() }
func (r *leaseRecorder) RunSkipped(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.skipped == nil {
		r.skipped = map[string]int{}
	}
	r.skipped[reason]++
}

func (r *leaseRecorder) snapshot() (ticks, runs int, held []bool, lost int, skipped map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := map[string]int{}
	for k, v := range r.skipped {
		s[k] = v
	}
	return r.ticks, r.runs, append([]bool(nil), r.held...), r.lost, s
}

var (
	_ TickObserver  = (*leaseRecorder)(nil)
	_ LeaseObserver = (*leaseRecorder)(nil)
)

// replica is one daemon of a test cluster: its accounts' stores, jobs and
// recorders, and how to stop it.
type replica struct {
	holder string
	stores map[string]*Store
	recs   map[string]*leaseRecorder
	log    *syncBuffer
	stop   context.CancelFunc
	done   chan error
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startReplica runs a daemon for holder over accounts (each on its own
// simulator in sims) on the database url.
func startReplica(t *testing.T, url, holder string, accounts []string, sims map[string]*fixture, sched Schedule, ttl time.Duration, onStart bool) *replica {
	t.Helper()
	r := &replica{holder: holder, stores: map[string]*Store{}, recs: map[string]*leaseRecorder{}, log: &syncBuffer{}, done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", holder)
	var jobs []*Job
	for _, a := range accounts {
		st := pgStore(t, url, a, holder, ttl, false)
		r.stores[a], r.recs[a] = st, &leaseRecorder{}
		jobs = append(jobs, st.Job(sims[a].job.Client, log.With("account", a), JobOptions{Version: "test", Observer: r.recs[a]}))
	}
	ctx, cancel := context.WithCancel(t.Context())
	r.stop = cancel
	d := &Daemon{Jobs: jobs, Schedule: sched, RunOnStart: onStart, RunTimeout: time.Minute, Logger: log, StopTimeout: 10 * time.Second}
	go func() { r.done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// leaseHolders reads sync_leases: the live holder of each account.
func leaseHolders(t *testing.T, st *Store) map[string]load.Lease {
	t.Helper()
	leases, err := st.Warehouse.(*postgres.Warehouse).Leases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]load.Lease{}
	for _, l := range leases {
		if !l.Expired {
			out[l.Account] = l
		}
	}
	return out
}

// waitFor polls cond until it holds, failing the test after limit (a
// bound on a hang, not a timing assertion).
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func clusterSims(t *testing.T, accounts []string) map[string]*fixture {
	sims := map[string]*fixture{}
	for i, a := range accounts {
		sims[a] = newFixture(t, sim.Options{Cards: 20, Seed: int64(40 + i)})
	}
	return sims
}

// TestReplicasStickyAndSpread: two daemons sharing four accounts settle
// on two each, keep them (the leases are renewed between runs: the same
// fencing tokens run after run, every run recorded with its holder), tell
// their observers of every tick and skip, and hand every account over to
// the other at a clean stop.
func TestReplicasStickyAndSpread(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	accounts := []string{"a1", "a2", "a3", "a4"}
	sims := clusterSims(t, accounts)
	const ttl = 2 * time.Second
	r1 := startReplica(t, url, "r1", accounts, sims, every(200*time.Millisecond), ttl, true)
	r2 := startReplica(t, url, "r2", accounts, sims, every(200*time.Millisecond), ttl, true)
	st := r1.stores["a1"]
	count := func(l map[string]load.Lease, h string) (n int) {
		for _, x := range l {
			if x.Holder == h {
				n++
			}
		}
		return n
	}
	waitFor(t, 30*time.Second, "two accounts on each replica", func() bool {
		l := leaseHolders(t, st)
		return count(l, "r1") == 2 && count(l, "r2") == 2
	})
	settled := leaseHolders(t, st)
	pool := st.Warehouse.(*postgres.Warehouse).Pool()
	var last int64
	if err := pool.QueryRow(t.Context(), `SELECT coalesce(max(run_id), 0) FROM sync_runs`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	// Several runs of every account later (several TTLs), the leases have
	// not moved: same holders, same fencing tokens.
	waitFor(t, 60*time.Second, "five more runs of every account", func() bool {
		var n int
		err := pool.QueryRow(t.Context(), `SELECT count(*) FROM (SELECT account FROM sync_runs WHERE run_id > $1 AND status = 'succeeded'
			GROUP BY account HAVING count(*) >= 5) x`, last).Scan(&n)
		return err == nil && n == len(accounts)
	})
	now := leaseHolders(t, st)
	for _, a := range accounts {
		if now[a].Holder != settled[a].Holder || now[a].FencingToken != settled[a].FencingToken {
			t.Errorf("account %s moved: %+v then %+v", a, settled[a], now[a])
		}
		rows, err := pool.Query(t.Context(), `SELECT DISTINCT coalesce(holder, '') FROM sync_runs WHERE account = $1 AND run_id > $2`, a, last)
		if err != nil {
			t.Fatal(err)
		}
		var holders []string
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				t.Fatal(err)
			}
			holders = append(holders, h)
		}
		if len(holders) != 1 || holders[0] != settled[a].Holder {
			t.Errorf("account %s: runs by %v, want only %s", a, holders, settled[a].Holder)
		}
	}
	for _, r := range []*replica{r1, r2} {
		for _, a := range accounts {
			ticks, runs, held, _, skipped := r.recs[a].snapshot()
			mine := settled[a].Holder == r.holder
			if ticks == 0 || ticks < runs {
				t.Errorf("%s %s: %d ticks, %d runs: want a tick at every run and skip", r.holder, a, ticks, runs)
			}
			if mine && (len(held) == 0 || !held[len(held)-1] || runs == 0) {
				t.Errorf("%s %s: held %v, %d runs: want held and running", r.holder, a, held, runs)
			}
			if !mine && skipped[SkipLeaseHeld] == 0 {
				t.Errorf("%s %s: skipped %v: want lease_held skips", r.holder, a, skipped)
			}
		}
	}
	if strings.Contains(r1.log.String()+r2.log.String(), "level=INFO msg=\"run skipped") {
		t.Error("a skipped run was logged at info, want debug")
	}

	// A clean stop releases r1's leases: r2 takes all four.
	r1.stop()
	if err := <-r1.done; err != nil {
		t.Fatalf("r1 stop: %v", err)
	}
	r1.done <- nil // for the cleanup
	for _, a := range accounts {
		if _, _, held, _, _ := r1.recs[a].snapshot(); len(held) > 0 && held[len(held)-1] {
			t.Errorf("r1 %s: still held after the stop: %v", a, held)
		}
	}
	waitFor(t, 30*time.Second, "r2 holding every account", func() bool { return count(leaseHolders(t, st), "r2") == 4 })
	if !strings.Contains(r2.log.String(), "released by holder r1") {
		t.Errorf("r2's log does not say it took r1's released accounts:\n%s", r2.log.String())
	}
}

// TestReplicaTakesLapsedLeaseAtOnce: a replica that died holding an
// account (its lease and heartbeat left to lapse) is taken over at the
// watcher's next poll and the account run at once, though the schedule's
// next slot is an hour away; the take-over is logged as one.
func TestReplicaTakesLapsedLeaseAtOnce(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	sims := clusterSims(t, []string{"a1"})
	const ttl = 2 * time.Second
	dead := pgStore(t, url, "a1", "dead", ttl, true)
	if err := dead.Warehouse.(load.Replicas).ReplicaHeartbeat(t.Context(), "dead", "0000", ttl); err != nil {
		t.Fatal(err)
	}
	lapsed := time.Now().Add(ttl)
	r := startReplica(t, url, "alive", []string{"a1"}, sims, every(time.Hour), ttl, false)
	waitFor(t, 30*time.Second, "a run by the replica that took over", func() bool {
		_, runs, _, _, _ := r.recs["a1"].snapshot()
		return runs > 0
	})
	t.Logf("the lapsed lease's account ran %s after the lease lapsed (lease_ttl %s)", time.Since(lapsed).Round(time.Millisecond), ttl)
	if l := leaseHolders(t, dead)["a1"]; l.Holder != "alive" {
		t.Errorf("lease %+v, want held by alive", l)
	}
	if !strings.Contains(r.log.String(), "took over account a1 from holder dead whose lease lapsed at") {
		t.Errorf("the take-over is not logged as one:\n%s", r.log.String())
	}
	if _, _, held, _, _ := r.recs["a1"].snapshot(); len(held) == 0 || !held[0] {
		t.Errorf("LeaseHeld calls %v, want true", held)
	}
}

// TestDuplicateHolderRefused: a second daemon given the holder of a live
// one is refused at start, naming the holder and both instances, with an
// error that exits 4 (load.ErrLocked).
func TestDuplicateHolderRefused(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	sims := clusterSims(t, []string{"a1"})
	const ttl = 2 * time.Second
	first := startReplica(t, url, "same", []string{"a1"}, sims, every(time.Hour), ttl, false)
	waitFor(t, 30*time.Second, "the first replica holding a1", func() bool {
		_, _, held, _, _ := first.recs["a1"].snapshot()
		return len(held) > 0
	})
	second := startReplica(t, url, "same", []string{"a1"}, sims, every(time.Hour), ttl, false)
	var err error
	select {
	case err = <-second.done:
		second.done <- err
	case <-time.After(30 * time.Second):
		t.Fatal("the second replica with the same holder was not refused")
	}
	var in *load.HolderInUseError
	if !errors.As(err, &in) || !errors.Is(err, load.ErrLocked) {
		t.Fatalf("err = %v, want a *load.HolderInUseError wrapping ErrLocked", err)
	}
	msg := err.Error()
	for _, want := range []string{`holder "same"`, in.Instance, in.Other.Instance, "started"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
	if in.Instance == in.Other.Instance {
		t.Errorf("both instances %s", in.Instance)
	}
	if _, _, held, _, _ := second.recs["a1"].snapshot(); len(held) > 0 {
		t.Errorf("the refused replica took a lease: %v", held)
	}
}

// TestReplicasNeverOrphanAnAccount: a replica that alone lists an account
// in its [[accounts]] hands it back to spread the accounts, finds that no
// one took it within lease_ttl, and takes it back for good (handing back
// another instead): every account keeps a holder. The schedule is an hour
// away so no run keeps an account busy and the hand-backs are
// deterministic.
func TestReplicasNeverOrphanAnAccount(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	sims := clusterSims(t, []string{"a1", "a2"})
	const ttl = 2 * time.Second
	r1 := startReplica(t, url, "r1", []string{"a1", "a2"}, sims, every(time.Hour), ttl, false)
	st := r1.stores["a1"]
	waitFor(t, 30*time.Second, "r1 holding both accounts", func() bool {
		l := leaseHolders(t, st)
		return l["a1"].Holder == "r1" && l["a2"].Holder == "r1"
	})
	startReplica(t, url, "r2", []string{"a1"}, sims, every(time.Hour), ttl, false)
	waitFor(t, 60*time.Second, "a1 on r2 and a2 back on r1", func() bool {
		l := leaseHolders(t, st)
		return l["a1"].Holder == "r2" && l["a2"].Holder == "r1"
	})
	if !strings.Contains(r1.log.String(), "took account a2 beyond this replica's share") {
		t.Errorf("r1 does not say it took a2 beyond its share:\n%s", r1.log.String())
	}
	// Several polls later nothing moved: a2 is kept, a1 stays on r2.
	token := leaseHolders(t, st)["a2"].FencingToken
	waitFor(t, 30*time.Second, "a2's lease renewed twice", func() bool {
		l := leaseHolders(t, st)["a2"]
		return time.Since(l.AcquiredAt) > 2*ttl
	})
	if l := leaseHolders(t, st); l["a2"].Holder != "r1" || l["a2"].FencingToken != token || l["a1"].Holder != "r2" {
		t.Errorf("the accounts moved again: %+v", l)
	}
}

// TestHolderTakenWhilePausedStops: a replica that finds, at a heartbeat,
// another live process serving under its holder (it was paused past its
// heartbeat and one started since) stops with a *load.HolderInUseError
// and leaves the other's heartbeat alone.
func TestHolderTakenWhilePausedStops(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	sims := clusterSims(t, []string{"a1"})
	const ttl = 3 * time.Second
	r := startReplica(t, url, "same", []string{"a1"}, sims, every(time.Hour), ttl, false)
	waitFor(t, 30*time.Second, "the replica holding a1", func() bool {
		_, _, held, _, _ := r.recs["a1"].snapshot()
		return len(held) > 0
	})
	// What another process starting with this holder after the row
	// expired leaves: its own instance, live.
	pool := r.stores["a1"].Warehouse.(*postgres.Warehouse).Pool()
	if _, err := pool.Exec(t.Context(), `UPDATE sync_replicas SET instance = 'other0000', expires_at = now() + interval '1 hour' WHERE holder = 'same'`); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-r.done:
		r.done <- err
	case <-time.After(30 * time.Second):
		t.Fatal("the replica whose holder another process took did not stop")
	}
	var in *load.HolderInUseError
	if !errors.As(err, &in) || in.Other.Instance != "other0000" {
		t.Fatalf("err = %v, want a *load.HolderInUseError naming instance other0000", err)
	}
	var instance string
	if err := pool.QueryRow(t.Context(), `SELECT instance FROM sync_replicas WHERE holder = 'same'`).Scan(&instance); err != nil || instance != "other0000" {
		t.Errorf("the other process's heartbeat row: %q, %v", instance, err)
	}
	if !strings.Contains(r.log.String(), "this process stops") {
		t.Errorf("the stop is not logged:\n%s", r.log.String())
	}
}

// TestReplicaHandsBackAtTheEndOfARun: a replica over its share hands
// accounts back as their runs end, without waiting for a poll between runs
// (walks nearly as long as the schedule's interval leave gaps no poll may
// ever fall in): runs ending together stop at the share, and an account
// taken as an orphan is kept.
func TestReplicaHandsBackAtTheEndOfARun(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	accounts := []string{"a1", "a2", "a3", "a4"}
	sims := clusterSims(t, accounts)
	var jobs []*Job
	for _, a := range accounts {
		st := pgStore(t, url, a, "r1", time.Minute, false)
		jobs = append(jobs, st.Job(sims[a].job.Client, slog.New(slog.DiscardHandler), JobOptions{Version: "test"}))
	}
	log := &syncBuffer{}
	d := &Daemon{Jobs: jobs, Schedule: every(time.Hour), Logger: slog.New(slog.NewTextHandler(log, nil))}
	d.start()
	r := d.replicas
	if r == nil {
		t.Fatal("no replicas part on a PostgreSQL warehouse with leases")
	}
	for _, a := range d.accounts {
		if err := a.lease.AcquireContext(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	d.accounts[0].keep.Store(true) // an orphan taken beyond the share
	r.view = clusterView{total: 4, live: 4, share: 1, mine: 4, room: true}
	var wg sync.WaitGroup
	for _, a := range d.accounts {
		wg.Go(func() {
			a.busy.Lock()
			defer a.busy.Unlock()
			r.settle(t.Context(), a)
		})
	}
	wg.Wait()
	var held []string
	for _, a := range d.accounts {
		if a.lease.Held() {
			held = append(held, a.lease.wh.Account())
		}
	}
	if len(held) != 1 || held[0] != "a1" {
		t.Errorf("held after the runs ended: %v, want [a1] (the share, the kept orphan)", held)
	}
	if got := strings.Count(log.String(), "released account"); got != 3 {
		t.Errorf("%d hand-backs logged, want 3:\n%s", got, log.String())
	}
	// At the share, or with no other replica with room, nothing moves.
	r.view = clusterView{total: 4, live: 4, share: 1, mine: 1, room: true}
	r.settle(t.Context(), d.accounts[0])
	r.view = clusterView{total: 4, live: 2, share: 2, mine: 3, room: false}
	d.accounts[0].keep.Store(false)
	r.settle(t.Context(), d.accounts[0])
	if !d.accounts[0].lease.Held() {
		t.Error("a1 handed back at the share or with no room")
	}
	d.accounts[0].lease.Release()
}
