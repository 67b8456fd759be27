package extract

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Client talks to the Card Payment Service. It is safe for concurrent use;
// it caches one bearer token and paces all requests made through it.
type Client struct {
	// Everything secret sits behind pointers so that %v of a Client
	// prints addresses, never values (fmt cannot call Secret's methods on
	// unexported fields).
	cfg  *Config
	base *url.URL
	hc   *http.Client
	// gate, when set, is called right before each request is sent (WithGate).
	gate    func() error
	log     *slog.Logger
	clk     Clock
	general *pacer
	authP   *pacer
	auth    *authState
	stats   *counters
	// backoff policy; tests shorten it.
	initialBackoff, maxBackoff time.Duration
}

// scrub removes the password, tokens, Bearer values and card numbers from
// upstream text. Every piece of text the server wrote (error messages,
// header values, keys, URLs) passes through it before it is cut, cleaned or
// shown anywhere.
func (c *Client) scrub(s string) string { return c.cfg.Secrets.Scrub(s) }

// Scrub removes the password, every token the client has held, any Bearer
// value and card numbers from s. The worker passes every error through it
// again before storing or logging it.
func (c *Client) Scrub(s string) string { return c.scrub(s) }

// WithLogger returns a client that logs to l and shares everything else
// (token, pacing, counters) with c: the worker gives each run one whose
// lines carry the run's id.
func (c *Client) WithLogger(l *slog.Logger) *Client {
	cp := *c
	cp.log = l.With("component", "extract")
	return &cp
}

// WithGate returns a copy of the client that calls gate right before it
// sends each request (after pacing, before the bytes leave) and sends
// nothing when gate fails: the run's request fails with gate's error, not
// retried. A replica passes its lease check, so one resumed after a pause
// past its lease sends no request for an account another replica now
// walks.
func (c *Client) WithGate(gate func() error) *Client {
	cp := *c
	cp.gate = gate
	return &cp
}

// Format prints the client without any credential.
func (c *Client) Format(f fmt.State, _ rune) {
	if c == nil {
		_, _ = io.WriteString(f, "extract.Client(nil)")
		return
	}
	fmt.Fprintf(f, "extract.Client{base: %s, email: %s, password: %s}", c.base, c.cfg.Email, redacted)
}

// Stats are running totals of one Client.
type Stats struct {
	// Requests counts every HTTP request sent, token requests included.
	Requests int64
	// Retries counts attempts repeated after a transient failure.
	Retries int64
	// RateLimited counts 429 answers.
	RateLimited int64
	// AuthRequests counts token requests.
	AuthRequests int64
}

type counters struct {
	requests, retries, rateLimited, authRequests atomic.Int64
	// busyUntil is when the requests in flight must have ended (unix
	// nanoseconds): a request started at t ends by t + MaxWait + Timeout.
	busyUntil atomic.Int64
}

