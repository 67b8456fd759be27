package worker

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
)

// simTransport serves requests with the simulator in memory: inside a
// synctest bubble a real httptest.Server would never let time advance.
type simTransport struct {
	srv *sim.Server
	mu  sync.Mutex
	// block, when set, makes /cards requests hang until it closes, deaf to
	// their context: a run stuck where no timeout reaches.
	block chan struct{}
	// delay makes each /cards request take this long (bubble time).
	delay time.Duration
}

func (s *simTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	block := s.block
	s.mu.Unlock()
	if block != nil && r.URL.Path == "/cards" {
		<-block
	}
	if s.delay > 0 && r.URL.Path == "/cards" {
		select {
		case <-time.After(s.delay):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	rec := httptest.NewRecorder()
	s.srv.ServeHTTP(rec, r)
	res := rec.Result()
	res.Request = r
	return res, nil
}

// bubbleJob builds a Job against an in-memory simulator, for synctest.
func bubbleJob(t *testing.T, tr *simTransport, log *slog.Logger) *Job {
	t.Helper()
	client, err := extract.New(extract.Config{
		BaseURL: "http://127.0.0.1:1", Email: sim.DefaultEmail, Password: sim.DefaultPassword,
		RateLimit: extract.Rate{N: 1000, Per: time.Second}, AuthRateLimit: extract.Rate{N: 100, Per: time.Second},
		Timeout: 5 * time.Second, MaxWait: 30 * time.Second, Transport: tr,
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.db")
	lock, err := sqlite.OpenLock(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := sqlite.Open(t.Context(), path, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close(); lock.Close() })
	return &Job{Client: client, Warehouse: wh, Lock: lock, Logger: log, Version: "test"}
}

// recorder collects log lines and sd_notify states.
type recorder struct {
	mu     sync.Mutex
	logs   strings.Builder
	states []string
}

func (r *recorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.Write(b)
}

func (r *recorder) notify(s string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, s)
	return nil
}

func (r *recorder) count(state string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.states {
		if s == state {
			n++
		}
	}
	return n
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.String()
}

func runs(t *testing.T, j *Job) []load.Run {
	t.Helper()
	rs, err := j.Warehouse.Runs(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestDaemonRunsOnSchedule: with a 15-minute schedule, an hour gives the
// start-up run and four scheduled ones, each starting on its slot, never
// two at once; SIGTERM (ctx) stops it cleanly.
func TestDaemonRunsOnSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		tr := &simTransport{srv: sim.New(sim.Options{Seed: 1, Cards: 30, Window: time.Second, Limit: 1000, AuthLimit: 100})}
		d := &Daemon{Jobs: []*Job{bubbleJob(t, tr, log)}, Schedule: every(15 * time.Minute), RunOnStart: true, RunTimeout: time.Hour,
			Logger: log, Notify: rec.notify}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- d.Run(ctx) }()
		time.Sleep(time.Hour + time.Minute)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		rs := runs(t, d.Jobs[0])
		if len(rs) != 5 {
			t.Fatalf("%d runs in an hour, want 5 (start-up + 4 scheduled)", len(rs))
		}
		for i, r := range rs {
			if r.Status != load.StatusSucceeded {
				t.Errorf("run %d: %s %s", r.ID, r.Status, r.Error)
			}
			if i < 4 && r.StartedAt.Sub(start).Truncate(time.Second)%(15*time.Minute) != 0 {
				t.Errorf("run %d started at +%v, not on a 15-minute slot", r.ID, r.StartedAt.Sub(start))
			}
		}
		if rec.count("READY=1") != 1 || rec.count("STOPPING=1") != 1 {
			t.Errorf("notify states %v: want READY=1 and STOPPING=1 once", rec.states)
		}
	})
}

// TestDaemonNeverOverlaps: runs slower than the schedule (8 seconds a run
// on a 5-second schedule) never overlap: each starts after the previous
// one ended, every one is a scheduled run that succeeded, and the token is
// reused across runs.
func TestDaemonNeverOverlaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		srv := sim.New(sim.Options{Seed: 9, Cards: 30, Window: time.Second, Limit: 1000, AuthLimit: 100})
		tr := &simTransport{srv: srv, delay: 4 * time.Second} // 2 pages
		d := &Daemon{Jobs: []*Job{bubbleJob(t, tr, log)}, Schedule: every(5 * time.Second), RunOnStart: true, RunTimeout: time.Hour,
			Logger: log, Notify: rec.notify}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		time.Sleep(time.Minute)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		var rs []load.Run
		for _, r := range runs(t, d.Jobs[0]) {
			if r.Status != load.StatusInterrupted { // the one the stop cut short
				rs = append(rs, r)
			}
		}
		if len(rs) < 4 {
			t.Fatalf("%d runs in a minute of 8-second runs, want at least 4", len(rs))
		}
		for i := len(rs) - 1; i >= 0; i-- { // oldest first
			r := rs[i]
			if r.Status != load.StatusSucceeded || r.Trigger != TriggerSchedule {
				t.Errorf("run %d: %s %s (trigger %s), want a succeeded scheduled run", r.ID, r.Status, r.Error, r.Trigger)
			}
			if i < len(rs)-1 {
				prev := rs[i+1]
				if prev.FinishedAt == nil || r.StartedAt.Before(*prev.FinishedAt) {
					t.Errorf("run %d started at %v, before run %d ended (%v)", r.ID, r.StartedAt, prev.ID, prev.FinishedAt)
				}
			}
		}
		if got := srv.Stats().TokenRequests; got != 1 {
			t.Errorf("token requests = %d, want 1: the daemon reuses its token across runs", got)
		}
	})
}

