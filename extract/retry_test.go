package extract

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/sim"
)

func TestTransientFaultsAreRetried(t *testing.T) {
	tests := []struct {
		name      string
		fault     sim.Fault
		cfg       func(*Config)
		minSlept  time.Duration // fake-clock backoff at least this
		wantRetry int64
		wantRL    int64
	}{
		{"503 with Retry-After", sim.Fault{Kind: sim.FaultStatus, Status: 503, RetryAfter: 20 * time.Second, Times: 2}, nil, 40 * time.Second, 2, 0},
		{"500 without Retry-After", sim.Fault{Kind: sim.FaultStatus, Status: 500, Times: 2}, nil, time.Second, 2, 0},
		{"HTML 502", sim.Fault{Kind: sim.FaultHTML, Times: 2}, nil, time.Second, 2, 0},
		{"HTML 503 with Retry-After", sim.Fault{Kind: sim.FaultHTML, Status: 503, RetryAfter: 7 * time.Second, Times: 1}, nil, 7 * time.Second, 1, 0},
		// net/http itself retries a GET once when a reused connection is
		// reset before any response byte, hence -1: at least one retry.
		{"connection reset", sim.Fault{Kind: sim.FaultReset, Times: 2}, nil, time.Second, -1, 0},
		{"truncated body", sim.Fault{Kind: sim.FaultTruncate, Times: 2}, nil, time.Second, 2, 0},
		{"429 with Retry-After", sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 30 * time.Second, Times: 2}, nil, 60 * time.Second, 2, 2},
		{"429 without Retry-After", sim.Fault{Kind: sim.FaultRateLimit, Times: 3}, nil, 2 * time.Second, 3, 3},
		{"latency within timeout", sim.Fault{Kind: sim.FaultLatency, Latency: 50 * time.Millisecond, Times: 2}, nil, 0, 0, 0},
		{"trickle beyond timeout", sim.Fault{Kind: sim.FaultTrickle, Latency: 100 * time.Millisecond, Chunk: 64, Times: 1},
			func(c *Config) { c.Timeout = 250 * time.Millisecond }, time.Second, 1, 0},
		{"latency beyond timeout", sim.Fault{Kind: sim.FaultLatency, Latency: 2 * time.Second, Times: 1},
			func(c *Config) { c.Timeout = 200 * time.Millisecond }, time.Second, 1, 0},
	}
	for _, tt := range tests {
		for _, ep := range []string{"cards", "account", "token"} {
			t.Run(tt.name+"/"+ep, func(t *testing.T) {
				f := tt.fault
				f.Endpoint = ep
				if ep == "cards" {
					f.Pages = []int{2}
				}
				e := newEnv(t, sim.Options{Cards: 40, Faults: []sim.Fault{f}}, tt.cfg)
				if _, err := e.c.Account(t.Context()); err != nil {
					t.Fatalf("Account: %v", err)
				}
				pages, err := walk(t, e.c, 1)
				if err != nil {
					t.Fatalf("walk: %v", err)
				}
				if len(pages) != 3 {
					t.Errorf("pages = %d, want 3", len(pages))
				}
				st := e.c.Stats()
				if tt.wantRetry < 0 && st.Retries > 0 && st.RateLimited == 0 {
					// ok
				} else if st.Retries != tt.wantRetry || st.RateLimited != tt.wantRL {
					t.Errorf("retries %d, rate limited %d; want %d and %d", st.Retries, st.RateLimited, tt.wantRetry, tt.wantRL)
				}
				if got := e.clk.Slept(); got < tt.minSlept {
					t.Errorf("waited %v on the clock, want at least %v", got, tt.minSlept)
				}
				// A truncated or trickled token reply was issued but never
				// received: only pre-response faults keep it at one.
				if ep == "token" && f.Kind != sim.FaultTruncate && f.Kind != sim.FaultTrickle && e.sim.Stats().TokensIssued != 1 {
					t.Errorf("tokens issued = %d, want 1", e.sim.Stats().TokensIssued)
				}
			})
		}
	}
}

