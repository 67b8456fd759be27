package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cardsync/cardsync/load"
)

// LockPoll is how often WaitLock tries the writer lock again while a sync
// holds it.
const LockPoll = 250 * time.Millisecond

// LockReportEvery is how often WaitLock tells its caller that it is still
// waiting (besides when it starts waiting and when the holder changes).
const LockReportEvery = time.Minute

// LockWaitError is WaitLock's error when the writer lock was still held
// after the wait it was given: errors.Is(err, load.ErrLocked), with the
// last holder seen.
type LockWaitError struct {
	// Waited is how long WaitLock waited.
	Waited time.Duration
	// Held is the last refusal, naming the holder.
	Held *load.LockedError
}

// Error implements error.
func (e *LockWaitError) Error() string {
	return fmt.Sprintf("still held after waiting %s: %v", e.Waited.Round(time.Second), e.Held)
}

// Unwrap returns the last refusal: errors.Is(err, load.ErrLocked) is true.
func (e *LockWaitError) Unwrap() error { return e.Held }

// WaitLock takes the whole file's writer lock of the warehouse at path
// (AcquireLock), waiting up to wait for the process that holds it (a run
// of serve or backfill, whose account locks share the file's lock, a check,
// another restore) to let it go. It tries again every LockPoll, so it takes
// the lock at the first moment no run holds it; a run due meanwhile then
// meets the held lock and is skipped. With wait 0 it does not wait: the
// *load.LockedError comes at once.
//
// waiting, when set, is called when it starts waiting, every
// LockReportEvery while it waits and when another process (of a known PID)
// holds the lock,
// with the refusal (the holder) and how long it has waited so far. When
// wait runs out, the error is a *LockWaitError (errors.Is load.ErrLocked);
// when ctx ends first, it wraps ctx.Err(). Either way no lock is held.
func WaitLock(ctx context.Context, path string, wait time.Duration, waiting func(held *load.LockedError, waited time.Duration)) (_ *Lock, err error) {
	defer classify(&err)
	l, err := OpenLock(path, 0)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var deadline <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		deadline = t.C
	}
	poll := time.NewTicker(LockPoll)
	defer poll.Stop()
	var reported time.Time
	lastPID := 0 // the last holder known (0: none reported yet)
	for {
		err := l.Acquire()
		var held *load.LockedError
		switch {
		case err == nil:
			return l, nil
		case !errors.As(err, &held) || wait <= 0:
			l.f.Close()
			return nil, err
		}
		// A holder whose PID is unknown (0: it may be letting go right
		// now) is no change of holder.
		now := time.Now()
		changed := held.PID > 0 && lastPID > 0 && held.PID != lastPID
		if waiting != nil && (reported.IsZero() || changed || now.Sub(reported) >= LockReportEvery) {
			waiting(held, now.Sub(start))
			reported = now
		}
		if held.PID > 0 {
			lastPID = held.PID
		}
		select {
		case <-ctx.Done():
			l.f.Close()
			return nil, fmt.Errorf("waiting for the writer lock (%v): %w", held, ctx.Err())
		case <-deadline:
			// One last try: the holder may have just let go.
			err := l.Acquire()
			if err == nil {
				return l, nil
			}
			l.f.Close()
			if !errors.As(err, &held) {
				return nil, err
			}
			return nil, &LockWaitError{Waited: time.Since(start), Held: held}
		case <-poll.C:
		}
	}
}