// TestDaemonReload: SIGHUP during a run is applied after it; a valid
// configuration takes over from the next run; an invalid one keeps the
// current configuration and says why.
func TestDaemonReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		tr := &simTransport{srv: sim.New(sim.Options{Seed: 2, Cards: 30, Window: time.Second, Limit: 1000, AuthLimit: 100})}
		hup := make(chan struct{}, 1)
		var reloads int
		fail := false
		d := &Daemon{Jobs: []*Job{bubbleJob(t, tr, log)}, Schedule: every(time.Hour), RunTimeout: time.Hour, Logger: log, Hup: hup,
			Reload: func(context.Context) (Config, error) {
				reloads++
				if fail {
					return Config{}, errors.New(`config: /etc/cardsync/config.toml:3: schedule.cron: invalid cron spec "61 * * * *"`)
				}
				return Config{Schedule: every(10 * time.Minute), Changes: "schedule.cron"}, nil
			}}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		synctest.Wait()
		hup <- struct{}{}
		synctest.Wait()
		if reloads != 1 || !strings.Contains(rec.text(), "configuration reloaded") {
			t.Fatalf("reloads %d, log:\n%s", reloads, rec.text())
		}
		time.Sleep(31 * time.Minute)
		synctest.Wait()
		if n := len(runs(t, d.Jobs[0])); n != 3 {
			t.Errorf("%d runs in 31 minutes after the reload to every 10 minutes, want 3", n)
		}
		fail = true
		hup <- struct{}{}
		synctest.Wait()
		if !strings.Contains(rec.text(), `"level":"ERROR","msg":"reload failed; the current configuration stays in use"`) {
			t.Errorf("no error line for the invalid configuration:\n%s", rec.text())
		}
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		if n := len(runs(t, d.Jobs[0])); n != 6 {
			t.Errorf("%d runs after a failed reload, want 6 (still every 10 minutes)", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestDaemonWatchdog: the watchdog is fed while idle and while a run makes
// progress, and stops being fed when a run hangs past what its request may
// take; stopping cancels the hung run, which is recorded interrupted.
func TestDaemonWatchdog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		tr := &simTransport{srv: sim.New(sim.Options{Seed: 3, Cards: 30, Window: time.Second, Limit: 1000, AuthLimit: 100})}
		d := &Daemon{Jobs: []*Job{bubbleJob(t, tr, log)}, Schedule: every(time.Hour), RunTimeout: 3 * time.Hour, Logger: log,
			Notify: rec.notify, Watchdog: time.Minute}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		time.Sleep(50 * time.Minute)
		synctest.Wait()
		idle := rec.count("WATCHDOG=1")
		if idle < 45 {
			t.Fatalf("%d watchdog pings in 50 idle minutes, want about 50", idle)
		}
		// The next run (minute 60) hangs on its first page: once the
		// client's bound on that request (max_wait 30s + timeout 5s) has
		// passed, the pings must stop.
		block := make(chan struct{})
		tr.mu.Lock()
		tr.block = block
		tr.mu.Unlock()
		time.Sleep(20 * time.Minute)
		synctest.Wait()
		hung := rec.count("WATCHDOG=1") - idle
		if hung < 9 || hung > 11 {
			t.Errorf("%d pings between minutes 50 and 70 with a run hung from minute 60, want about 10 (idle until 60, none after)", hung)
		}
		t.Logf("pings: %d idle, %d after", idle, hung)
		if !strings.Contains(rec.text(), "not feeding the watchdog") {
			t.Errorf("no line says the watchdog is starved:\n%s", rec.text())
		}
		close(block)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if rs := runs(t, d.Jobs[0]); len(rs) != 1 || rs[0].Status != load.StatusInterrupted {
			t.Errorf("runs %+v: want the hung run recorded interrupted", rs)
		}
	})
}

