package worker

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
)

type fixture struct {
	srv *sim.Server
	job *Job
	wh  *sqlite.Warehouse
}

func newFixture(t *testing.T, opts sim.Options) *fixture {
	t.Helper()
	return newFixtureAt(t, filepath.Join(t.TempDir(), "w.db"), "", opts)
}

// newFixtureAt is newFixture on the warehouse file at path, for account
// ("" is load.DefaultAccount), with a simulator of its own.
func newFixtureAt(t *testing.T, path, account string, opts sim.Options) *fixture {
	t.Helper()
	opts.Window, opts.Limit, opts.AuthLimit = time.Second, 10000, 100
	srv := sim.New(opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	client, err := extract.New(extract.Config{
		BaseURL:       ts.URL,
		Email:         sim.DefaultEmail,
		Password:      sim.DefaultPassword,
		RateLimit:     extract.Rate{N: 10000, Per: time.Second},
		AuthRateLimit: extract.Rate{N: 100, Per: time.Second},
		Timeout:       5 * time.Second,
		MaxWait:       2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := sqlite.OpenLock(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	wh, err := sqlite.Open(t.Context(), path, load.Options{Account: account})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close() })
	return &fixture{srv: srv, wh: wh, job: &Job{Client: client, Warehouse: wh, Lock: lock, Version: "test"}}
}

func (f *fixture) currentCards(t *testing.T) int {
	t.Helper()
	st, err := f.wh.Summary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return int(st.CurrentCards)
}

// rewriteClient returns a client of f's simulator whose /cards bodies pass
// through fn.
func rewriteClient(t *testing.T, f *fixture, fn func([]byte) []byte) *extract.Client {
	t.Helper()
	return rewriteClientWith(t, f, nil, fn)
}

// rewriteClientWith is rewriteClient with a hook that sees each request
// first.
func rewriteClientWith(t *testing.T, f *fixture, before func(*http.Request), fn func([]byte) []byte) *extract.Client {
	t.Helper()
	if fn == nil {
		fn = func(b []byte) []byte { return b }
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if before != nil {
			before(r)
		}
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if r.URL.Path == "/cards" {
			body = fn(body)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
	t.Cleanup(ts.Close)
	c, err := extract.New(extract.Config{BaseURL: ts.URL, Email: sim.DefaultEmail, Password: sim.DefaultPassword,
		RateLimit: extract.Rate{N: 10000, Per: time.Second}, AuthRateLimit: extract.Rate{N: 100, Per: time.Second},
		Timeout: 5 * time.Second, MaxWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// extraFetches counts the requests of a page beyond its first.
func extraFetches(st sim.Stats) int64 {
	var n int64
	for _, c := range st.PageRequests {
		if c > 1 {
			n += c - 1
		}
	}
	return n
}

// expiring is a context whose deadline passes when expire is closed, so a
// test can end a run by its deadline at a chosen page without sleeping.
type expiring struct {
	context.Context
	expire chan struct{}
}

func (e *expiring) Done() <-chan struct{} { return e.expire }

func (e *expiring) Err() error {
	select {
	case <-e.expire:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
