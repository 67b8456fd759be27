package extract

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// fakeClock drives the sim's windows, token expiry and the client's pacing
// and backoff: Sleep advances it, so long waits cost no real time.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	slept time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		c.Advance(d)
		c.mu.Lock()
		c.slept += d
		c.mu.Unlock()
	}
	return nil
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *fakeClock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}

const (
	testEmail    = "ops@example.com"
	testPassword = "pw-canary-7f3a9c1e"
)

type env struct {
	sim *sim.Server
	srv *httptest.Server
	c   *Client
	clk *fakeClock
	log *bytes.Buffer
}

// newEnv starts a sim on loopback with the fake clock and a client on it.
// opt and cfg may adjust the options before use.
func newEnv(t *testing.T, o sim.Options, cfg func(*Config)) *env {
	t.Helper()
	clk := newFakeClock()
	if o.Email == "" {
		o.Email, o.Password = testEmail, testPassword
	}
	if o.Now == nil {
		o.Now = clk.Now
	}
	s := sim.New(o)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	var buf bytes.Buffer
	c := Config{
		BaseURL:  srv.URL,
		Email:    testEmail,
		Password: testPassword,
		Timeout:  5 * time.Second,
		Now:      clk.Now,
		Logger:   slog.New(slog.NewTextHandler(&syncWriter{w: &buf}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if cfg != nil {
		cfg(&c)
	}
	cl, err := New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	cl.setClock(clk)
	return &env{sim: s, srv: srv, c: cl, clk: clk, log: &buf}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// walk collects all pages and the final error.
func walk(t *testing.T, c *Client, start int) ([]*Page, error) {
	t.Helper()
	var pages []*Page
	for p, err := range c.Pages(t.Context(), start) {
		if err != nil {
			return pages, err
		}
		pages = append(pages, p)
	}
	return pages, nil
}

// handlerEnv serves h on loopback and builds a client on it (real clock
// for pacing is replaced by a fake one as in newEnv).
func handlerEnv(t *testing.T, h http.HandlerFunc, cfg func(*Config)) (*Client, *httptest.Server, *fakeClock) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	clk := newFakeClock()
	c := Config{BaseURL: srv.URL, Email: testEmail, Password: testPassword, Timeout: 5 * time.Second, Now: clk.Now}
	if cfg != nil {
		cfg(&c)
	}
	cl, err := New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	cl.setClock(clk)
	return cl, srv, clk
}

// writeJSON answers with a JSON body.
func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// tokenThen answers the token endpoint with tokenBody and every other
// path with data(r).
func tokenThen(tokenBody string, data http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/auth/access-token" {
			writeJSON(w, http.StatusOK, tokenBody)
			return
		}
		data(w, r)
	}
}

// counter counts requests to a handler that must never be reached.
type counter struct{ n atomic.Int64 }

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	writeJSON(w, http.StatusOK, `{}`)
}

func contextWithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}