// TestDaemonStopDuringRun: a stop that arrives while a run is fetching
// lets the run end (recorded interrupted, not left running) and is said
// once: one "stopping" line, one STOPPING=1.
func TestDaemonStopDuringRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		block := make(chan struct{})
		tr := &simTransport{srv: sim.New(sim.Options{Seed: 1, Cards: 30, Window: time.Second, Limit: 1000, AuthLimit: 100}), block: block}
		d := &Daemon{Jobs: []*Job{bubbleJob(t, tr, log)}, Schedule: every(15 * time.Minute), RunOnStart: true, RunTimeout: time.Hour,
			Logger: log, Notify: rec.notify}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		synctest.Wait() // the start-up run waits on its first /cards request
		cancel()
		synctest.Wait()
		close(block)
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		rs := runs(t, d.Jobs[0])
		if len(rs) != 1 || rs[0].Status != load.StatusInterrupted {
			t.Fatalf("runs %+v, want one interrupted run", rs)
		}
		if n := strings.Count(rec.text(), `"msg":"stopping"`); n != 1 || rec.count("STOPPING=1") != 1 {
			t.Errorf("%d stopping lines and STOPPING=1 %d times, want once each:\n%s", n, rec.count("STOPPING=1"), rec.text())
		}
		if strings.Contains(rec.text(), "stopped cleanly") {
			t.Errorf("the daemon says \"stopped cleanly\"; its caller does, once:\n%s", rec.text())
		}
	})
}

// TestDaemonReloadKeepsPhase: reloads that leave the schedule alone, sent
// more often than it runs, never move or starve the runs; one that
// replaces it starts the new schedule from the reload.
func TestDaemonReloadKeepsPhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		tr := &simTransport{srv: sim.New(sim.Options{Seed: 2, Cards: 10, Window: time.Second, Limit: 1000, AuthLimit: 100})}
		hup := make(chan struct{}, 1)
		next := Config{Changes: "log.level"}
		d := &Daemon{Jobs: []*Job{bubbleJob(t, tr, log)}, Schedule: cron.Every(time.Minute), RunTimeout: time.Hour, Logger: log, Hup: hup,
			Reload: func(context.Context) (Config, error) { return next, nil }}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		// A reload every 40 s for 10 minutes: the runs stay on their
		// minute slots (10 of them), none is pushed past the next reload.
		for range 15 {
			time.Sleep(40 * time.Second)
			hup <- struct{}{}
			synctest.Wait()
		}
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if n := len(runs(t, d.Jobs[0])); n != 10 {
			t.Errorf("%d runs in 10 minutes of @every 1m with a reload every 40 s, want 10", n)
		}
		// A reload that replaces the schedule starts it from the reload.
		next = Config{Schedule: cron.Every(10 * time.Minute), Changes: "schedule.cron"}
		start := len(runs(t, d.Jobs[0]))
		hup <- struct{}{}
		synctest.Wait()
		time.Sleep(10*time.Minute - time.Second)
		synctest.Wait()
		if n := len(runs(t, d.Jobs[0])) - start; n != 0 {
			t.Errorf("%d runs within 10 minutes of a reload to @every 10m, want 0", n)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := len(runs(t, d.Jobs[0])) - start; n != 1 {
			t.Errorf("%d runs 10 minutes after a reload to @every 10m, want 1", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
