package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestWaitLock: WaitLock on a warehouse whose lock a run holds (an
// account's lock, as serve's runs take it, or the whole file's) waits for
// it: it takes the lock as soon as the run lets go; it gives up after the
// wait given, with a *LockWaitError that is load.ErrLocked and names the
// holder; ctx ends the wait with ctx's error, not ErrLocked (an
// interruption, not a refusal); without a wait the refusal comes at once.
// It reports when it starts waiting, then once a minute. Whatever ends the
// wait, the holder keeps its lock and WaitLock holds none.
func TestWaitLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warehouse.db")
	for name, hold := range lockHolders(path) {
		t.Run(name+": taken when the run ends", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { waitLockTaken(t, path, hold) })
		})
		t.Run(name+": gives up", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { waitLockGivesUp(t, path, hold) })
		})
		t.Run(name+": interrupted", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { waitLockInterrupted(t, path, hold) })
		})
		t.Run(name+": no wait", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { waitLockNoWait(t, path, hold) })
		})
	}
	t.Run("free lock", func(t *testing.T) {
		l, err := WaitLock(t.Context(), path, time.Hour, func(*load.LockedError, time.Duration) {
			t.Error("reported waiting for a free lock")
		})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if !l.Held() {
			t.Error("not held")
		}
	})
}

// lockHolders are the two ways a run holds the lock of the warehouse at
// path, by name: an account's lock (as serve's runs take it) and the whole
// file's.
func lockHolders(path string) map[string]func(t *testing.T) *Lock {
	return map[string]func(t *testing.T) *Lock{
		"account lock": func(t *testing.T) *Lock {
			l, err := OpenAccountLock(path, 0, load.DefaultAccount)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Acquire(); err != nil {
				t.Fatal(err)
			}
			return l
		},
		"file lock": func(t *testing.T) *Lock {
			l, err := AcquireLock(path)
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
	}
}

// lockFree says whether the lock of the warehouse at path is free now
// (taking and dropping it).
func lockFree(t *testing.T, path string) bool {
	t.Helper()
	l, err := AcquireLock(path)
	if errors.Is(err, load.ErrLocked) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	return true
}

// waitLockTaken: WaitLock takes the lock as soon as the run (hold) lets go
// at 100s, having reported waiting at the start and after a minute.
func waitLockTaken(t *testing.T, path string, hold func(t *testing.T) *Lock) {
	run := hold(t)
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(100 * time.Second)
		run.Release()
	}()
	start := time.Now()
	var reports []time.Duration
	l, err := WaitLock(t.Context(), path, time.Hour, func(held *load.LockedError, waited time.Duration) {
		if waited == 0 && held.PID != os.Getpid() {
			t.Errorf("the holder is pid %d, want this process's %d", held.PID, os.Getpid())
		}
		reports = append(reports, waited)
	})
	if err != nil {
		t.Fatalf("WaitLock: %v", err)
	}
	defer l.Close()
	if took := time.Since(start); took < 100*time.Second || took > 100*time.Second+LockPoll {
		t.Errorf("took the lock after %s, want right after the run let go at 100s", took)
	}
	if want := []time.Duration{0, time.Minute}; !slices.Equal(reports, want) {
		t.Errorf("reported waiting at %v, want %v", reports, want)
	}
	if !l.Held() || lockFree(t, path) {
		t.Error("WaitLock returned a lock it does not hold")
	}
	l.Close()
	// The OS lock orders the two goroutines; the race detector
	// needs a Go one before run is touched again.
	<-released
	run.Close()
}

// waitLockGivesUp: WaitLock gives up after the wait given with a
// *LockWaitError that is load.ErrLocked and names the holder.
func waitLockGivesUp(t *testing.T, path string, hold func(t *testing.T) *Lock) {
	run := hold(t)
	defer run.Close()
	start := time.Now()
	var reports []time.Duration
	_, err := WaitLock(t.Context(), path, 150*time.Second, func(_ *load.LockedError, waited time.Duration) {
		reports = append(reports, waited)
	})
	var we *LockWaitError
	if !errors.As(err, &we) || !errors.Is(err, load.ErrLocked) || we.Held == nil || we.Held.PID != os.Getpid() {
		t.Fatalf("WaitLock on a lock held throughout: %v, want a LockWaitError naming pid %d", err, os.Getpid())
	}
	if we.Waited != 150*time.Second || time.Since(start) != 150*time.Second {
		t.Errorf("gave up after %s (returned %s), want 150s", time.Since(start), we.Waited)
	}
	if want := []time.Duration{0, time.Minute, 2 * time.Minute}; !slices.Equal(reports, want) {
		t.Errorf("reported waiting at %v, want %v", reports, want)
	}
	if !run.Held() || lockFree(t, path) {
		t.Error("the run lost its lock")
	}
}

// waitLockInterrupted: ctx ends the wait with ctx's error, not ErrLocked.
func waitLockInterrupted(t *testing.T, path string, hold func(t *testing.T) *Lock) {
	run := hold(t)
	defer run.Close()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		time.Sleep(30 * time.Second)
		cancel()
	}()
	_, err := WaitLock(ctx, path, time.Hour, nil)
	if !errors.Is(err, context.Canceled) || errors.Is(err, load.ErrLocked) {
		t.Fatalf("WaitLock interrupted: %v, want context.Canceled and not ErrLocked", err)
	}
	if !run.Held() || lockFree(t, path) {
		t.Error("the run lost its lock")
	}
}

// waitLockNoWait: without a wait the refusal comes at once, unreported.
func waitLockNoWait(t *testing.T, path string, hold func(t *testing.T) *Lock) {
	run := hold(t)
	defer run.Close()
	start := time.Now()
	reported := false
	_, err := WaitLock(t.Context(), path, 0, func(*load.LockedError, time.Duration) { reported = true })
	var le *load.LockedError
	var we *LockWaitError
	if !errors.As(err, &le) || errors.As(err, &we) || le.PID != os.Getpid() {
		t.Fatalf("WaitLock without a wait: %v, want the LockedError naming pid %d", err, os.Getpid())
	}
	if time.Since(start) != 0 || reported {
		t.Errorf("waited %s, reported %v: want neither", time.Since(start), reported)
	}
}
