package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/worker"
)

const serveUsage = `
Usage: cardsync serve [flags]

Runs the daemon: syncs on the [schedule] cron (5 fields, or "@every 15m"),
in [schedule] timezone, never two runs at once, plus one run at start when
[schedule] run_on_start is true. Under systemd (Type=notify) it reports
READY=1, STATUS=, WATCHDOG=1 and STOPPING=1. SIGTERM or SIGINT stops the
scheduler, lets the page in hand commit, records the run as interrupted and
exits 0; a second signal exits at once.

Examples:
  cardsync serve -config /etc/cardsync/config.toml
  CARDSYNC_SCHEDULE_CRON='@every 5m' cardsync serve -config cardsync.toml
`

// stopTimeout bounds how long serve waits for a running sync after a
// signal; systemd's TimeoutStopSec in the shipped unit is 30s.
const stopTimeout = 20 * time.Second

func (m *Main) runServe(ctx context.Context, args []string) error {
	fs := m.newFlagSet("serve", serveUsage)
	var cf commonFlags
	cf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	s, err := m.settings(cf, true)
	if err != nil {
		return err
	}
	log := m.logger(s)
	notify := newNotifier(m.Getenv)
	client, err := newClient(s, log, nil)
	if err != nil {
		return err
	}
	// The lock's descriptor stays open for the daemon's life (closing it
	// earlier would drop SQLite's own locks on the file); each run takes
	// and releases the lock.
	lock, err := load.OpenLock(s.DBPath, s.FileMode)
	if err != nil {
		return fmt.Errorf("%w: %w", worker.ErrWarehouse, err)
	}
	defer lock.Close()
	// The daemon keeps the warehouse open between runs, so its WAL stays
	// in place and analysts with read-only access can always open it.
	wh, err := openWarehouse(ctx, s, log)
	if err != nil {
		return err
	}
	defer wh.Close()
	job := &worker.Job{
		Client:         client,
		Warehouse:      wh,
		Lock:           lock,
		Logger:         log,
		Version:        version(),
		AuditRetention: s.PageAuditRetention,
		Status:         func(st string) { _ = notify.Send("STATUS=" + st) },
	}
	runCtx, cancelRuns := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelRuns(nil)
	// running is held for the length of a run; stopping takes it to wait
	// for the run in progress and to keep new ones from starting.
	var running sync.Mutex
	closed := false
	runOnce := func() {
		running.Lock()
		defer running.Unlock()
		if closed || runCtx.Err() != nil {
			return
		}
		rctx, cancel := context.WithTimeoutCause(runCtx, s.RunTimeout, fmt.Errorf("run exceeded [schedule] run_timeout %s", s.RunTimeout))
		defer cancel()
		_ = notify.Send("STATUS=syncing")
		res, err := job.Run(rctx, worker.TriggerSchedule, worker.Options{})
		switch {
		case errors.Is(err, load.ErrLocked):
			log.Warn("scheduled run skipped: another sync holds the warehouse", "err", err)
			_ = notify.Send("STATUS=skipped: another sync holds the warehouse")
		case err != nil:
			_ = notify.Send(fmt.Sprintf("STATUS=last run %d %s", res.RunID, res.Status))
		default:
			_ = notify.Send(fmt.Sprintf("STATUS=last run %d succeeded at %s: %d cards", res.RunID, time.Now().UTC().Format(time.RFC3339), res.Cards))
		}
	}
	cl := cronLogger{log}
	c := cron.New(cron.WithLocation(s.Location), cron.WithLogger(cl))
	// Order matters: SkipIfStillRunning outermost, so a recovered panic
	// still releases its slot (robfig/cron v3.0.1). The same wrapped job
	// serves the schedule and run_on_start, so they never overlap.
	wrapped := cron.NewChain(cron.SkipIfStillRunning(cl), cron.Recover(cl)).Then(cron.FuncJob(runOnce))
	c.Schedule(s.Schedule, wrapped)
	c.Start()
	next := c.Entries()[0].Next
	log.Info("cardsync serving", "version", version(), "schedule", s.CronSpec, "timezone", s.Location.String(),
		"next_run", next.UTC().Format(time.RFC3339), "warehouse", s.DBPath, "api", s.BaseURL)
	if s.RunOnStart {
		go wrapped.Run()
	}
	_ = notify.Send("READY=1")
	_ = notify.Send("STATUS=idle; next run " + next.UTC().Format(time.RFC3339))
	if iv := notify.WatchdogInterval(); iv > 0 {
		go func() {
			t := time.NewTicker(iv)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					_ = notify.Send("WATCHDOG=1")
				}
			}
		}()
	}
	<-ctx.Done()
	log.Info("stopping", "cause", context.Cause(ctx))
	_ = notify.Send("STOPPING=1")
	stopped := c.Stop()
	cancelRuns(context.Cause(ctx))
	waitDone := make(chan struct{})
	go func() {
		running.Lock()
		closed = true
		running.Unlock()
		<-stopped.Done()
		close(waitDone)
	}()
	select {
	case <-waitDone:
		log.Info("stopped cleanly")
	case <-time.After(stopTimeout):
		log.Error("a run did not stop in time; exiting anyway", "timeout", stopTimeout)
		return fmt.Errorf("a run did not stop within %s; the next run marks it abandoned and resumes its walk", stopTimeout)
	}
	return nil
}

// cronLogger adapts slog to cron.Logger; cron's chatty info goes to debug.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }
func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append(kv, "err", err)...)
}