func TestRetryCapEndsInWaitError(t *testing.T) {
	tests := []struct {
		name     string
		fault    sim.Fault
		wantAs   func(error) bool
		attempts int // 0 = don't check
	}{
		{"503 forever", sim.Fault{Kind: sim.FaultStatus, Status: 503}, isStatus(503), 0},
		{"HTML 502 forever", sim.Fault{Kind: sim.FaultHTML}, func(err error) bool { var pe *ProtocolError; return errors.As(err, &pe) && pe.Transient }, 0},
		{"429 storm", sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 50 * time.Second}, isStatus(429), 3},
		{"reset forever", sim.Fault{Kind: sim.FaultReset}, func(error) bool { return true }, 0},
		{"Retry-After beyond the cap", sim.Fault{Kind: sim.FaultStatus, Status: 503, RetryAfter: time.Hour}, isStatus(503), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fault
			f.Endpoint = "cards"
			e := newEnv(t, sim.Options{Cards: 40, Faults: []sim.Fault{f}}, func(c *Config) { c.MaxWait = 2 * time.Minute })
			_, err := walk(t, e.c, 1)
			var we *WaitError
			if !errors.As(err, &we) {
				t.Fatalf("err = %v, want *WaitError", err)
			}
			if !errors.Is(err, ErrUnavailable) || !tt.wantAs(err) {
				t.Errorf("err = %v: want ErrUnavailable and the cause", err)
			}
			if we.Waited > 2*time.Minute || we.Waited+we.Next <= 2*time.Minute {
				t.Errorf("waited %v, next %v: want waited <= cap < waited+next", we.Waited, we.Next)
			}
			if tt.attempts != 0 && we.Attempts != tt.attempts {
				t.Errorf("attempts = %d, want %d", we.Attempts, tt.attempts)
			}
			if e.clk.Slept() > 2*time.Minute+time.Second {
				t.Errorf("slept %v, more than the cap", e.clk.Slept())
			}
			if !strings.Contains(err.Error(), "fetch cards page 1") || !strings.Contains(err.Error(), "gave up after "+english.Count(we.Attempts, "attempt")+" in ") {
				t.Errorf("error does not say what and how long: %v", err)
			}
		})
	}
}

func isStatus(code int) func(error) bool {
	return func(err error) bool {
		var se *StatusError
		return errors.As(err, &se) && se.StatusCode == code
	}
}

