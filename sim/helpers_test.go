package sim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

type env struct {
	t     *testing.T
	sim   *sim.Server
	ts    *httptest.Server
	clock *sim.Clock
	opts  sim.Options
}

// start serves a simulator over real loopback HTTP with an injected clock.
func start(t *testing.T, o sim.Options) *env {
	t.Helper()
	c := sim.NewClock()
	if o.Now == nil {
		o.Now = c.Now
	}
	if o.Email == "" {
		o.Email, o.Password = "ops@example.com", "s3cret"
	}
	s := sim.New(o)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return &env{t: t, sim: s, ts: ts, clock: c, opts: o}
}

type reply struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

// do sends a request; token "" sends no Authorization header.
func (e *env) do(method, path, token, contentType, body string) reply {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept", "application/json")
	res, err := e.ts.Client().Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return reply{status: res.StatusCode, header: res.Header, body: b, err: err}
}

func (e *env) get(path, token string) reply {
	e.t.Helper()
	return e.do(http.MethodGet, path, token, "", "")
}

func (e *env) login() reply {
	e.t.Helper()
	return e.do(http.MethodPost, "/auth/access-token", "", "application/json",
		`{"email":"`+e.opts.Email+`","password":"`+e.opts.Password+`"}`)
}

// token logs in and returns the access token (default shape).
func (e *env) token() string {
	e.t.Helper()
	r := e.login()
	if r.err != nil || r.status != http.StatusOK {
		e.t.Fatalf("login: status %d, err %v, body %s", r.status, r.err, r.body)
	}
	tok, _ := r.json(e.t)["access_token"].(string)
	if tok == "" {
		e.t.Fatalf("login: no access_token in %s", r.body)
	}
	return tok
}

func wantStatusBody(t *testing.T, r reply, status int, body string) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("request failed: %v", r.err)
	}
	if r.status != status {
		t.Errorf("status = %d, want %d (body %s)", r.status, status, r.body)
	}
	if body != "" && string(r.body) != body {
		t.Errorf("body = %s\nwant   %s", r.body, body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content-type = %q, want application/json", ct)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-cache, private" {
		t.Errorf("cache-control = %q, want no-cache, private", cc)
	}
	if r.header.Get("Date") == "" {
		t.Error("no date header")
	}
}
