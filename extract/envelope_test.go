package extract

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

const accountBody = `{"data":{"name":"A","email":null,"timezone":null,"transfer_amount":null,"reach_amount":null,"authorizations":null,"balance":null,"cards_balance":null,"available_recharge_balance":null,"available_to_apply_card_count":null,"applied_card_count":null}}`

// TestShortTokenLifetime: an expires_in under a minute is raised to one,
// with one warning, so the client does not fetch a token per request.
func TestShortTokenLifetime(t *testing.T) {
	for _, expiresIn := range []string{`"0.000001"`, `1`, `0.5`, `59`} {
		t.Run(expiresIn, func(t *testing.T) {
			var tokens atomic.Int64
			var logs bytes.Buffer
			c, _, clk := handlerEnv(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/auth/access-token" {
					tokens.Add(1)
					writeJSON(w, http.StatusOK, `{"access_token":"tok-1","expires_in":`+expiresIn+`}`)
					return
				}
				writeJSON(w, http.StatusOK, accountBody)
			}, func(cfg *Config) {
				cfg.Logger = slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))
			})
			for range 10 {
				if _, err := c.Account(t.Context()); err != nil {
					t.Fatal(err)
				}
				clk.Advance(4 * time.Second)
			}
			if got := tokens.Load(); got != 1 {
				t.Errorf("token requests in 40s = %d, want 1 (lifetime raised to %s)", got, MinTokenTTL)
			}
			clk.Advance(time.Minute)
			for range 3 {
				if _, err := c.Account(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if got := tokens.Load(); got != 2 {
				t.Errorf("token requests after the minimum lifetime = %d, want 2", got)
			}
			if n := strings.Count(logs.String(), "token lifetime too short"); n != 1 {
				t.Errorf("%d warnings about the lifetime, want 1:\n%s", n, logs.String())
			}
		})
	}
}

// TestNoContent: a 204 where JSON is expected is its own error, not
// retried and not "service unavailable".
func TestNoContent(t *testing.T) {
	for _, path := range []string{"/account", "/cards"} {
		t.Run(path, func(t *testing.T) {
			var hits atomic.Int64
			c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"tok-1"}`, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.WriteHeader(http.StatusNoContent)
			}), nil)
			var err error
			if path == "/account" {
				_, err = c.Account(t.Context())
			} else {
				_, err = walk(t, c, 1)
			}
			var pe *ProtocolError
			if !errors.Is(err, ErrNoContent) || !errors.As(err, &pe) || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "204 No Content") {
				t.Fatalf("err = %v; want a *ProtocolError wrapping ErrNoContent, not ErrUnavailable, saying 204 No Content", err)
			}
			if got := hits.Load(); got != 1 {
				t.Errorf("%d requests to %s, want 1 (not retried)", got, path)
			}
		})
	}
}

// TestRedirectRefused: no redirect is followed; one on the same origin is
// ErrRedirect (not foreign), one elsewhere is ErrRedirect and
// ErrForeignOrigin; neither is retried.
func TestRedirectRefused(t *testing.T) {
	for _, tt := range []struct {
		name, location string
		foreign        bool
		want           string
	}{
		{"same origin", "/login", false, "to /login on the same origin (check api.base_url)"},
		{"same origin, absolute", "SELF/v2/cards?page=1", false, "to /v2/cards on the same origin"},
		{"foreign", "https://elsewhere.example/cards?page=1", true, "to another origin, https://elsewhere.example/cards?page=1"},
		{"no location", "", false, "without a usable Location"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int64
			var self string
			c, srv, _ := handlerEnv(t, tokenThen(`{"access_token":"tok-1"}`, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				if tt.location != "" {
					w.Header().Set("Location", strings.Replace(tt.location, "SELF", self, 1))
				}
				w.WriteHeader(http.StatusFound)
			}), nil)
			self = srv.URL
			_, err := walk(t, c, 1)
			var re *RedirectError
			if !errors.Is(err, ErrRedirect) || !errors.As(err, &re) || re.StatusCode != http.StatusFound || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v; want a *RedirectError (302) containing %q", err, tt.want)
			}
			if got := errors.Is(err, ErrForeignOrigin); got != tt.foreign {
				t.Errorf("errors.Is(err, ErrForeignOrigin) = %v, want %v", got, tt.foreign)
			}
			if got := hits.Load(); got != 1 {
				t.Errorf("%d requests, want 1 (not retried, not followed)", got)
			}
		})
	}
}

// TestContentTypeIgnoredForJSON: a body that parses is read whatever its
// Content-Type; one that does not is refused, naming the type, and not
// retried.
func TestContentTypeIgnoredForJSON(t *testing.T) {
	for _, tt := range []struct {
		name, ct, body, want string
	}{
		{"text/plain", "text/plain; charset=UTF-8", accountBody, ""},
		{"text/html", "text/html; charset=UTF-8", accountBody, ""},
		{"none", "", accountBody, ""},
		{"BOM and text/html", "text/html", "\xEF\xBB\xBF" + accountBody, ""},
		{"HTML page", "text/html; charset=UTF-8", "<!DOCTYPE html><html><body>Login</body></html>", "response is not JSON (Content-Type text/html; charset=UTF-8)"},
		{"garbage without a type", "", "Whoops, looks like something went wrong.", "response is not JSON (Content-Type none)"},
		{"empty text/plain", "text/plain", "", "response is not JSON (Content-Type text/plain)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int64
			c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"tok-1"}`, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.Header()["Content-Type"] = nil // no sniffing
				if tt.ct != "" {
					w.Header().Set("Content-Type", tt.ct)
				}
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write([]byte(tt.body))
			}), nil)
			a, err := c.Account(t.Context())
			if tt.want == "" {
				if err != nil || a.Name == nil || *a.Name != "A" {
					t.Fatalf("Account = %+v, %v; want name A", a, err)
				}
				return
			}
			var pe *ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v; want a *ProtocolError containing %q", err, tt.want)
			}
			if got := hits.Load(); got != 1 {
				t.Errorf("%d requests, want 1 (not retried)", got)
			}
		})
	}
}