func TestPermanentStatusesAreNotRetried(t *testing.T) {
	tests := []struct {
		status int
		body   string
		msg    string
	}{
		{400, `{"message":"Problems parsing JSON"}`, "Problems parsing JSON"},
		{403, `{"message":"Forbidden"}`, "Forbidden"},
		{404, `{"message":"404 Not Found","status_code":404}`, "404 Not Found"},
		{422, `{"message":"The given data was invalid.","errors":{"page":["The page must be an integer."]},"status_code":422}`, "The given data was invalid."},
		{410, `gone`, ""},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			var n int
			c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"t"}`, func(w http.ResponseWriter, r *http.Request) {
				n++
				if strings.HasPrefix(tt.body, "{") {
					writeJSON(w, tt.status, tt.body)
					return
				}
				w.WriteHeader(tt.status)
			}), nil)
			_, err := walk(t, c, 1)
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != tt.status || se.Message != tt.msg {
				t.Fatalf("err = %v, want *StatusError %d %q", err, tt.status, tt.msg)
			}
			if errors.Is(err, ErrUnavailable) {
				t.Errorf("%d classified as unavailable", tt.status)
			}
			if n != 1 {
				t.Errorf("requests = %d, want 1 (no retry)", n)
			}
			if tt.status == 422 && se.Fields["page"][0] != "The page must be an integer." {
				t.Errorf("fields = %v", se.Fields)
			}
		})
	}
}

func TestRetryHint(t *testing.T) {
	clk := sim.NewClock()
	c := &Client{clk: clk}
	now := clk.Now()
	tests := []struct {
		name string
		h    map[string]string
		rl   bool
		want time.Duration
	}{
		{"delta seconds", map[string]string{"Retry-After": "120"}, true, 2 * time.Minute},
		{"HTTP-date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, true, 90 * time.Second},
		{"HTTP-date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, true, 0},
		{"X-RateLimit-Reset on 429", map[string]string{"X-RateLimit-Reset": strconv.FormatInt(now.Add(45*time.Second).Unix(), 10)}, true, 45 * time.Second},
		{"X-RateLimit-Reset ignored on 5xx", map[string]string{"X-RateLimit-Reset": strconv.FormatInt(now.Add(45*time.Second).Unix(), 10)}, false, 0},
		{"Retry-After wins", map[string]string{"Retry-After": "3", "X-RateLimit-Reset": strconv.FormatInt(now.Add(45*time.Second).Unix(), 10)}, true, 3 * time.Second},
		{"garbage", map[string]string{"Retry-After": "soon"}, true, 0},
		{"negative", map[string]string{"Retry-After": "-5"}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.h {
				h.Set(k, v)
			}
			if got := c.retryHint(h, tt.rl); got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRetryAfterHTTPDateOverHTTP(t *testing.T) {
	var n int
	var clk *sim.Clock
	c, _, clk := handlerEnv(t, tokenThen(`{"access_token":"t"}`, func(w http.ResponseWriter, r *http.Request) {
		if n++; n == 1 {
			w.Header().Set("Retry-After", clk.Now().Add(40*time.Second).UTC().Format(http.TimeFormat))
			writeJSON(w, 429, `{"message":"Too Many Attempts."}`)
			return
		}
		writeJSON(w, 200, `{"data":{}}`)
	}), nil)
	if _, err := c.Account(t.Context()); err != nil {
		t.Fatal(err)
	}
	if clk.Slept() < 40*time.Second {
		t.Errorf("slept %v, want >= 40s", clk.Slept())
	}
}

func TestRateLimitPausesOtherRequests(t *testing.T) {
	// After a 429 with Retry-After 30s, the next request (another caller's)
	// waits for the pause too.
	e := newEnv(t, sim.Options{Cards: 40, Faults: []sim.Fault{{Endpoint: "account", Kind: sim.FaultRateLimit, RetryAfter: 30 * time.Second, Times: 1}}},
		func(c *Config) { c.MaxWait = time.Second }) // the account call gives up at once
	_, err := e.c.Account(t.Context())
	var we *WaitError
	if !errors.As(err, &we) {
		t.Fatalf("err = %v, want *WaitError", err)
	}
	// With a one-second api.max_wait the walk cannot wait out the pause:
	// it gives up at once rather than sleeping past the bound.
	before := e.clk.Now()
	if _, err := walk(t, e.c, 1); !errors.As(err, &we) || we.Next < 29*time.Second || e.clk.Now().Sub(before) > time.Second {
		t.Fatalf("walk during the pause: %v after %v; want a *WaitError naming the ~30s pause, at once", err, e.clk.Now().Sub(before))
	}
	// With room to wait, it waits the pause out.
	e.c.cfg.MaxWait = time.Minute
	if _, err := walk(t, e.c, 1); err != nil {
		t.Fatal(err)
	}
	if d := e.clk.Now().Sub(before); d < 29*time.Second {
		t.Errorf("walk after a 429 started after %v, want the 30s pause", d)
	}
}

// TestMaxWaitBoundsTheWholeRequest: api.max_wait bounds everything one
// request spends, pacing included, not only the backoff sleeps.
func TestMaxWaitBoundsTheWholeRequest(t *testing.T) {
	e := newEnv(t, sim.Options{Cards: 40, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultStatus, Status: 503}}},
		func(c *Config) {
			c.MaxWait = 15 * time.Second
			c.RateLimit = Rate{N: 1, Per: 4 * time.Second} // pacing alone takes 4s a request
		})
	if err := e.c.Authenticate(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := e.clk.Now()
	_, err := walk(t, e.c, 1)
	var we *WaitError
	if !errors.As(err, &we) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want a *WaitError wrapping ErrUnavailable", err)
	}
	if spent := e.clk.Now().Sub(before); spent > 15*time.Second {
		t.Errorf("the request spent %v, more than api.max_wait 15s", spent)
	}
	if we.Waited > 15*time.Second || we.Attempts < 2 {
		t.Errorf("WaitError %+v: want at most 15s spent over at least 2 attempts", we)
	}
}

func TestSimLimiterWithFasterClient(t *testing.T) {
	// A client configured faster than the server: 429s with Retry-After from
	// the sim's own limiter are absorbed and the walk completes.
	e := newEnv(t, sim.Options{Cards: 300, Limit: 5, Window: 10 * time.Second},
		func(c *Config) { c.RateLimit = Rate{N: 100, Per: time.Second} })
	pages, err := walk(t, e.c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 20 || e.c.Stats().RateLimited == 0 {
		t.Errorf("pages %d, rate limited %d: want 20 and > 0", len(pages), e.c.Stats().RateLimited)
	}
	if max := e.sim.Stats().General.MaxInWindow; max > 5 {
		t.Errorf("sim saw %d accepted in a window", max)
	}
}

// TestOversizedErrorPageIsRetried: an oversized body on a 5xx is upstream
// trouble (a proxy's error page), retried like any 5xx; on a 200 it is data
// to refuse.
func TestOversizedErrorPageIsRetried(t *testing.T) {
	var calls atomic.Int64
	big := strings.Repeat("x", 100<<10)
	c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"tok-1234567890"}`, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusBadGateway, `{"message":"`+big+`"}`)
			return
		}
		writeJSON(w, http.StatusOK, `{"data":{"name":"A"}}`)
	}), func(c *Config) { c.MaxBodyBytes = 64 << 10 })
	if _, err := c.Account(t.Context()); err != nil {
		t.Fatalf("account after one oversized 502: %v", err)
	}
	if st := c.Stats(); st.Retries != 1 {
		t.Errorf("retries = %d, want 1", st.Retries)
	}
	c2, _, _ := handlerEnv(t, tokenThen(`{"access_token":"tok-1234567890"}`, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, `{"data":{"name":"`+big+`"}}`)
	}), func(c *Config) { c.MaxBodyBytes = 64 << 10 })
	_, err := c2.Account(t.Context())
	var pe *ProtocolError
	if !errors.As(err, &pe) || errors.Is(err, ErrUnavailable) {
		t.Errorf("oversized 200: %v, want a permanent ProtocolError", err)
	}
}

