package sim_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

const (
	unauthenticated = `{"message":"Unauthenticated.","status_code":401}`
	tokenPath       = "/auth/access-token"
)

func TestTokenEndpointErrors(t *testing.T) {
	e := start(t, sim.Options{AuthLimit: 100})
	form := "application/x-www-form-urlencoded"
	tests := []struct {
		name, ct, body string
		status         int
		want           string
	}{
		{"malformed JSON", "application/json", `{"email":`, 400, `{"message":"Problems parsing JSON"}`},
		{"not JSON at all", "application/json", `email=x`, 400, `{"message":"Problems parsing JSON"}`},
		{"wrong type email", "application/json", `{"email":5,"password":"s3cret"}`, 400, ""},
		{"wrong type password", "application/json", `{"email":"ops@example.com","password":["x"]}`, 400, ""},
		{"array body", "application/json", `["ops@example.com"]`, 400, ""},
		{"missing password", "application/json", `{"email":"ops@example.com"}`, 422,
			`{"message":"The given data was invalid.","errors":{"password":["The password field is required."]},"status_code":422}`},
		{"missing email", "application/json", `{"password":"s3cret"}`, 422,
			`{"message":"The given data was invalid.","errors":{"email":["The email field is required."]},"status_code":422}`},
		{"empty email", "application/json", `{"email":"","password":"s3cret"}`, 422,
			`{"message":"The given data was invalid.","errors":{"email":["The email field is required."]},"status_code":422}`},
		{"null email blank password", "application/json", `{"email":null,"password":"  "}`, 422,
			`{"message":"The given data was invalid.","errors":{"email":["The email field is required."],"password":["The password field is required."]},"status_code":422}`},
		{"empty body", "application/json", ``, 422,
			`{"message":"The given data was invalid.","errors":{"email":["The email field is required."],"password":["The password field is required."]},"status_code":422}`},
		{"form missing password", form, `email=ops%40example.com`, 422,
			`{"message":"The given data was invalid.","errors":{"password":["The password field is required."]},"status_code":422}`},
		{"wrong password", "application/json", `{"email":"ops@example.com","password":"nope"}`, 401, unauthenticated},
		{"wrong email", "application/json", `{"email":"x@example.com","password":"s3cret"}`, 401, unauthenticated},
		{"form wrong password", form, `email=ops%40example.com&password=nope`, 401, unauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(http.MethodPost, tokenPath, "", tt.ct, tt.body)
			wantStatusBody(t, r, tt.status, tt.want)
			m := r.json(t)
			if msg, _ := m["message"].(string); msg == "" {
				t.Errorf("error body %s has no message", r.body)
			}
		})
	}
}

