package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cardsync/cardsync/load"
)

// ErrLeaseLost is wrapped by the error of a run stopped because its
// account's lease lapsed or changed hands (load.ErrLeaseLost): a
// commit refused by its fencing token, a renewal refused, or the
// replica's own clock saying the lease may have expired.
var ErrLeaseLost = load.ErrLeaseLost

var _ load.RunLock = (*LeaseLock)(nil)

// LeaseLock is the run lock (load.RunLock) of a shared PostgreSQL
// warehouse: its account's row of sync_leases in the warehouse's
// load.Cluster, taken for Holder for TTL by the server's clock, renewed
// every TTL/3 while a run goes on (Keep) and released at its end. While
// held, every write of the warehouse checks the lease's fencing token in
// its own transaction, so a replica paused past the TTL writes nothing
// once another took over. It holds no session-level lock, so it works
// through a transaction-pooling PgBouncer.
type LeaseLock struct {
	// wh is the cluster the lease lives in; the daemon's replicas use
	// the same one.
	wh     load.Cluster
	holder string
	ttl    time.Duration

	mu      sync.Mutex
	held    bool
	token   int64
	renewed time.Time // when the last successful take or renewal was sent (monotonic)
	// lost is why a lease held was lost, until TakeLost reads it.
	lost error
}

// leaseOpTimeout bounds one lease statement when no caller's context
// bounds it (Release, Close: a file lock's shape has none).
const leaseOpTimeout = 10 * time.Second

// NewLeaseLock returns the lease lock of wh's account for holder.
func NewLeaseLock(wh load.Cluster, holder string, ttl time.Duration) *LeaseLock {
	if ttl <= 0 {
		ttl = load.DefaultLeaseTTL
	}
	return &LeaseLock{wh: wh, holder: holder, ttl: ttl}
}

// Holder is the name the lease is taken under ([cluster] holder).
func (l *LeaseLock) Holder() string { return l.holder }

// TTL is how long the lease lasts without renewal ([cluster] lease_ttl).
func (l *LeaseLock) TTL() time.Duration { return l.ttl }

// Hold implements load.RunLock: AcquireContext.
func (l *LeaseLock) Hold(ctx context.Context) error { return l.AcquireContext(ctx) }

// AcquireContext takes the account's lease, or renews one this holder
// still has. A live lease of another holder is refused with an error
// wrapping load.ErrLocked and *load.LeaseHeldError.
func (l *LeaseLock) AcquireContext(ctx context.Context) error {
	sent := time.Now()
	token, err := l.wh.AcquireLease(ctx, l.wh.Account(), l.holder, l.ttl)
	if err != nil {
		if errors.Is(err, load.ErrLeaseHeld) {
			return fmt.Errorf("%w: %w", load.ErrLocked, err)
		}
		return err
	}
	l.mu.Lock()
	l.held, l.token, l.renewed = true, token, sent
	l.mu.Unlock()
	return nil
}

// Token is the fencing token of the lease held (0: none).
func (l *LeaseLock) Token() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		return 0
	}
	return l.token
}

// Release ends the lease now, so another replica may take the account at
// once.
func (l *LeaseLock) Release() error {
	l.mu.Lock()
	held := l.held
	l.held = false
	l.mu.Unlock()
	if !held {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaseOpTimeout)
	defer cancel()
	return l.wh.ReleaseLease(ctx, l.wh.Account(), l.holder)
}

// Held reports whether this lock took the lease and has not released it
// (it may have lapsed since: see Keep).
func (l *LeaseLock) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// Close releases the lease if held.
func (l *LeaseLock) Close() error { return l.Release() }