// BusyUntil returns when every request in flight through this client must
// have ended, whatever the server does: its start plus api.max_wait plus
// one attempt's timeout. A run past it without progress is stuck. It is
// the zero time when no request was ever made.
func (c *Client) BusyUntil() time.Time {
	n := c.stats.busyUntil.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Timeout returns the deadline of one attempt (api.timeout).
func (c *Client) Timeout() time.Duration { return c.cfg.Timeout }

// Stats returns the running totals.
func (c *Client) Stats() Stats {
	return Stats{
		Requests:     c.stats.requests.Load(),
		Retries:      c.stats.retries.Load(),
		RateLimited:  c.stats.rateLimited.Load(),
		AuthRequests: c.stats.authRequests.Load(),
	}
}

// New checks cfg and builds a Client. It sends nothing.
//
// The transport is explicit: no proxy (http.ProxyFromEnvironment is not
// used, so a stray HTTPS_PROXY in a user's shell cannot route the token
// through a proxy; the systemd unit has a clean environment anyway), dial
// timeout 10s, TLS handshake 10s (TLS 1.2+, verification on), response
// headers within Timeout, and every attempt, body included, bounded by
// Timeout through its context. Redirects are never followed.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	cfg.Secrets.Add(cfg.Password.Reveal())
	cfg.Secrets.AddPair(cfg.Email, cfg.Password.Reveal())
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("extract config: %w", err)
	}
	base, err := parseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("extract config: %w", err)
	}
	rt := cfg.Transport
	if rt == nil {
		rt = &http.Transport{
			Proxy:                  nil,
			DialContext:            (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  cfg.Timeout,
			ExpectContinueTimeout:  time.Second,
			MaxIdleConns:           4,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        90 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
			ForceAttemptHTTP2:      true,
		}
	}
	c := &Client{
		cfg:  &cfg,
		base: base,
		hc: &http.Client{
			Transport: rt,
			Timeout:   cfg.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		log:            cfg.Logger.With("component", "extract"),
		auth:           newAuthState(),
		stats:          &counters{},
		initialBackoff: time.Second,
		maxBackoff:     time.Minute,
	}
	c.clk = c.cfg.Clock
	if p := cfg.Pacer; p != nil {
		if p.rate != cfg.RateLimit || p.authRate != cfg.AuthRateLimit {
			return nil, fmt.Errorf("extract config: the shared pacer paces %s and %s, the client is configured for %s and %s",
				p.rate, p.authRate, cfg.RateLimit, cfg.AuthRateLimit)
		}
		c.general, c.authP = p.general, p.auth
		return c, nil
	}
	c.general = newPacer(c.cfg.RateLimit, c.clk)
	c.authP = newPacer(c.cfg.AuthRateLimit, c.clk)
	return c, nil
}

// endpoint builds base + path (path without leading slash) + query.
func (c *Client) endpoint(path string, q url.Values) string {
	u := *c.base
	u.Path = c.base.Path + "/" + path
	u.RawQuery = q.Encode()
	return u.String()
}

// request describes one logical request, retried as a unit.
type request struct {
	op string
	// endpoint is what the Observer is told (EndpointToken, ...).
	endpoint string
	method   string
	url      string
	body     []byte
	token    bool // send the bearer token
	pacer    *pacer
	// decode parses a 2xx JSON body; a *ProtocolError with Transient set is
	// retried.
	decode func(status int, body []byte) error
}

// outcome of one attempt.
type outcome struct {
	err          error
	retry        bool
	hint         time.Duration // server-requested wait (Retry-After, X-RateLimit-Reset)
	rateLimited  bool
	unauthorized bool
	status       int
	bytes        int
	duration     time.Duration
}

// response is what a successful do returns for logging and page metadata.
type response struct {
	status   int
	bytes    int
	duration time.Duration
	attempts int
}

// do runs r with pacing, retries, backoff and the one-refresh 401 rule.
func (c *Client) do(ctx context.Context, r *request) (response, error) {
	t := c.begin(ctx, r)
	for {
		var tok Secret
		if r.token {
			var err error
			if tok, err = c.bearer(ctx, t.stale); err != nil {
				return response{}, err
			}
		}
		if err := c.pace(ctx, &t); err != nil {
			return response{}, err
		}
		t.attempts++
		o := c.attempt(ctx, r, tok)
		if o.err == nil {
			r.pacer.ok()
			return response{status: o.status, bytes: o.bytes, duration: o.duration, attempts: t.attempts}, nil
		}
		t.answered = t.answered || o.status != 0
		if ctx.Err() != nil {
			return response{}, t.cutShort(ctx, o.err)
		}
		t.lastErr, t.failedAt = o.err, t.attempts
		if o.unauthorized {
			if err := c.rejected(&t, o, tok); err != nil {
				return response{}, err
			}
			continue
		}
		if !o.retry {
			return response{}, fmt.Errorf("%s: %w", r.op, o.err)
		}
		if err := c.backOff(ctx, &t, o); err != nil {
			return response{}, err
		}
	}
}

// tries is the state of one request across its attempts.
type tries struct {
	r  *request
	bo *backoff.ExponentialBackOff
	// start and deadline bound the wall time spent on the request:
	// MaxWait, or the context's deadline when it comes first (byContext).
	start, deadline time.Time
	byContext       bool
	attempts        int
	refreshed       bool
	stale           Secret
	lastErr         error
	failedAt        int // the attempt that failed with lastErr
	// answered: an attempt got an HTTP answer, so the API is reachable.
	answered bool
}

// begin starts the tries of r: its backoff, its deadline, and the client
// marked busy until then. The deadline is MaxWait after the start, or
// ctx's deadline when it comes first: a retry is never promised ("retrying
// until") nor waited for past the time the caller gives up (check's
// -timeout, a run's timeout).
func (c *Client) begin(ctx context.Context, r *request) tries {
	t := tries{r: r, bo: backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(c.initialBackoff),
		backoff.WithMaxInterval(c.maxBackoff),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxElapsedTime(0), // MaxWait is enforced by pace and backOff, on our clock
	)}
	// MaxWait bounds the wall time spent on this request: pacing, backoff
	// and the failed attempts themselves, so that a failing run ends when
	// the configuration says it does.
	t.start = c.clk.Now()
	t.deadline = t.start.Add(c.cfg.MaxWait)
	if dl, ok := ctx.Deadline(); ok {
		// ctx's deadline is on the wall clock; the client's clock may be
		// a test's: what is left of it counts from the client's now.
		if byCtx := t.start.Add(time.Until(dl)); byCtx.Before(t.deadline) {
			t.deadline, t.byContext = byCtx, true
		}
	}
	until := time.Now().Add(c.cfg.MaxWait + c.cfg.Timeout).UnixNano()
	for cur := c.stats.busyUntil.Load(); until > cur && !c.stats.busyUntil.CompareAndSwap(cur, until); cur = c.stats.busyUntil.Load() {
	}
	return t
}

