package extract

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/sim"
)

func TestTokenShapes(t *testing.T) {
	for _, shape := range []sim.TokenShape{sim.TokenShapeAccessToken, sim.TokenShapeToken, sim.TokenShapeDataAccessToken, sim.TokenShapeDataToken} {
		for _, status := range []int{200, 201} {
			t.Run(shape.String()+"/"+http.StatusText(status), func(t *testing.T) {
				e := newEnv(t, sim.Options{Cards: 20, TokenShape: shape, TokenStatus: status}, nil)
				if err := e.c.Authenticate(t.Context()); err != nil {
					t.Fatalf("Authenticate: %v", err)
				}
				if err := e.c.Authenticate(t.Context()); err != nil {
					t.Fatalf("second Authenticate: %v", err)
				}
				if _, err := walk(t, e.c, 1); err != nil {
					t.Fatalf("walk: %v", err)
				}
				if got := e.sim.Stats().TokenRequests; got != 1 {
					t.Errorf("token requests = %d, want 1 (cached)", got)
				}
				if got := e.c.Stats().AuthRequests; got != 1 {
					t.Errorf("Stats.AuthRequests = %d, want 1", got)
				}
			})
		}
	}
}

func TestTokenParsing(t *testing.T) {
	now := sim.NewClock()
	tests := []struct {
		name    string
		field   string
		body    string
		wantTTL time.Duration
		wantErr string // substring; "" = success
	}{
		{"access_token expires_in number", "", `{"access_token":"a.b.c","expires_in":3600}`, time.Hour, ""},
		{"expires_in string", "", `{"access_token":"a.b.c","expires_in":"7200"}`, 2 * time.Hour, ""},
		{"no expiry", "", `{"token":"tok"}`, 24 * time.Hour, ""},
		{"accessToken", "", `{"accessToken":"tok","expiresIn":5}`, 24 * time.Hour, ""},
		{"data.token with top-level expiry", "", `{"data":{"token":"tok"},"expires_in":60}`, time.Minute, ""},
		{"expires_at rfc3339", "", `{"token":"tok","expires_at":"2026-03-01T13:00:00Z"}`, time.Hour, ""},
		{"expires_at +0000", "", `{"token":"tok","expires_at":"2026-03-01T12:30:00+0000"}`, 30 * time.Minute, ""},
		{"order: access_token before token", "", `{"token":"second","access_token":"first"}`, 24 * time.Hour, ""},
		{"override", "result.jwt", `{"result":{"jwt":"tok","expires_in":10}}`, 10 * time.Second, ""},
		{"override misses", "result.jwt", `{"access_token":"VALUE-NOT-SHOWN"}`, 0, "top-level keys: [access_token]"},
		{"no token lists keys only", "", `{"tok":"VALUE-NOT-SHOWN","expires_in":1}`, 0, "top-level keys: [expires_in tok]"},
		{"token not a string", "", `{"access_token":12345}`, 0, "not a string"},
		{"token with space", "", `{"access_token":"a b"}`, 0, "printable ASCII"},
		{"empty token", "", `{"access_token":""}`, 0, "empty"},
		{"not an object", "", `["VALUE-NOT-SHOWN"]`, 0, "token response must be an object"},
		{"leading BOM", "", "\xEF\xBB\xBF" + `{"access_token":"a.b.c","expires_in":3600}`, time.Hour, ""},
		{"deep sibling", "", `{"debug":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `,"access_token":"a.b.c","expires_in":3600}`, time.Hour, ""},
		{"deep sibling inside data", "", `{"data":{"debug":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `,"token":"a.b.c"},"expires_in":3600}`, time.Hour, ""},
		{"duplicate key: the last wins", "", `{"access_token":"first","access_token":"a.b.c","expires_in":1,"expires_in":3600}`, time.Hour, ""},
		{"trailing data", "", `{"access_token":"x"} {}`, 0, "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{cfg: &Config{TokenField: tt.field, Clock: now, Secrets: &redact.Secrets{}}, clk: now}
			tok, ttl, err := c.parseToken([]byte(tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "VALUE-NOT-SHOWN") {
					t.Fatalf("error shows a value: %v", err)
				}
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("err %T is not a *ProtocolError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseToken: %v", err)
			}
			if tok == "" || ttl != tt.wantTTL {
				t.Errorf("ttl = %v, want %v (token set: %v)", ttl, tt.wantTTL, tok != "")
			}
		})
	}
}

func TestTokenFieldOverrideOverHTTP(t *testing.T) {
	var authHeader string
	c, _, _ := handlerEnv(t, tokenThen(`{"result":{"jwt":"jwt-123"}}`, func(w http.ResponseWriter, r *http.Request) {
		authHeader = r.Header.Get("Authorization")
		writeJSON(w, 200, `{"data":{"name":"x"}}`)
	}), func(c *Config) { c.TokenField = "result.jwt" })
	if _, err := c.Account(t.Context()); err != nil {
		t.Fatalf("Account: %v", err)
	}
	if authHeader != "Bearer jwt-123" {
		t.Errorf("Authorization = %q, want the overridden token", authHeader)
	}
}

func TestWrongCredentials(t *testing.T) {
	e := newEnv(t, sim.Options{Cards: 5}, func(c *Config) { c.Password = "wrong-password" })
	_, err := e.c.Account(t.Context())
	if !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("err = %v, want ErrUnauthenticated", err)
	}
	if !strings.Contains(err.Error(), "credentials rejected") {
		t.Errorf("err = %v, want it to say the credentials were rejected", err)
	}
	if strings.Contains(err.Error(), "wrong-password") {
		t.Errorf("error shows the password")
	}
	st := e.sim.Stats()
	if st.TokenRequests != 1 || st.Requests[sim.EndpointAccount] != 0 {
		t.Errorf("token requests %d, account requests %d; want 1 and 0", st.TokenRequests, st.Requests[sim.EndpointAccount])
	}
}

