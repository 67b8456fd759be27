package extract

import (
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// TestPacingAtTheLimit walks 200 pages against the sim at exactly its
// limit on the fake clock (so the numbers are exact, not timing-dependent):
// zero 429s, never more than N in a window, and >= 98% of the allowed rate.
func TestPacingAtTheLimit(t *testing.T) {
	for _, sliding := range []bool{false, true} {
		name := "fixed window"
		if sliding {
			name = "sliding window"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, sim.Options{Cards: 200 * 15, Sliding: sliding}, nil)
			if err := e.c.Authenticate(t.Context()); err != nil {
				t.Fatal(err)
			}
			start := e.clk.Now()
			pages, err := walk(t, e.c, 1)
			if err != nil {
				t.Fatal(err)
			}
			elapsed := e.clk.Now().Sub(start)
			st := e.sim.Stats()
			if len(pages) != 200 || st.RateLimited != 0 || st.General.MaxInWindow > 180 {
				t.Errorf("pages %d, 429s %d, max in window %d; want 200, 0, <= 180", len(pages), st.RateLimited, st.General.MaxInWindow)
			}
			// n requests span n-1 intervals.
			ratio := float64(len(pages)-1) / elapsed.Minutes() / 180
			if ratio < 0.98 || ratio > 1 {
				t.Errorf("rate ratio %.4f (200 pages in %v), want 0.98..1", ratio, elapsed)
			}
			t.Logf("rate ratio %.4f, max in window %d", ratio, st.General.MaxInWindow)
		})
	}
}

// TestAuthPacing: token requests are paced on their own 10/1m budget.
func TestAuthPacing(t *testing.T) {
	e := newEnv(t, sim.Options{Cards: 10}, nil)
	for range 25 {
		e.sim.RevokeTokens()
		if _, err := e.c.Account(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	st := e.sim.Stats()
	if st.RateLimited != 0 || st.Auth.MaxInWindow > 10 || st.TokenRequests != 25 {
		t.Errorf("429s %d, max token requests in a window %d, token requests %d; want 0, <= 10, 25", st.RateLimited, st.Auth.MaxInWindow, st.TokenRequests)
	}
}

// TestPacerHonoursContext: a wait for the limiter ends with the context.
func TestPacerHonoursContext(t *testing.T) {
	p := newPacer(Rate{N: 1, Per: time.Hour}, realClock{})
	ctx := t.Context()
	if err := p.wait(ctx); err != nil {
		t.Fatal(err)
	}
	short, cancel := contextWithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := p.wait(short); err == nil {
		t.Fatal("second wait within the hour succeeded")
	}
}
