package worker

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/cardsync/cardsync/internal/english"
)

// inFlight is one scheduled run going on in a goroutine of its own, for the
// daemon's loops (one account's, or every account's).
type inFlight struct {
	done   chan struct{}
	res    Result
	err    error
	cancel context.CancelFunc
}

// startRun starts a scheduled run of job bounded by runTimeout. running is
// true until the run returns. A panic in the run is logged and becomes its
// error: the daemon goes on, and the next run marks the run abandoned.
func startRun(ctx context.Context, job *Job, log *slog.Logger, runTimeout time.Duration, running *atomic.Bool) *inFlight {
	rctx, cancel := context.WithTimeoutCause(ctx, runTimeout, fmt.Errorf("run exceeded [schedule] run_timeout %s", runTimeout))
	r := &inFlight{done: make(chan struct{}), cancel: cancel}
	running.Store(true)
	go func() {
		defer close(r.done)
		defer running.Store(false)
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("run panicked: %v", p)
				log.Error("run panicked; the daemon goes on and the next run marks it abandoned", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			}
		}()
		r.res, r.err = job.Run(rctx, TriggerSchedule, Options{})
	}()
	return r
}

// status is the systemd STATUS text of the finished run.
func (r *inFlight) status() string {
	switch {
	case r.err == nil:
		return fmt.Sprintf("last run %d succeeded at %s: %s", r.res.RunID, time.Now().UTC().Format(time.RFC3339), english.Count(r.res.Cards, "card"))
	case r.res.RunID == 0:
		return "last run could not start: " + r.err.Error()
	default:
		return fmt.Sprintf("last run %d %s", r.res.RunID, r.res.Status)
	}
}

// stop waits, once the daemon's context ended (which cancelled the run: it
// commits the page in hand and is recorded interrupted), at most
// stopTimeout for the run to return.
func (r *inFlight) stop(log *slog.Logger, stopTimeout time.Duration) error {
	t := time.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-r.done:
		return nil
	case <-t.C:
		log.Error("a run did not stop in time; exiting anyway", "timeout", stopTimeout)
		return fmt.Errorf("a run did not stop within %s; the next run marks it abandoned and resumes its walk", stopTimeout)
	}
}
