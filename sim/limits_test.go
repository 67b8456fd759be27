package sim_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

const rateLimited = `{"message":"You have exceeded your rate limit.","status_code":429}`

func want429(t *testing.T, r reply, retryAfter string) {
	t.Helper()
	wantStatusBody(t, r, 429, rateLimited)
	if got := r.header.Get("Retry-After"); got != retryAfter {
		t.Errorf("Retry-After = %q, want %q", got, retryAfter)
	}
}

func TestGeneralLimitFixedWindow(t *testing.T) {
	// 180 per second: the spec's limit on a scaled window.
	e := start(t, sim.Options{Cards: 20, Window: time.Second})
	tok := e.token()
	for i := range 180 {
		path := "/account"
		if i%2 == 0 {
			path = "/cards"
		}
		if r := e.get(path, tok); r.status != 200 {
			t.Fatalf("request %d: status %d", i, r.status)
		}
	}
	want429(t, e.get("/cards", tok), "1")
	e.clock.Advance(999 * time.Millisecond)
	want429(t, e.get("/account", tok), "1")
	// The token endpoint has its own budget.
	if r := e.login(); r.status != 200 {
		t.Errorf("login during a general 429: status %d", r.status)
	}
	e.clock.Advance(time.Millisecond)
	wantStatusBody(t, e.get("/account", tok), 200, "")

	st := e.sim.Stats()
	if st.General.Accepted != 181 || st.General.Rejected != 2 || st.RateLimited != 2 {
		t.Errorf("general stats %+v, rate limited %d", st.General, st.RateLimited)
	}
	if st.General.MaxInWindow != 180 || st.General.MaxSeenInWindow != 182 {
		t.Errorf("MaxInWindow %d, MaxSeenInWindow %d; want 180, 182", st.General.MaxInWindow, st.General.MaxSeenInWindow)
	}
	if st.Auth.Accepted != 2 || st.TokenRequests != 2 || st.TokensIssued != 2 {
		t.Errorf("auth stats %+v, token requests %d, issued %d", st.Auth, st.TokenRequests, st.TokensIssued)
	}
}

func TestRetryAfterRoundsUp(t *testing.T) {
	e := start(t, sim.Options{Cards: 1, Limit: 1}) // default 1 minute window
	tok := e.token()
	wantStatusBody(t, e.get("/account", tok), 200, "")
	e.clock.Advance(500 * time.Millisecond)
	want429(t, e.get("/account", tok), "60")
	e.clock.Advance(58 * time.Second)
	want429(t, e.get("/account", tok), "2")
	e.clock.Advance(1400 * time.Millisecond)
	want429(t, e.get("/account", tok), "1")
}

func TestAuthLimit(t *testing.T) {
	e := start(t, sim.Options{Cards: 1, Window: time.Second})
	for i := range 10 {
		// Failed logins count too.
		body := `{"email":"ops@example.com","password":"wrong"}`
		if i%2 == 0 {
			body = `{"email":"ops@example.com","password":"s3cret"}`
		}
		if r := e.do(http.MethodPost, tokenPath, "", "application/json", body); r.status == 429 {
			t.Fatalf("login %d rate limited", i)
		}
	}
	want429(t, e.login(), "1")
	st := e.sim.Stats()
	if st.Auth.MaxInWindow != 10 || st.Auth.Rejected != 1 || st.General.Accepted != 0 || st.TokenRequests != 11 {
		t.Errorf("stats %+v", st)
	}
	e.clock.Advance(time.Second)
	wantStatusBody(t, e.login(), 200, "")
}

// TestWindowKinds runs the same schedule against a fixed and a sliding
// limiter of 3 per second: they differ right after the first window.
func TestWindowKinds(t *testing.T) {
	type step struct {
		at   time.Duration // since start
		want int
	}
	tests := []struct {
		name    string
		sliding bool
		steps   []step
		maxIn   int
	}{
		{"fixed", false, []step{
			{0, 200}, {400 * time.Millisecond, 200}, {800 * time.Millisecond, 200}, {900 * time.Millisecond, 429},
			{1000 * time.Millisecond, 200}, {1100 * time.Millisecond, 200}, {1200 * time.Millisecond, 200}, {1300 * time.Millisecond, 429},
		}, 5},
		{"sliding", true, []step{
			{0, 200}, {400 * time.Millisecond, 200}, {800 * time.Millisecond, 200}, {900 * time.Millisecond, 429},
			{1000 * time.Millisecond, 200}, {1100 * time.Millisecond, 429}, {1400 * time.Millisecond, 200}, {1500 * time.Millisecond, 429},
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := start(t, sim.Options{Cards: 1, Limit: 3, Window: time.Second, Sliding: tt.sliding})
			tok := e.token()
			t0 := e.clock.Now()
			for _, s := range tt.steps {
				e.clock.Advance(t0.Add(s.at).Sub(e.clock.Now()))
				r := e.get("/account", tok)
				if r.status != s.want {
					t.Errorf("at %v: status %d, want %d", s.at, r.status, s.want)
				}
				if r.status == 429 && r.header.Get("Retry-After") != "1" {
					t.Errorf("at %v: Retry-After %q", s.at, r.header.Get("Retry-After"))
				}
			}
			if got := e.sim.Stats().General.MaxInWindow; got != tt.maxIn {
				t.Errorf("MaxInWindow = %d, want %d", got, tt.maxIn)
			}
		})
	}
}