// TestRetryReasonsNameTheCause checks the reason each retry is logged and
// reported with (Config.OnWait) and the error text: a 429 is rate limited,
// a body cut short is truncated, an HTML page is named as one; never the
// catch-all "service unavailable" of a network error.
func TestRetryReasonsNameTheCause(t *testing.T) {
	tests := []struct {
		name       string
		fault      sim.Fault
		wantReason string
		wantErr    string
	}{
		{"truncated body", sim.Fault{Kind: sim.FaultTruncate, Times: 1}, "truncated body", "truncated body"},
		{"429", sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: time.Second, Times: 1}, "rate limited (429)", "429"},
		{"HTML 502", sim.Fault{Kind: sim.FaultHTML, Times: 1}, "HTML error page (status 502)", "not JSON"},
		{"503", sim.Fault{Kind: sim.FaultStatus, Status: 503, Times: 1}, "status 503", "503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fault
			f.Endpoint, f.Pages = "cards", []int{2}
			var reasons []string
			e := newEnv(t, sim.Options{Cards: 40, Faults: []sim.Fault{f}}, func(c *Config) {
				c.OnWait = func(reason string, _ time.Duration) { reasons = append(reasons, reason) }
			})
			if _, err := walk(t, e.c, 1); err != nil {
				t.Fatalf("walk: %v", err)
			}
			if len(reasons) != 1 || reasons[0] != tt.wantReason {
				t.Errorf("retry reasons %q, want [%q]", reasons, tt.wantReason)
			}
			log := e.log.String()
			if !strings.Contains(log, `reason="`+tt.wantReason+`"`) {
				t.Errorf("retry line does not give reason %q:\n%s", tt.wantReason, log)
			}
			for _, line := range strings.Split(log, "\n") {
				if strings.Contains(line, "retrying") && !strings.Contains(line, tt.wantErr) {
					t.Errorf("retry line does not say %q: %s", tt.wantErr, line)
				}
			}
		})
	}
}