// pace waits for the request's turn. A turn past the deadline is a
// *WaitError carrying the last attempt's error (or, before any, the pacing
// wait itself); a context that ends is stopped's error.
func (c *Client) pace(ctx context.Context, t *tries) error {
	next, err := t.r.pacer.waitUntil(ctx, t.deadline)
	if err == nil {
		return nil
	}
	if !errors.Is(err, errPastDeadline) {
		return stopped(t.r.op, err, t.failedAt, t.lastErr)
	}
	last := t.lastErr
	if last == nil {
		last = unavailable(fmt.Errorf("pacing (api.rate_limit, slowed after a 429) would wait %s", next.Round(time.Millisecond)))
	}
	waited := c.clk.Now().Sub(t.start)
	_, unreachable := unreachableCause(outcome{err: t.lastErr})
	return c.waitError(t, waited, next, last, unreachable)
}

// waitError is the error of a request given up on because the next try
// would pass MaxWait; it names api.base_url when no attempt ever reached it.
func (c *Client) waitError(t *tries, waited, next time.Duration, last error, unreachable bool) error {
	we := &WaitError{Op: t.r.op, Waited: waited, Next: next, Attempts: t.attempts, Last: last, Deadline: t.byContext}
	if unreachable && !t.answered {
		we.Unreachable = c.cfg.BaseURL
	}
	return we
}

// cutShort is the error of an attempt cut short by the context itself. It
// says nothing new: the attempt before it keeps the cause (connection
// refused, 503) and so the exit code.
func (t *tries) cutShort(ctx context.Context, err error) error {
	if t.lastErr == nil || !errors.Is(err, ctx.Err()) {
		t.lastErr, t.failedAt = err, t.attempts
	}
	return stopped(t.r.op, ctx.Err(), t.failedAt, t.lastErr)
}

// rejected handles a 401: a rejected token is refreshed once (nil: try
// again); rejected again, or credentials rejected, is the error.
func (c *Client) rejected(t *tries, o outcome, tok Secret) error {
	r := t.r
	if !r.token {
		return fmt.Errorf("%s: credentials rejected: %w: %w", r.op, ErrUnauthenticated, o.err)
	}
	if t.refreshed {
		return fmt.Errorf("%s: token rejected again after a refresh: %w: %w", r.op, ErrUnauthenticated, o.err)
	}
	t.refreshed, t.stale = true, tok
	c.log.Info("token rejected; refreshing once", "op", r.op)
	return nil
}