// TestErrorBodyWithBOM: an error body's message is read after a BOM and
// whatever its Content-Type.
func TestErrorBodyWithBOM(t *testing.T) {
	c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"tok-1"}`, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("\xEF\xBB\xBF" + `{"message":"This action is unauthorized.","status_code":403}`))
	}), nil)
	_, err := c.Account(t.Context())
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 403 || se.Message != "This action is unauthorized." {
		t.Fatalf("err = %v; want a 403 *StatusError with the message", err)
	}
}

// TestEnvelopeFaultsOverHTTP: the simulator's envelope faults, each
// reproducing a reply that stopped every sync, give the same cards as a
// clean walk; a 204 and a redirect give their own errors, not retried.
func TestEnvelopeFaultsOverHTTP(t *testing.T) {
	clean := newEnv(t, sim.Options{Cards: 47}, nil)
	want, err := walk(t, clean.c, 1)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(pages []*Page) []string {
		var out []string
		for _, p := range pages {
			for _, c := range p.Cards {
				out = append(out, c.ID+"="+string(c.Raw))
			}
		}
		return out
	}
	for _, fault := range []string{"cards:links-shapes", "bom", "content-type", "deep-meta", "cards:deep-meta,pages=2"} {
		t.Run(fault, func(t *testing.T) {
			f, err := sim.ParseFault(fault)
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, sim.Options{Cards: 47, Faults: []sim.Fault{f}}, nil)
			if _, err := e.c.Account(t.Context()); err != nil {
				t.Fatalf("Account: %v", err)
			}
			got, err := walk(t, e.c, 1)
			if err != nil {
				t.Fatalf("walk: %v", err)
			}
			if !slices.Equal(ids(got), ids(want)) {
				t.Errorf("cards differ from a clean walk: %d pages, want %d", len(got), len(want))
			}
			if st := e.sim.Stats(); st.Faults == 0 || e.c.Stats().Retries != 0 {
				t.Errorf("faults served %d, retries %d; want some and none", st.Faults, e.c.Stats().Retries)
			}
			if strings.Contains(e.log.String(), "level=WARN") {
				t.Errorf("warnings for a readable envelope:\n%s", e.log.String())
			}
		})
	}
	for _, tt := range []struct {
		fault string
		is    error
		not   error
	}{
		{"cards:no-content,pages=2", ErrNoContent, ErrUnavailable},
		{"account:no-content", ErrNoContent, ErrUnavailable},
		{"cards:redirect,pages=2", ErrRedirect, ErrForeignOrigin},
		{"cards:redirect=https://other.example/cards", ErrForeignOrigin, ErrUnavailable},
	} {
		t.Run(tt.fault, func(t *testing.T) {
			f, err := sim.ParseFault(tt.fault)
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, sim.Options{Cards: 47, Faults: []sim.Fault{f}}, nil)
			if f.Endpoint == "account" {
				_, err = e.c.Account(t.Context())
			} else {
				_, err = walk(t, e.c, 1)
			}
			if !errors.Is(err, tt.is) || errors.Is(err, tt.not) {
				t.Fatalf("err = %v; want errors.Is %v and not %v", err, tt.is, tt.not)
			}
			if st := e.sim.Stats(); st.Faults != 1 || e.c.Stats().Retries != 0 {
				t.Errorf("faults served %d, retries %d; want 1 and 0 (not retried)", st.Faults, e.c.Stats().Retries)
			}
		})
	}
}

// TestLinksForeignWarnedOncePerWalk: links.next on another origin is a
// warning, once per walk, and never contacted.
func TestLinksForeignWarnedOncePerWalk(t *testing.T) {
	e := newEnv(t, sim.Options{Cards: 47, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultForeignNext, URL: "http://other.example:9"}}}, nil)
	for range 2 {
		if _, err := walk(t, e.c, 1); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(e.log.String(), "links.next names another origin"); n != 2 {
		t.Errorf("%d warnings in two walks, want 2:\n%s", n, e.log.String())
	}
}
