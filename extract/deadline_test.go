package extract

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// TestRetriesEndAtTheContextDeadline: with a context deadline before
// api.max_wait (check's -timeout), the "retrying until" time, in the wait
// reason and the log, is the context's deadline, never api.max_wait's; and
// the retries give up by then (a *WaitError with Deadline, saying so),
// before the context itself ends. Without a deadline, max_wait bounds both
// as before.
func TestRetriesEndAtTheContextDeadline(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	until := regexp.MustCompile(`retrying until (\S+)\)`)
	for _, tt := range []struct {
		name     string
		deadline time.Duration // 0: none
		maxWait  time.Duration
	}{
		{"context deadline first", 3 * time.Second, 5 * time.Minute},
		{"max_wait first", time.Hour, 20 * time.Second},
		{"no deadline", 0, 20 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var reasons []string
			e := newEnv(t, sim.Options{Cards: 1}, func(c *Config) {
				c.BaseURL = closed
				c.MaxWait = tt.maxWait
				c.OnWait = func(reason string, _ time.Duration) { reasons = append(reasons, reason) }
			})
			ctx := t.Context()
			bound, byCtx := tt.maxWait, false
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
				if tt.deadline < tt.maxWait {
					bound, byCtx = tt.deadline, true
				}
			}
			start := e.clk.Now()
			_, err := e.c.Account(ctx)
			var we *WaitError
			if !errors.As(err, &we) || we.Unreachable != closed || we.Deadline != byCtx {
				t.Fatalf("err = %v, want a *WaitError (Deadline %v) naming the unreachable URL", err, byCtx)
			}
			if ctx.Err() != nil {
				t.Errorf("the retries ended with the context (%v), not before it", context.Cause(ctx))
			}
			limit := "api.max_wait"
			if byCtx {
				limit = "the command's deadline"
			}
			if !strings.Contains(err.Error(), "would pass "+limit) {
				t.Errorf("error %q does not name %s", err, limit)
			}
			if gaveUp := e.clk.Now(); gaveUp.After(start.Add(bound)) {
				t.Errorf("gave up %s after the start, past the bound %s", gaveUp.Sub(start), bound)
			}
			if len(reasons) == 0 {
				t.Fatal("no retry was announced")
			}
			for _, r := range append(reasons, e.log.String()) {
				for _, m := range until.FindAllStringSubmatch(r, -1) {
					promised, err := time.Parse(time.RFC3339, m[1])
					if err != nil {
						t.Fatalf("retrying until %q: %v", m[1], err)
					}
					// RFC 3339 to the second: within one second below the
					// bound, never past it.
					if promised.After(start.Add(bound)) || promised.Before(start.Add(bound).Add(-time.Second)) {
						t.Errorf("retrying until %s, want %s (the start plus %s)", promised, start.Add(bound).UTC(), bound)
					}
				}
			}
			if !strings.Contains(e.log.String(), "retrying_until=") {
				t.Errorf("the log has no retrying_until:\n%s", e.log.String())
			}
		})
	}
}

// TestHTTPSToPlainHTTPIsNotRetried: an https:// base URL whose port
// answers in plain HTTP gets that answer every time: the client gives up
// at the first attempt, with net/http's ErrSchemeMismatch, instead of
// retrying until api.max_wait.
func TestHTTPSToPlainHTTPIsNotRetried(t *testing.T) {
	var hits counter
	srv := httptest.NewServer(&hits)
	t.Cleanup(srv.Close)
	c, err := New(Config{BaseURL: strings.Replace(srv.URL, "http://", "https://", 1), Email: testEmail, Password: testPassword,
		Timeout: 5 * time.Second, MaxWait: time.Hour, Clock: sim.NewClock()})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Authenticate(t.Context())
	if !errors.Is(err, http.ErrSchemeMismatch) {
		t.Fatalf("Authenticate over https to a plain-HTTP port: %v, want ErrSchemeMismatch", err)
	}
	var we *WaitError
	if errors.As(err, &we) {
		t.Errorf("the client retried (%v): a plain-HTTP answer to https never changes", we)
	}
	if n := hits.n.Load(); n != 0 {
		t.Errorf("the handler saw %d requests; a TLS handshake cannot reach it", n)
	}
}