// backOff waits before trying again after o failed: the backoff or the
// server's hint, whichever is longer. A wait that would pass the deadline
// is a *WaitError; a context that ends is stopped's error.
func (c *Client) backOff(ctx context.Context, t *tries, o outcome) error {
	r := t.r
	d := t.bo.NextBackOff()
	if o.hint > d {
		d = o.hint
	}
	reason := shortReason(o)
	cause, unreachable := unreachableCause(o)
	if unreachable && !t.answered {
		reason = fmt.Sprintf("cannot reach api.base_url %s: %s (retrying until %s)", c.cfg.BaseURL, cause, t.deadline.UTC().Format(time.RFC3339))
	}
	if o.rateLimited {
		c.stats.rateLimited.Add(1)
		c.cfg.Observer.RateLimited(r.endpoint)
		r.pacer.pause(c.clk.Now().Add(d))
	}
	if now := c.clk.Now(); now.Add(d).After(t.deadline) {
		// The caller logs the returned error once; this is detail.
		c.log.Debug("giving up", "op", r.op, "attempts", t.attempts, "spent", now.Sub(t.start), "next_wait", d, "reason", reason)
		return c.waitError(t, now.Sub(t.start), d, o.err, unreachable)
	}
	c.stats.retries.Add(1)
	c.cfg.Observer.Retry(r.endpoint)
	c.logRetry(t, o, d, reason, cause, unreachable)
	if c.cfg.OnWait != nil {
		c.cfg.OnWait(reason, d)
	}
	if err := c.clk.Sleep(ctx, d); err != nil {
		return stopped(r.op, err, t.failedAt, t.lastErr)
	}
	return nil
}

// logRetry logs the retry about to wait d: a warning naming api.base_url
// while it has never been reached, else a line at info.
func (c *Client) logRetry(t *tries, o outcome, d time.Duration, reason, cause string, unreachable bool) {
	if unreachable && !t.answered {
		c.log.Warn("cannot reach api.base_url", "base_url", c.cfg.BaseURL, "cause", cause, "retrying_until", t.deadline.UTC().Format(time.RFC3339),
			"op", t.r.op, "attempt", t.attempts, "wait", d.Round(time.Millisecond), "reason", reason)
	} else {
		c.log.Info("retrying", "op", t.r.op, "attempt", t.attempts, "wait", d.Round(time.Millisecond), "reason", reason, "err", o.err)
	}
}

// stopped is the error of a request whose context ended (a shutdown, a
// deadline) while it waited to try again: the context's error and, when an
// attempt had failed, that attempt's error, so "context deadline exceeded"
// keeps its cause (connection refused, 503) and its exit code.
func stopped(op string, err error, attempts int, last error) error {
	if last == nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w; attempt %d failed: %w", op, err, attempts, last)
}

// unreachableCause says why an attempt got no connection to the API at all
// (refused, unknown host, no route, no answer to the connect), and whether
// that was the failure: a reset or a timeout after connecting is not.
func unreachableCause(o outcome) (string, bool) {
	if o.status != 0 || o.err == nil {
		return "", false
	}
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(o.err, syscall.ECONNREFUSED):
		return "connection refused", true
	case errors.As(o.err, &dns):
		if dns.IsNotFound {
			return "no such host " + dns.Name, true
		}
		return "cannot resolve " + dns.Name, true
	case errors.Is(o.err, syscall.EHOSTUNREACH), errors.Is(o.err, syscall.ENETUNREACH):
		return "no route to host", true
	case errors.As(o.err, &op) && op.Op == "dial":
		return "cannot connect (" + op.Err.Error() + ")", true
	}
	return "", false
}

// shortReason names why an attempt is retried, for the log.
func shortReason(o outcome) string {
	var pe *ProtocolError
	switch {
	case o.rateLimited:
		return "rate limited (429)"
	case errors.As(o.err, &pe) && pe.Truncated:
		return "truncated body"
	case errors.As(o.err, &pe) && pe.Reason == "error page is not JSON":
		return "HTML error page (status " + strconv.Itoa(o.status) + ")"
	case o.status != 0:
		return "status " + strconv.Itoa(o.status)
	case errors.Is(o.err, context.DeadlineExceeded):
		return "attempt timed out"
	}
	return "network error"
}
