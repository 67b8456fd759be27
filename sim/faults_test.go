package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// fresh sends a request on a new connection (no keep-alive), so the
// transport cannot silently retry a request whose connection was dropped.
func (e *env) fresh(ctx context.Context, path, token string) reply {
	e.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.ts.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := c.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return reply{status: res.StatusCode, header: res.Header, body: b, err: err}
}

func TestStatusFaults(t *testing.T) {
	tests := []struct {
		fault       sim.Fault
		path        string
		status      int
		retryAfter  string
		contentType string
		bodyHas     string
	}{
		{sim.Fault{Kind: sim.FaultStatus, Status: 500}, "/account", 500, "", "application/json", `"status_code":500`},
		{sim.Fault{Kind: sim.FaultStatus, Status: 502, RetryAfter: 1500 * time.Millisecond}, "/cards", 502, "2", "application/json", `"status_code":502`},
		{sim.Fault{Kind: sim.FaultStatus}, "/cards", 503, "", "application/json", `"message":"Service Unavailable"`},
		{sim.Fault{Kind: sim.FaultStatus, Status: 503, RetryAfter: 3 * time.Second}, "/account", 503, "3", "application/json", `"status_code":503`},
		{sim.Fault{Kind: sim.FaultHTML}, "/cards", 502, "", "text/html", "<h1>502 Bad Gateway</h1>"},
		{sim.Fault{Kind: sim.FaultHTML, Status: 504, RetryAfter: time.Second}, "/account", 504, "1", "text/html", "504 Gateway Timeout"},
		{sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 5 * time.Second}, "/cards", 429, "5", "application/json", rateLimited},
		{sim.Fault{Kind: sim.FaultRateLimit}, "/account", 429, "", "application/json", rateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String()+tt.path, func(t *testing.T) {
			e := start(t, sim.Options{Cards: 20})
			tok := e.token()
			f := tt.fault
			f.Times = 2
			e.sim.InjectFault(f)
			for i := range 2 {
				r := e.get(tt.path, tok)
				if r.err != nil || r.status != tt.status || r.header.Get("Retry-After") != tt.retryAfter ||
					r.header.Get("Content-Type") != tt.contentType || !bytes.Contains(r.body, []byte(tt.bodyHas)) {
					t.Errorf("request %d: %d %v %s, err %v", i, r.status, r.header, r.body, r.err)
				}
			}
			wantStatusBody(t, e.get(tt.path, tok), 200, "")
			st := e.sim.Stats()
			if st.Faults != 2 {
				t.Errorf("Stats().Faults = %d, want 2", st.Faults)
			}
			if wantRL := map[bool]int64{true: 2, false: 0}[tt.status == 429]; st.RateLimited != wantRL {
				t.Errorf("Stats().RateLimited = %d, want %d", st.RateLimited, wantRL)
			}
		})
	}
}

func TestFaultSelection(t *testing.T) {
	e := start(t, sim.Options{Cards: 100})
	tok := e.token()
	f, err := sim.ParseFault("cards:status=503,retry_after=2s,times=3,pages=2-3,5")
	if err != nil {
		t.Fatal(err)
	}
	e.sim.InjectFault(f)
	want := map[string]int{
		"/account": 200, "/cards?page=1": 200, "/cards?page=2": 503, "/cards?page=3": 503, "/cards?page=4": 200,
		"/cards?page=5": 503, "/cards?page=2&again": 200, // times exhausted
	}
	for _, path := range []string{"/account", "/cards?page=1", "/cards?page=2", "/cards?page=3", "/cards?page=4", "/cards?page=5", "/cards?page=2&again"} {
		if r := e.get(path, tok); r.status != want[path] {
			t.Errorf("%s: status %d, want %d", path, r.status, want[path])
		}
	}
	if st := e.sim.Stats(); st.PageRequests[2] != 2 || st.Requests["cards"] != 6 || st.Requests["account"] != 1 {
		t.Errorf("stats %+v", st)
	}

	// Token endpoint faults, with skip; ClearFaults ends them.
	e.sim.InjectFault(sim.Fault{Endpoint: "token", Kind: sim.FaultStatus, Status: 500, Skip: 1})
	if r := e.login(); r.status != 200 {
		t.Errorf("skipped login: %d", r.status)
	}
	if r := e.login(); r.status != 500 {
		t.Errorf("faulty login: %d", r.status)
	}
	e.sim.ClearFaults()
	if r := e.login(); r.status != 200 {
		t.Errorf("login after ClearFaults: %d", r.status)
	}
}

