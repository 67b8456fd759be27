package extract

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Clock is the client's time source (Config.Clock): token expiry, pacing
// and backoff sleeps. Tests pass one that advances on Sleep (sim.Clock), so
// long waits cost no real time.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// safetyMargin stretches the pacing interval by 1%. With burst 1 at exactly
// N per window a fixed-window server can still see N+1 requests in one
// window when the first request of the window arrived late (connection
// setup, scheduling) and a later one early; 1% of the window (600 ms of a
// minute) absorbs that jitter and costs 1% of the budget.
const safetyMargin = 1.01

// pacer is a token bucket with burst 1 (x/time/rate driven by an explicit
// clock) plus a shared pause: after a 429 every caller waits until
// notBefore, and the rate drops to 80% (not below half), recovering after
// a full window's worth of clean requests.
type pacer struct {
	clk  Clock
	lim  *rate.Limiter
	full rate.Limit
	per  int // N of the configured rate: clean requests before a step up

	mu        sync.Mutex
	notBefore time.Time
	cur       rate.Limit
	clean     int
}

// Pacer is the pacing of data and token requests (Config.RateLimit and
// Config.AuthRateLimit) that several Clients share (Config.Pacer): the
// accounts of one rate_group, for an upstream that limits per IP or per
// user. A 429 seen by any of them slows them all. It is safe for
// concurrent use.
type Pacer struct {
	general, auth  *pacer
	rate, authRate Rate
}

// NewPacer returns a Pacer of rate data requests and authRate token
// requests (zero: DefaultRateLimit, DefaultAuthRateLimit) on clk (nil: the
// real clock).
func NewPacer(rate, authRate Rate, clk Clock) *Pacer {
	if clk == nil {
		clk = realClock{}
	}
	rate, authRate = cmp.Or(rate, DefaultRateLimit), cmp.Or(authRate, DefaultAuthRateLimit)
	return &Pacer{general: newPacer(rate, clk), auth: newPacer(authRate, clk), rate: rate, authRate: authRate}
}

func newPacer(r Rate, clk Clock) *pacer {
	interval := time.Duration(float64(r.interval()) * safetyMargin)
	lim := rate.Every(interval)
	return &pacer{clk: clk, lim: rate.NewLimiter(lim, 1), full: lim, cur: lim, per: r.N}
}

// errPastDeadline: the pacer would have to wait past the caller's deadline.
var errPastDeadline = errors.New("pacing would wait past the deadline")

// wait blocks until a request may be sent, or ctx ends.
func (p *pacer) wait(ctx context.Context) error {
	_, err := p.waitUntil(ctx, time.Time{})
	return err
}

// waitUntil is wait with a deadline (zero: none): when the request could
// only be sent after it, waitUntil returns errPastDeadline at once, with the
// wait it would have needed, instead of sleeping.
func (p *pacer) waitUntil(ctx context.Context, deadline time.Time) (time.Duration, error) {
	for {
		now := p.clk.Now()
		p.mu.Lock()
		nb := p.notBefore
		p.mu.Unlock()
		if now.Before(nb) {
			if !deadline.IsZero() && nb.After(deadline) {
				return nb.Sub(now), errPastDeadline
			}
			if err := p.clk.Sleep(ctx, nb.Sub(now)); err != nil {
				return 0, err
			}
			continue
		}
		r := p.lim.ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			if !deadline.IsZero() && now.Add(d).After(deadline) {
				r.CancelAt(now)
				return d, errPastDeadline
			}
			if err := p.clk.Sleep(ctx, d); err != nil {
				r.CancelAt(p.clk.Now())
				return 0, err
			}
		}
		p.mu.Lock()
		nb = p.notBefore
		p.mu.Unlock()
		if !p.clk.Now().Before(nb) {
			return 0, nil
		}
		// A 429 elsewhere paused everyone while we waited: wait again and
		// take a fresh token so the paused callers do not fire together.
	}
}

// pause makes every caller wait until t and slows the rate down.
func (p *pacer) pause(t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.After(p.notBefore) {
		p.notBefore = t
	}
	p.clean = 0
	slower := p.cur * 0.8
	if slower < p.full/2 {
		slower = p.full / 2
	}
	if slower != p.cur {
		p.cur = slower
		p.lim.SetLimitAt(p.clk.Now(), slower)
	}
}

// ok records a request that was not throttled; after a window's worth of
// them the rate steps back up towards the configured one.
func (p *pacer) ok() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == p.full {
		return
	}
	if p.clean++; p.clean < p.per {
		return
	}
	p.clean = 0
	faster := p.cur / 0.8
	if faster > p.full {
		faster = p.full
	}
	p.cur = faster
	p.lim.SetLimitAt(p.clk.Now(), faster)
}
