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

const (
	testEmail    = "ops@example.com"
	testPassword = "pw-canary-7f3a9c1e"
)

type env struct {
	sim *sim.Server
	srv *httptest.Server
	c   *Client
	clk *sim.Clock
	log *bytes.Buffer
}

// newEnv starts a sim on loopback with the fake clock and a client on it.
// opt and cfg may adjust the options before use.
func newEnv(t *testing.T, o sim.Options, cfg func(*Config)) *env {
	t.Helper()
	clk := sim.NewClock()
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
		Clock:    clk,
		Logger:   slog.New(slog.NewTextHandler(&syncWriter{w: &buf}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if cfg != nil {
		cfg(&c)
	}
	cl, err := New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
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

// handlerEnv serves h on loopback and builds a client on it, on a
// settable clock as in newEnv.
func handlerEnv(t *testing.T, h http.HandlerFunc, cfg func(*Config)) (*Client, *httptest.Server, *sim.Clock) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	clk := sim.NewClock()
	c := Config{BaseURL: srv.URL, Email: testEmail, Password: testPassword, Timeout: 5 * time.Second, Clock: clk}
	if cfg != nil {
		cfg(&c)
	}
	cl, err := New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
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
