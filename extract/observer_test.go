package extract

import (
	"fmt"
	"sync"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// recorder is an Observer that counts what it is told.
type recorder struct {
	mu       sync.Mutex
	requests map[string]int // "endpoint status"
	retries  map[string]int
	limited  map[string]int
	tokens   int
}

func newRecorder() *recorder {
	return &recorder{requests: map[string]int{}, retries: map[string]int{}, limited: map[string]int{}}
}

func (r *recorder) Request(endpoint string, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[fmt.Sprintf("%s %d", endpoint, status)]++
}

func (r *recorder) Retry(endpoint string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retries[endpoint]++
}

func (r *recorder) RateLimited(endpoint string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.limited[endpoint]++
}

func (r *recorder) TokenRequest() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tokens++
}

func TestObserverSeesWhatStatsCount(t *testing.T) {
	rec := newRecorder()
	faults := []sim.Fault{
		{Endpoint: "cards", Pages: []int{2}, Kind: sim.FaultRateLimit, Times: 1},
		{Endpoint: "account", Kind: sim.FaultStatus, Status: 503, Times: 1},
	}
	e := newEnv(t, sim.Options{Cards: 40, Faults: faults}, func(c *Config) { c.Observer = rec })
	if _, err := e.c.Account(t.Context()); err != nil {
		t.Fatalf("Account: %v", err)
	}
	if _, err := walk(t, e.c, 1); err != nil {
		t.Fatalf("walk: %v", err)
	}
	want := map[string]int{"token 200": 1, "account 503": 1, "account 200": 1, "cards 429": 1, "cards 200": 3}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for k, n := range want {
		if rec.requests[k] != n {
			t.Errorf("requests[%q] = %d, want %d (all: %v)", k, rec.requests[k], n, rec.requests)
		}
	}
	if len(rec.requests) != len(want) {
		t.Errorf("requests = %v, want %v", rec.requests, want)
	}
	if rec.retries["cards"] != 1 || rec.retries["account"] != 1 || len(rec.retries) != 2 {
		t.Errorf("retries = %v, want cards 1, account 1", rec.retries)
	}
	if rec.limited["cards"] != 1 || len(rec.limited) != 1 {
		t.Errorf("rate limited = %v, want cards 1", rec.limited)
	}
	if rec.tokens != 1 {
		t.Errorf("token requests = %d, want 1", rec.tokens)
	}
	// The observer and Stats count the same events.
	st := e.c.Stats()
	total := 0
	for _, n := range rec.requests {
		total += n
	}
	if int64(total) != st.Requests || st.Retries != 2 || st.RateLimited != 1 || st.AuthRequests != int64(rec.tokens) {
		t.Errorf("stats %+v; observer saw %d requests, %d token requests", st, total, rec.tokens)
	}
}

func TestObserverNetworkErrorIsStatusZero(t *testing.T) {
	rec := newRecorder()
	e := newEnv(t, sim.Options{Cards: 5, Faults: []sim.Fault{{Endpoint: "account", Kind: sim.FaultReset, Times: 3}}},
		func(c *Config) { c.Observer = rec })
	if _, err := e.c.Account(t.Context()); err != nil {
		t.Fatalf("Account: %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.requests["account 0"] == 0 || rec.requests["account 200"] != 1 {
		t.Errorf("requests = %v, want account 0 at least once and account 200 once", rec.requests)
	}
}

func TestStatusClass(t *testing.T) {
	tests := []struct {
		status int
		want   string
	}{
		{0, "network"}, {200, "2xx"}, {201, "2xx"}, {302, "3xx"}, {401, "401"}, {403, "4xx"}, {404, "4xx"},
		{429, "429"}, {500, "5xx"}, {503, "5xx"}, {99, "other"}, {600, "other"},
	}
	classes := map[string]bool{}
	for _, c := range StatusClasses() {
		classes[c] = true
	}
	for _, tt := range tests {
		got := StatusClass(tt.status)
		if got != tt.want {
			t.Errorf("StatusClass(%d) = %q, want %q", tt.status, got, tt.want)
		}
		if !classes[got] {
			t.Errorf("StatusClass(%d) = %q, not in StatusClasses()", tt.status, got)
		}
	}
}
