package worker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
)

// fakeLeaser is a lease table of one account, on the bubble's clock. Of
// a cluster it has the leases only (a replica's calls would panic).
type fakeLeaser struct {
	load.Cluster
	mu      sync.Mutex
	holder  string
	token   int64
	expires time.Time
	renews  []time.Time
	// down makes every renewal fail as an unreachable server would.
	down bool
}

func (f *fakeLeaser) Account() string { return "acme" }

func (f *fakeLeaser) AcquireLease(_ context.Context, account, holder string, ttl time.Duration) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if f.holder != holder && now.Before(f.expires) {
		return 0, &postgres.LeaseHeldError{Account: account, Holder: f.holder, ExpiresAt: f.expires}
	}
	if f.holder != holder || !now.Before(f.expires) {
		f.token++
	}
	f.holder, f.expires = holder, now.Add(ttl)
	return f.token, nil
}

func (f *fakeLeaser) RenewLease(_ context.Context, account, holder string, token int64, ttl time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return errors.New("connection refused")
	}
	now := time.Now()
	if f.holder != holder || f.token != token || !now.Before(f.expires) {
		return &postgres.LeaseLostError{Account: account, Holder: holder, Token: token}
	}
	f.expires = now.Add(ttl)
	f.renews = append(f.renews, now)
	return nil
}

func (f *fakeLeaser) ReleaseLease(_ context.Context, account, holder string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.holder == holder {
		f.expires = time.Now()
	}
	return nil
}

func TestLeaseLockKeep(t *testing.T) {
	const ttl = 60 * time.Second
	t.Run("renews every third of the TTL", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := &fakeLeaser{}
			l := NewLeaseLock(f, "a", ttl)
			if err := l.AcquireContext(t.Context()); err != nil {
				t.Fatal(err)
			}
			ctx, stop, _ := l.Keep(t.Context())
			time.Sleep(10 * ttl)
			synctest.Wait()
			if ctx.Err() != nil {
				t.Fatalf("kept context ended: %v", context.Cause(ctx))
			}
			stop()
			f.mu.Lock()
			n := len(f.renews)
			f.mu.Unlock()
			if n < 29 || n > 31 {
				t.Errorf("%d renewals in 10 TTLs, want about 30", n)
			}
			if err := (&LeaseLock{wh: f, holder: "b", ttl: ttl}).AcquireContext(t.Context()); !errors.Is(err, load.ErrLocked) {
				t.Errorf("another holder while kept: err %v, want ErrLocked", err)
			}
		})
	})
	t.Run("stops the run before the TTL when renewals fail", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := &fakeLeaser{down: true}
			l := NewLeaseLock(f, "a", ttl)
			if err := l.AcquireContext(t.Context()); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			ctx, stop, _ := l.Keep(t.Context())
			defer stop()
			<-ctx.Done()
			took := time.Since(start)
			if !errors.Is(context.Cause(ctx), ErrLeaseLost) {
				t.Errorf("cause %v, want ErrLeaseLost", context.Cause(ctx))
			}
			// Stopped within the TTL, leaving at least a margin.
			if took >= ttl || took < ttl/2 {
				t.Errorf("stopped after %s; want between TTL/2 and the TTL (%s)", took, ttl)
			}
		})
	})
	t.Run("stops at once when the lease changed hands", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := &fakeLeaser{}
			l := NewLeaseLock(f, "a", ttl)
			if err := l.AcquireContext(t.Context()); err != nil {
				t.Fatal(err)
			}
			ctx, stop, _ := l.Keep(t.Context())
			defer stop()
			// The lease lapses (the replica was cut off) and b takes it.
			f.mu.Lock()
			f.expires = time.Now()
			f.mu.Unlock()
			if err := (&LeaseLock{wh: f, holder: "b", ttl: ttl}).AcquireContext(t.Context()); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			<-ctx.Done()
			var lost *postgres.LeaseLostError
			if !errors.As(context.Cause(ctx), &lost) {
				t.Errorf("cause %v, want a refused renewal", context.Cause(ctx))
			}
			if took := time.Since(start); took > ttl/3 {
				t.Errorf("stopped %s after the take-over, want within a renewal period", took)
			}
		})
	})
}
