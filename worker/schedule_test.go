package worker

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/cardsync/cardsync/load"
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
			h := Assess(load.Summary{Runs: rs[i:], LastSuccessAt: prev.FinishedAt, LastSuccessRun: prev.ID}, sched, *prev.FinishedAt, 0, time.Hour)
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