func TestFaultPercentDeterministic(t *testing.T) {
	run := func(seed int64) string {
		e := start(t, sim.Options{Cards: 1, Seed: seed, Faults: []sim.Fault{{Endpoint: "account", Kind: sim.FaultStatus, Percent: 50}}})
		tok := e.token()
		var b strings.Builder
		for range 40 {
			if e.get("/account", tok).status == 200 {
				b.WriteByte('.')
			} else {
				b.WriteByte('x')
			}
		}
		return b.String()
	}
	a, b, c := run(1), run(1), run(2)
	if a != b || a == c || !strings.Contains(a, "x") || !strings.Contains(a, ".") {
		t.Errorf("seed 1: %s, again: %s, seed 2: %s", a, b, c)
	}
}

func TestRevokeFault(t *testing.T) {
	e := start(t, sim.Options{Cards: 1, Faults: []sim.Fault{{Endpoint: "account", Kind: sim.FaultRevoke, Times: 1}}})
	tok := e.token()
	wantStatusBody(t, e.get("/cards", tok), 200, "")
	wantStatusBody(t, e.get("/account", tok), 401, unauthenticated)
	wantStatusBody(t, e.get("/cards", tok), 401, unauthenticated)
	wantStatusBody(t, e.get("/account", e.token()), 200, "")
}

func TestConnectionFaults(t *testing.T) {
	for _, kind := range []sim.FaultKind{sim.FaultReset, sim.FaultTruncate} {
		t.Run(kind.String(), func(t *testing.T) {
			e := start(t, sim.Options{Cards: 40})
			tok := e.token()
			e.sim.InjectFault(sim.Fault{Endpoint: "cards", Kind: kind, Times: 1})
			r := e.fresh(t.Context(), "/cards", tok)
			if r.err == nil {
				t.Fatalf("got %d with %d bytes, want a transport error", r.status, len(r.body))
			}
			if kind == sim.FaultTruncate && (!errors.Is(r.err, io.ErrUnexpectedEOF) || r.status != 200 || len(r.body) == 0) {
				t.Errorf("truncate: status %d, %d bytes, err %v; want 200, part of the body, unexpected EOF", r.status, len(r.body), r.err)
			}
			wantStatusBody(t, e.fresh(t.Context(), "/cards", tok), 200, "")
		})
	}
}

// signal is a slog handler that reports the simulator's fault log lines.
type signal struct{ ch chan struct{} }

func (s signal) Enabled(context.Context, slog.Level) bool { return true }
func (s signal) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s signal) WithGroup(string) slog.Handler            { return s }
func (s signal) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "sim fault" {
		select {
		case s.ch <- struct{}{}:
		default:
		}
	}
	return nil
}

// closes reports whether the test server shuts down in time, which needs
// every handler to have returned.
func closes(t *testing.T, e *env) {
	t.Helper()
	done := make(chan struct{})
	go func() { e.ts.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a handler did not return after the client went away")
	}
}

func TestWaitingFaults(t *testing.T) {
	t.Run("latency passes", func(t *testing.T) {
		e := start(t, sim.Options{Cards: 1, Faults: []sim.Fault{{Kind: sim.FaultLatency, Latency: time.Millisecond}}})
		wantStatusBody(t, e.get("/account", e.token()), 200, "")
	})
	t.Run("trickle delivers the same body", func(t *testing.T) {
		e := start(t, sim.Options{Cards: 40})
		tok := e.token()
		want := e.get("/cards?page=2", tok)
		e.sim.InjectFault(sim.Fault{Endpoint: "cards", Kind: sim.FaultTrickle, Latency: time.Microsecond, Chunk: 100})
		got := e.get("/cards?page=2", tok)
		if got.err != nil || !bytes.Equal(got.body, want.body) {
			t.Errorf("trickled body differs (err %v)", got.err)
		}
	})
	for _, f := range []sim.Fault{
		{Kind: sim.FaultLatency, Latency: time.Hour},
		{Kind: sim.FaultTrickle, Latency: time.Hour, Chunk: 10},
	} {
		t.Run(f.Kind.String()+" honours the client going away", func(t *testing.T) {
			faulted := make(chan struct{}, 1)
			e := start(t, sim.Options{Cards: 20, Logger: slog.New(signal{faulted})})
			tok := e.token()
			e.sim.InjectFault(f)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer close(done)
				// Cancel once the server has started the fault's wait.
				<-faulted
				cancel()
			}()
			r := e.fresh(ctx, "/cards", tok)
			<-done
			if r.err == nil {
				t.Errorf("request finished: %d %d bytes", r.status, len(r.body))
			}
			closes(t, e)
		})
	}
}

func TestPaginationFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault string
		cards int
		path  string
		check func(t *testing.T, e *env, p page, body []byte)
	}{
		{"foreign next", "cards:foreign=http://evil.example:9999", 40, "/cards?page=1&x=1", func(t *testing.T, e *env, p page, _ []byte) {
			if got := nextLink(t, p); got != "http://evil.example:9999/cards?page=2&x=1" {
				t.Errorf("next = %q", got)
			}
		}},
		{"foreign next with path", "cards:foreign=https://other.example/v2/cards", 40, "/cards", func(t *testing.T, e *env, p page, _ []byte) {
			if got := nextLink(t, p); got != "https://other.example/v2/cards?page=2" {
				t.Errorf("next = %q", got)
			}
		}},
		{"loop", "cards:loop=1,pages=3", 60, "/cards?page=3", func(t *testing.T, e *env, p page, _ []byte) {
			if got := nextLink(t, p); got != e.ts.URL+"/cards?page=1" {
				t.Errorf("next = %q", got)
			}
		}},
		{"loop elsewhere keeps next", "cards:loop=1,pages=3", 60, "/cards?page=2", func(t *testing.T, e *env, p page, _ []byte) {
			if got := nextLink(t, p); got != e.ts.URL+"/cards?page=3" {
				t.Errorf("next = %q", got)
			}
		}},
		{"links array single page", "cards:links-array", 10, "/cards", func(t *testing.T, e *env, p page, _ []byte) {
			if string(p.Meta.Pagination.Links) != "[]" {
				t.Errorf("links = %s", p.Meta.Pagination.Links)
			}
		}},
		{"links array last page", "links-array", 20, "/cards?page=2", func(t *testing.T, e *env, p page, _ []byte) {
			if string(p.Meta.Pagination.Links) != "[]" {
				t.Errorf("links = %s", p.Meta.Pagination.Links)
			}
		}},
		{"links array keeps next", "links-array", 20, "/cards?page=1", func(t *testing.T, e *env, p page, _ []byte) {
			if nextLink(t, p) == "" {
				t.Errorf("links = %s", p.Meta.Pagination.Links)
			}
		}},
		{"total grows", "cards:total=16", 30, "/cards?page=2", func(t *testing.T, e *env, p page, _ []byte) {
			pg := p.Meta.Pagination
			if pg.Total != 46 || pg.TotalPages != 4 || pg.Count != 15 || nextLink(t, p) == "" {
				t.Errorf("pagination %+v", pg)
			}
		}},
		{"total shrinks", "cards:total=-20", 30, "/cards?page=1", func(t *testing.T, e *env, p page, _ []byte) {
			pg := p.Meta.Pagination
			if pg.Total != 10 || pg.TotalPages != 1 || pg.Count != 15 || string(pg.Links) != "{}" {
				t.Errorf("pagination %+v", pg)
			}
		}},
		{"oversize", "oversize", 20, "/cards", func(t *testing.T, e *env, p page, body []byte) {
			if len(body) < 8<<20 || len(p.Data) != 15 {
				t.Errorf("%d bytes, %d items", len(body), len(p.Data))
			}
		}},
		{"oversize custom", "cards:oversize=5000000", 20, "/cards", func(t *testing.T, e *env, p page, body []byte) {
			if len(body) < 5000000 || len(body) > 5100000 || len(p.Data) != 15 {
				t.Errorf("%d bytes, %d items", len(body), len(p.Data))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := sim.ParseFault(tt.fault)
			if err != nil {
				t.Fatal(err)
			}
			e := start(t, sim.Options{Cards: tt.cards, Faults: []sim.Fault{f}})
			r := e.get(tt.path, e.token())
			if !json.Valid(r.body) {
				t.Fatalf("invalid JSON: %.200s", r.body)
			}
			tt.check(t, e, decodePage(t, r), r.body)
		})
	}
	// Oversize also applies to the account.
	e := start(t, sim.Options{Cards: 1, Faults: []sim.Fault{{Endpoint: "account", Kind: sim.FaultOversize, PadBytes: 1 << 20}}})
	r := e.get("/account", e.token())
	if len(r.body) < 1<<20 || !json.Valid(r.body) {
		t.Errorf("oversized account: %d bytes", len(r.body))
	}
}