// TestTokenEndpointValidationError: a 422 from the token endpoint keeps
// its fields and counts as refused credentials.
func TestTokenEndpointValidationError(t *testing.T) {
	c, _, _ := handlerEnv(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 422, `{"message":"The given data was invalid.","errors":{"email":["The email field is required."]},"status_code":422}`)
	}, nil)
	err := c.Authenticate(t.Context())
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 422 || se.Fields["email"][0] != "The email field is required." {
		t.Fatalf("err = %v, want a 422 *StatusError with the field message", err)
	}
	// Laravel refuses a sign-in by validation with 422 (a wrong password,
	// an empty field): the credentials are refused (exit 3, the
	// credentials advice), never retried as unavailability.
	if errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("422 from the token endpoint: %v; want ErrUnauthenticated, not ErrUnavailable", err)
	}
}

// TestValidationErrorElsewhereIsNotCredentials: a 422 from another
// endpoint is the request's fault, not the credentials'.
func TestValidationErrorElsewhereIsNotCredentials(t *testing.T) {
	e := newEnv(t, sim.Options{Cards: 5, Faults: []sim.Fault{{Kind: sim.FaultStatus, Status: 422, Endpoint: "account"}}}, nil)
	_, err := e.c.Account(t.Context())
	if err == nil || errors.Is(err, ErrUnauthenticated) {
		t.Errorf("422 from /account: %v; want an error that is not ErrUnauthenticated", err)
	}
}

func TestTokenExpiryAndRefresh(t *testing.T) {
	e := newEnv(t, sim.Options{Cards: 30, TokenTTL: time.Hour}, nil)
	ctx := t.Context()
	if _, err := e.c.Account(ctx); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(50 * time.Minute) // 10 min left: still outside the 5 min margin
	if _, err := e.c.Account(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.sim.Stats().TokenRequests; got != 1 {
		t.Fatalf("token requests after 50m = %d, want 1", got)
	}
	e.clk.Advance(6 * time.Minute) // 4 min left: refresh ahead of expiry
	if _, err := walk(t, e.c, 1); err != nil {
		t.Fatal(err)
	}
	st := e.sim.Stats()
	if st.TokenRequests != 2 || st.Unauthorized != 0 {
		t.Errorf("token requests %d, 401s %d; want 2 and 0 (proactive refresh)", st.TokenRequests, st.Unauthorized)
	}
	e.clk.Advance(2 * time.Hour) // past expiry: one refresh, no 401
	if _, err := e.c.Account(ctx); err != nil {
		t.Fatal(err)
	}
	if st := e.sim.Stats(); st.TokenRequests != 3 || st.Unauthorized != 0 {
		t.Errorf("token requests %d, 401s %d; want 3 and 0", st.TokenRequests, st.Unauthorized)
	}
}

func TestUnauthorizedMidWalk(t *testing.T) {
	t.Run("RevokeTokens after page 3", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 100}, nil)
		e.sim.OnPageServed(func(p int) {
			if p == 3 {
				e.sim.RevokeTokens()
			}
		})
		pages, err := walk(t, e.c, 1)
		if err != nil {
			t.Fatalf("walk: %v", err)
		}
		st := e.sim.Stats()
		if len(pages) != 7 || st.TokenRequests != 2 || st.Unauthorized != 1 || st.PageRequests[4] != 2 {
			t.Errorf("pages %d, token requests %d, 401s %d, page 4 requests %d; want 7, 2, 1, 2",
				len(pages), st.TokenRequests, st.Unauthorized, st.PageRequests[4])
		}
	})
	t.Run("revoke fault", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 100, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultRevoke, Pages: []int{5}, Times: 1}}}, nil)
		if _, err := walk(t, e.c, 1); err != nil {
			t.Fatalf("walk: %v", err)
		}
		if st := e.sim.Stats(); st.TokenRequests != 2 || st.Unauthorized != 1 {
			t.Errorf("token requests %d, 401s %d; want 2 and 1", st.TokenRequests, st.Unauthorized)
		}
	})
	t.Run("second 401 is final", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 100, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultRevoke, Pages: []int{2}}}}, nil)
		pages, err := walk(t, e.c, 1)
		if !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("err = %v, want ErrUnauthenticated", err)
		}
		if errors.Is(err, ErrUnavailable) {
			t.Errorf("auth failure also classified as unavailable: %v", err)
		}
		if st := e.sim.Stats(); len(pages) != 1 || st.TokenRequests != 2 || st.PageRequests[2] != 2 {
			t.Errorf("pages %d, token requests %d, page 2 requests %d; want 1, 2, 2", len(pages), st.TokenRequests, st.PageRequests[2])
		}
	})
}

func TestConcurrentCallersShareOneRefresh(t *testing.T) {
	e := newEnv(t, sim.Options{Cards: 10}, func(c *Config) { c.RateLimit = Rate{N: 1000, Per: time.Second} })
	if err := e.c.Authenticate(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.sim.RevokeTokens()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			if _, err := e.c.Account(t.Context()); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Account: %v", err)
	}
	if got := e.sim.Stats().TokenRequests; got != 2 {
		t.Errorf("token requests = %d, want 2 (one shared refresh)", got)
	}
}
