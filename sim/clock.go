package sim

import (
	"context"
	"sync"
	"time"
)

// Clock is a settable clock for tests and experiments: the simulator
// (Options.Now), the API client (extract.Config.Clock) and the warehouse
// (load.Options.Now) can share one, so token expiry, rate-limit windows
// and pacing move together. Sleep advances it instead of waiting, so long
// waits cost no real time. The zero value starts at the zero time; use
// NewClock.
type Clock struct {
	mu    sync.Mutex
	t     time.Time
	slept time.Duration
}

// NewClock returns a Clock at a fixed instant (2026-03-01 12:00 UTC).
func NewClock() *Clock {
	return &Clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t (forward or back: a test writing history).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Sleep advances the clock by d at once (it fails only when ctx is done).
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		c.mu.Lock()
		c.t = c.t.Add(d)
		c.slept += d
		c.mu.Unlock()
	}
	return nil
}

// Slept is the total time Sleep advanced the clock.
func (c *Clock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}