// Keep implements load.RunLock: it renews the lease every TTL/3 until the
// returned stop is called or ctx ends, and returns a context that is
// cancelled, with a cause wrapping ErrLeaseLost, as soon as the lease may
// have lapsed: a renewal was refused, or the last successful one was sent
// longer ago than the TTL minus a margin by this process's monotonic clock
// (a process resumed after SIGSTOP sees that before it fetches another
// page). It never fails.
func (l *LeaseLock) Keep(ctx context.Context) (context.Context, func(), error) {
	kctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.keep(kctx, done, cancel)
	}()
	var once sync.Once
	return kctx, func() {
		once.Do(func() { close(done) })
		wg.Wait()
		cancel(nil)
	}, nil
}

// Check implements load.RunLock: an error wrapping ErrLeaseLost when, by
// this process's monotonic clock, the lease may have lapsed. The walk
// calls it before each page and the client before each request, so a
// replica resumed after SIGSTOP fetches nothing more even before Keep's
// goroutine wakes.
func (l *LeaseLock) Check() error {
	l.mu.Lock()
	held, last := l.held, l.renewed
	l.mu.Unlock()
	if !held {
		return fmt.Errorf("%w: account %s: no lease taken by %s", ErrLeaseLost, l.wh.Account(), l.holder)
	}
	if age := time.Since(last); age > l.ttl-l.leaseMargin() {
		return fmt.Errorf("%w: account %s: the last renewal by %s was sent %s ago and lease_ttl is %s; stopping before the next page",
			ErrLeaseLost, l.wh.Account(), l.holder, age.Round(time.Millisecond), l.ttl)
	}
	return nil
}

// leaseMargin is how long before the TTL a replica considers its lease
// possibly lost: the time a commit in flight may still take to reach the
// server, and clock rate differences.
func (l *LeaseLock) leaseMargin() time.Duration { return l.ttl / 4 }

func (l *LeaseLock) keep(ctx context.Context, done <-chan struct{}, cancel context.CancelCauseFunc) {
	every := l.ttl / 3
	tick := time.NewTicker(max(l.ttl/12, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-tick.C:
		}
		l.mu.Lock()
		last := l.renewed
		l.mu.Unlock()
		if err := l.Check(); err != nil {
			l.markLost(err)
			cancel(err)
			return
		}
		if time.Since(last) < every {
			continue
		}
		rctx, rcancel := context.WithTimeout(ctx, every)
		err := l.Renew(rctx)
		rcancel()
		if errors.Is(err, ErrLeaseLost) {
			cancel(fmt.Errorf("renew: %w", err))
			return
		}
		// Any other failure (the server unreachable for a moment) is
		// retried at the next tick until the TTL says stop.
	}
}

// markLost records that the lease held was lost (err says how): it is no
// longer held, and TakeLost returns err once.
func (l *LeaseLock) markLost(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		l.held, l.lost = false, err
	}
}

// TakeLost returns, once, why the lease this lock held was lost since the
// last call (nil: not lost).
func (l *LeaseLock) TakeLost() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.lost
	l.lost = nil
	return err
}

// RenewDue reports whether the lease is held and its last renewal is a
// third of the TTL old: between runs, the daemon renews it then (Renew),
// so the account stays with this replica.
func (l *LeaseLock) RenewDue() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held && time.Since(l.renewed) >= l.ttl/3
}

// Renew renews the lease held now (between runs: during a run Keep does).
// A lease that may have lapsed by this process's clock, or that the
// warehouse no longer holds for it, is marked lost and the error wraps
// ErrLeaseLost; any other failure (the server unreachable for a moment)
// leaves it held, for the next try.
func (l *LeaseLock) Renew(ctx context.Context) error {
	if err := l.Check(); err != nil {
		l.markLost(err)
		return err
	}
	l.mu.Lock()
	token := l.token
	l.mu.Unlock()
	sent := time.Now()
	err := l.wh.RenewLease(ctx, l.wh.Account(), l.holder, token, l.ttl)
	switch {
	case err == nil:
		l.mu.Lock()
		if l.token == token {
			l.renewed = sent
		}
		l.mu.Unlock()
	case errors.Is(err, ErrLeaseLost):
		l.markLost(err)
	}
	return err
}
