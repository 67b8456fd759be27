package worker

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
)

// TestStatusNextDueIsWhenTheDaemonRuns: with @every 40s and runs of 25 s,
// each run starts 40 s after the previous one ended (NextRun from its end),
// and Assess, given the runs up to one, says the next is due exactly when
// the daemon started it; FirstRun is the start-up run, or NextRun from the
// start without RunOnStart.
func TestStatusNextDueIsWhenTheDaemonRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := slog.New(slog.NewJSONHandler(&recorder{}, nil))
		srv := sim.New(sim.Options{Seed: 9, Cards: 30, Window: time.Second, Limit: 1000, AuthLimit: 100})
		tr := &simTransport{srv: srv, delay: 12500 * time.Millisecond} // 2 pages: 25 s a run
		sched := cron.Every(40 * time.Second)
		d := &Daemon{Jobs: []*Job{bubbleJob(t, tr, log)}, Schedule: sched, RunOnStart: true, RunTimeout: time.Hour, Logger: log}
		if now := time.Now(); !d.FirstRun(now).Equal(now) {
			t.Errorf("FirstRun with RunOnStart = %s, want now %s", d.FirstRun(now), now)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		time.Sleep(4 * time.Minute)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		rs := runs(t, d.Jobs[0]) // newest first
		if len(rs) < 3 {
			t.Fatalf("%d runs in 4 minutes, want at least 3", len(rs))
		}
		for i := len(rs) - 1; i > 0; i-- {
			prev, next := rs[i], rs[i-1]
			if prev.FinishedAt == nil || prev.FinishedAt.Sub(prev.StartedAt) < 20*time.Second {
				t.Fatalf("run %d: %s, finished %v: want a run of about 25 s", prev.ID, prev.Status, prev.FinishedAt)
			}
			if want := prev.FinishedAt.Add(40 * time.Second); !next.StartedAt.Equal(want) {
				t.Errorf("run %d started at %s, want 40 s after run %d ended (%s)", next.ID, next.StartedAt, prev.ID, want)
			}
			h := Assess(load.Summary{Runs: rs[i:], LastSuccessAt: prev.FinishedAt, LastSuccessRun: prev.ID}, sched, *prev.FinishedAt, 0, time.Hour, CommandLine{})
			if !h.NextDue.Equal(next.StartedAt) {
				t.Errorf("after run %d, status says the next run is due %s; the daemon started it at %s", prev.ID, h.NextDue, next.StartedAt)
			}
		}
		d.RunOnStart = false
		if now := time.Now(); !d.FirstRun(now).Equal(sched.Next(now)) {
			t.Errorf("FirstRun without RunOnStart = %s, want %s", d.FirstRun(now), sched.Next(now))
		}
	})
}

// TestEveryCountsFromTheEndOfTheRun pins what [schedule] cron's text in
// docs/configuration.md says (config/keytable.go), with the parser config
// uses (cron's standard one, descriptors included): "@every D" counts D from
// the end of the previous run, not from its start, rounded down to the
// whole second (a fraction of D is dropped, less than 1s is 1s); a cron runs
// at its first slot after the end; a skipped run counts as an end. With
// "@every 15m" and runs of 4m30s, serve started at 0 runs at 0, 19m30s, then,
// the run due at 39m skipped (another sync holds the warehouse), at 54m and
// 73m30s.
func TestEveryCountsFromTheEndOfTheRun(t *testing.T) {
	parse := func(t *testing.T, spec string) cron.Schedule {
		t.Helper()
		s, err := cron.ParseStandard(spec)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	at := func(h, m, s, ns int) time.Time { return time.Date(2026, 3, 1, h, m, s, ns, time.UTC) }
	for _, tt := range []struct {
		spec      string
		end, want time.Time
	}{
		{"@every 15m", at(10, 4, 30, 0), at(10, 19, 30, 0)},
		{"@every 15m", at(10, 4, 30, 700_000_000), at(10, 19, 30, 0)},
		{"@every 90.5s", at(10, 0, 0, 0), at(10, 1, 30, 0)},
		{"@every 500ms", at(10, 0, 0, 0), at(10, 0, 1, 0)},
		{"*/15 * * * *", at(10, 4, 30, 0), at(10, 15, 0, 0)},
		{"*/15 * * * *", at(10, 17, 0, 0), at(10, 30, 0, 0)}, // a run that overran its 10:15 slot
	} {
		if got := NextRun(parse(t, tt.spec), tt.end); !got.Equal(tt.want) {
			t.Errorf("%s: after a run that ended at %s, the next at %s, want %s", tt.spec,
				tt.end.Format("15:04:05.000"), got.Format("15:04:05.000"), tt.want.Format("15:04:05.000"))
		}
	}

	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		srv := sim.New(sim.Options{Seed: 9, Cards: 900, Window: time.Second, Limit: 1000, AuthLimit: 100})
		tr := &simTransport{srv: srv, delay: 4500 * time.Millisecond} // 60 pages: 4m30s a run
		job := bubbleJob(t, tr, log)
		d := &Daemon{Jobs: []*Job{job}, Schedule: parse(t, "@every 15m"), RunOnStart: true, RunTimeout: time.Hour, Logger: log}
		start := time.Now()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		time.Sleep(30 * time.Minute)
		other, err := sqlite.AcquireLock(job.Warehouse.(*sqlite.Warehouse).Path())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Minute)
		other.Close()
		time.Sleep(40 * time.Minute)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		var got []time.Duration
		rs := runs(t, job)
		for i := len(rs) - 1; i >= 0; i-- {
			r := rs[i]
			if r.Status != load.StatusSucceeded || r.FinishedAt == nil || r.FinishedAt.Sub(r.StartedAt) != 270*time.Second {
				t.Errorf("run %d: %s, %v to %v; want a succeeded run of 4m30s", r.ID, r.Status, r.StartedAt, r.FinishedAt)
			}
			got = append(got, r.StartedAt.Sub(start))
		}
		want := []time.Duration{0, 19*time.Minute + 30*time.Second, 54 * time.Minute, 73*time.Minute + 30*time.Second}
		if !slices.Equal(got, want) {
			t.Errorf("runs started at %v after serve's start, want %v", got, want)
		}
		if !strings.Contains(rec.text(), "run skipped: another sync holds the warehouse") {
			t.Errorf("no run was skipped while another sync held the warehouse:\n%s", rec.text())
		}
	})
}