func TestParseFault(t *testing.T) {
	tests := []struct {
		in   string
		want sim.Fault
	}{
		{"cards:status=503,retry_after=2s,times=3,pages=2-4", sim.Fault{Endpoint: "cards", Kind: sim.FaultStatus, Status: 503, RetryAfter: 2 * time.Second, Times: 3, Pages: []int{2, 3, 4}}},
		{"status=500", sim.Fault{Kind: sim.FaultStatus, Status: 500}},
		{"all:html", sim.Fault{Kind: sim.FaultHTML}},
		{"token:reset,times=1", sim.Fault{Endpoint: "token", Kind: sim.FaultReset, Times: 1}},
		{"account:truncate,skip=2,percent=30", sim.Fault{Endpoint: "account", Kind: sim.FaultTruncate, Skip: 2, Percent: 30}},
		{"latency=250ms", sim.Fault{Kind: sim.FaultLatency, Latency: 250 * time.Millisecond}},
		{"cards:trickle=10ms,chunk=32", sim.Fault{Endpoint: "cards", Kind: sim.FaultTrickle, Latency: 10 * time.Millisecond, Chunk: 32}},
		{"ratelimit,retry_after=30,times=5", sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 30 * time.Second, Times: 5}},
		{"429", sim.Fault{Kind: sim.FaultRateLimit}},
		{"revoke,times=1", sim.Fault{Kind: sim.FaultRevoke, Times: 1}},
		{"cards:foreign=http://evil.example:8080", sim.Fault{Endpoint: "cards", Kind: sim.FaultForeignNext, URL: "http://evil.example:8080"}},
		{"cards:loop=2,pages=5;7", sim.Fault{Endpoint: "cards", Kind: sim.FaultLoopNext, LoopTo: 2, Pages: []int{5, 7}}},
		{"cards:links-array", sim.Fault{Endpoint: "cards", Kind: sim.FaultLinksArray}},
		{"cards:total=-3,pages=2", sim.Fault{Endpoint: "cards", Kind: sim.FaultTotalChange, TotalDelta: -3, Pages: []int{2}}},
		{"oversize=9000000", sim.Fault{Kind: sim.FaultOversize, PadBytes: 9000000}},
		{"cards:shuffle-members", sim.Fault{Endpoint: "cards", Kind: sim.FaultShuffleMembers}},
		{"secrets-in-data,times=2", sim.Fault{Kind: sim.FaultSecretsInData, Times: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := sim.ParseFault(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			again, err := sim.ParseFault(got.String())
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("String() %q does not round-trip: %+v, %v", got.String(), again, err)
			}
		})
	}
	for _, bad := range []string{"", "explode", "cards:status=abc", "status=99", "reset=1", "status=503,times", "status=503,bogus=1",
		"latency", "latency=fast", "foreign=/relative", "status=503,pages=0", "status=503,pages=4-2", "status=503,percent=101", "status=503,times=-1"} {
		if _, err := sim.ParseFault(bad); !errors.Is(err, sim.ErrBadFault) {
			t.Errorf("ParseFault(%q) error = %v, want ErrBadFault", bad, err)
		}
	}
}

func TestRegisterFlags(t *testing.T) {
	var o sim.Options
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.RegisterFlags(fs)
	if o.Cards != 500 || o.Seed != 1 || o.Email != "demo@example.com" || o.Password != "demo" || o.Window != time.Minute {
		t.Errorf("defaults %+v", o)
	}
	err := fs.Parse([]string{"-cards", "7", "-seed", "9", "-email", "a@b.c", "-password", "pw", "-window", "2s",
		"-token-shape", "data.token", "-token-status", "201", "-string-ids", "-pan", "-extra-fields", "-sliding",
		"-fault", "cards:status=503,times=1", "-fault", "account:reset"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Cards != 7 || o.Seed != 9 || o.Email != "a@b.c" || o.Password != "pw" || o.Window != 2*time.Second ||
		o.TokenShape != sim.TokenShapeDataToken || o.TokenStatus != 201 || !o.StringIDs || !o.IncludePAN || !o.ExtraFields ||
		!o.Sliding || len(o.Faults) != 2 || o.Faults[1].Kind != sim.FaultReset {
		t.Errorf("parsed %+v", o)
	}
	for _, args := range [][]string{{"-token-status", "202"}, {"-token-shape", "jwt"}, {"-fault", "nope"}} {
		fs := flag.NewFlagSet("sim", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		new(sim.Options).RegisterFlags(fs)
		if fs.Parse(args) == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