func TestTokenShapes(t *testing.T) {
	tests := []struct {
		shape  sim.TokenShape
		status int
		path   []string
		extra  bool // token_type and expires_in
	}{
		{sim.TokenShapeAccessToken, 200, []string{"access_token"}, true},
		{sim.TokenShapeAccessToken, 201, []string{"access_token"}, true},
		{sim.TokenShapeToken, 200, []string{"token"}, false},
		{sim.TokenShapeToken, 201, []string{"token"}, false},
		{sim.TokenShapeDataAccessToken, 200, []string{"data", "access_token"}, true},
		{sim.TokenShapeDataAccessToken, 201, []string{"data", "access_token"}, true},
		{sim.TokenShapeDataToken, 200, []string{"data", "token"}, false},
		{sim.TokenShapeDataToken, 201, []string{"data", "token"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.shape.String()+"/"+http.StatusText(tt.status), func(t *testing.T) {
			e := start(t, sim.Options{TokenShape: tt.shape, TokenStatus: tt.status, Cards: 1})
			for _, ct := range []string{"json", "form"} {
				var r reply
				if ct == "json" {
					r = e.login()
				} else {
					v := url.Values{"email": {e.opts.Email}, "password": {e.opts.Password}}
					r = e.do(http.MethodPost, tokenPath, "", "application/x-www-form-urlencoded", v.Encode())
				}
				wantStatusBody(t, r, tt.status, "")
				if cc := r.header.Get("Cache-Control"); cc != "no-cache, private" {
					t.Errorf("cache-control = %q", cc)
				}
				m := r.json(t)
				obj := m
				for _, k := range tt.path[:len(tt.path)-1] {
					obj, _ = obj[k].(map[string]any)
				}
				tok, _ := obj[tt.path[len(tt.path)-1]].(string)
				if tok == "" {
					t.Fatalf("%s: no token at %v in %s", ct, tt.path, r.body)
				}
				if tt.extra {
					if obj["token_type"] != "bearer" || obj["expires_in"] != float64(86400) {
						t.Errorf("token_type/expires_in = %v/%v, want bearer/86400", obj["token_type"], obj["expires_in"])
					}
				} else if len(obj) != 1 {
					t.Errorf("token object %v has extra keys", obj)
				}
				// The token is JWT-shaped with an exp claim 24 h after issue.
				parts := strings.Split(tok, ".")
				if len(parts) != 3 {
					t.Fatalf("token %q is not three dot-separated parts", tok)
				}
				claims, err := base64.RawURLEncoding.DecodeString(parts[1])
				if err != nil {
					t.Fatal(err)
				}
				var c struct{ Exp int64 }
				if err := json.Unmarshal(claims, &c); err != nil || c.Exp != e.clock.Now().Add(24*time.Hour).Unix() {
					t.Errorf("exp claim %d (%v), want now+24h", c.Exp, err)
				}
				wantStatusBody(t, e.get("/account", tok), 200, "")
			}
		})
	}
}

func TestAuthorizationRequired(t *testing.T) {
	e := start(t, sim.Options{Cards: 3})
	tok := e.token()
	other := start(t, sim.Options{Cards: 3}).token() // valid elsewhere only
	tests := []struct {
		name, header string
	}{
		{"none", ""},
		{"empty bearer", "Bearer "},
		{"wrong scheme", "Basic " + tok},
		{"unknown token", "Bearer not-a-token"},
		{"token of another server", "Bearer " + other},
		{"no space", "Bearer" + tok},
	}
	for _, path := range []string{"/account", "/cards", "/cards?page=2"} {
		for _, tt := range tests {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.ts.URL+path, nil)
				if tt.header != "" {
					req.Header.Set("Authorization", tt.header)
				}
				res, err := e.ts.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				var body bytes.Buffer
				_, _ = body.ReadFrom(res.Body)
				if res.StatusCode != 401 || body.String() != unauthenticated {
					t.Errorf("got %d %s, want 401 %s", res.StatusCode, body.String(), unauthenticated)
				}
			})
		}
	}
	// Lower-case scheme is accepted, as by Laravel.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.ts.URL+"/account", nil)
	req.Header.Set("Authorization", "bearer "+tok)
	res, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("lower-case bearer: status %d, want 200", res.StatusCode)
	}
	if got := e.sim.Stats().Unauthorized; got != int64(3*len(tests)) {
		t.Errorf("Stats().Unauthorized = %d, want %d", got, 3*len(tests))
	}
}

func TestTokenExpiry(t *testing.T) {
	e := start(t, sim.Options{Cards: 1})
	tok := e.token()
	e.clock.Advance(24*time.Hour - time.Second)
	wantStatusBody(t, e.get("/account", tok), 200, "")
	e.clock.Advance(time.Second)
	wantStatusBody(t, e.get("/account", tok), 401, unauthenticated)
	tok2 := e.token()
	if tok2 == tok {
		t.Fatal("new token equals the expired one")
	}
	wantStatusBody(t, e.get("/account", tok2), 200, "")

	// Custom TTL.
	e2 := start(t, sim.Options{Cards: 1, TokenTTL: time.Hour})
	r := e2.login()
	if got := r.json(t)["expires_in"]; got != float64(3600) {
		t.Errorf("expires_in = %v, want 3600", got)
	}
	tok3 := e2.token()
	e2.clock.Advance(time.Hour)
	wantStatusBody(t, e2.get("/account", tok3), 401, unauthenticated)
}

func TestRevokeTokens(t *testing.T) {
	e := start(t, sim.Options{Cards: 1})
	tok := e.token()
	e.sim.RevokeTokens()
	wantStatusBody(t, e.get("/account", tok), 401, unauthenticated)
	wantStatusBody(t, e.get("/account", e.token()), 200, "")
}