// TestStoppedWhileRetryingKeepsTheCause ends the caller's context while a
// request waits to try again: the error is the context's and still the
// failed attempt's (ErrUnavailable, the 503), so a check that runs out of
// time against a dead API says why and exits as unavailable.
func TestStoppedWhileRetryingKeepsTheCause(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := sim.Fault{Kind: sim.FaultStatus, Status: 503, Endpoint: "account"}
	e := newEnv(t, sim.Options{Cards: 15, Faults: []sim.Fault{f}}, func(c *Config) {
		c.MaxWait = time.Hour
		c.OnWait = func(string, time.Duration) { cancel() }
	})
	_, err := e.c.Account(ctx)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "503") {
		t.Errorf("err = %v: want context.Canceled wrapping the 503 attempt (ErrUnavailable)", err)
	}
}

// TestCutShortAttemptKeepsTheEarlierCause ends the caller's context while
// the second attempt is in flight: that attempt failed only because of the
// context, so the error keeps the first attempt's cause (the 503) and its
// class (ErrUnavailable), not "context deadline exceeded" twice.
func TestCutShortAttemptKeepsTheEarlierCause(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	faults := []sim.Fault{
		{Kind: sim.FaultStatus, Status: 503, Endpoint: "account", Times: 1},
		{Kind: sim.FaultLatency, Latency: time.Hour, Endpoint: "account", Skip: 1},
	}
	e := newEnv(t, sim.Options{Cards: 15, Faults: faults}, func(c *Config) {
		c.MaxWait = time.Hour
		c.OnWait = func(string, time.Duration) { time.AfterFunc(50*time.Millisecond, cancel) }
	})
	_, err := e.c.Account(ctx)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "attempt 1 failed") || !strings.Contains(err.Error(), "503") {
		t.Errorf("err = %v: want context.Canceled wrapping attempt 1's 503 (ErrUnavailable)", err)
	}
}

// TestUnreachableBaseURLIsSaidAtOnce: an API that never accepts a
// connection (a wrong api.base_url, a closed port) is named from the first
// retry on, in the wait reason and the log, and in the final error.
func TestUnreachableBaseURLIsSaidAtOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	var reasons []string
	e := newEnv(t, sim.Options{Cards: 15}, func(c *Config) {
		c.BaseURL = closed
		c.MaxWait = time.Minute
		c.OnWait = func(reason string, _ time.Duration) { reasons = append(reasons, reason) }
	})
	_, err = e.c.Account(t.Context())
	var we *WaitError
	if !errors.As(err, &we) || we.Unreachable != closed {
		t.Fatalf("err = %v, want a *WaitError naming the unreachable base URL", err)
	}
	if !strings.Contains(err.Error(), "cannot reach api.base_url "+closed) {
		t.Errorf("final error does not name api.base_url: %v", err)
	}
	want := "cannot reach api.base_url " + closed + ": connection refused (retrying until "
	if len(reasons) == 0 || !strings.HasPrefix(reasons[0], want) {
		t.Errorf("first wait reason %q, want it to start %q", reasons, want)
	}
	if !strings.Contains(e.log.String(), `msg="cannot reach api.base_url"`) {
		t.Errorf("no log line names the unreachable URL:\n%s", e.log.String())
	}
	// A server that answers, even with errors, is reachable: not said.
	e = newEnv(t, sim.Options{Cards: 15, Faults: []sim.Fault{{Kind: sim.FaultStatus, Status: 503, Endpoint: "account"}}},
		func(c *Config) { c.MaxWait = time.Minute })
	_, err = e.c.Account(t.Context())
	if !errors.As(err, &we) || we.Unreachable != "" || strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("a 503 said unreachable: %v", err)
	}
}
