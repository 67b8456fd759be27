package extract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

func TestNewValidatesBaseURL(t *testing.T) {
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"https://api.example.com", true},
		{"https://api.example.com/api/v1/", true},
		{"http://127.0.0.1:8080", true},
		{"http://127.1.2.3", true},
		{"http://localhost:9000", true},
		{"http://[::1]:9000", true},
		{"http://api.example.com", false},
		{"http://10.0.0.1", false},
		{"http://localhost.evil.com", false},
		{"ftp://127.0.0.1", false},
		{"https://user:pw@api.example.com", false},
		{"https://api.example.com?x=1", false},
		{"api.example.com", false},
		{"", false},
	} {
		_, err := New(Config{BaseURL: tt.url, Email: "a@b", Password: "p"})
		if (err == nil) != tt.ok {
			t.Errorf("New(%q): err = %v, want ok=%v", tt.url, err, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("New(%q): error shows userinfo: %v", tt.url, err)
		}
	}
	if _, err := New(Config{BaseURL: "https://x.example"}); err == nil {
		t.Error("New without credentials succeeded")
	}
}

func TestRequestHeaders(t *testing.T) {
	seen := map[string]http.Header{}
	c, _, _ := handlerEnv(t, func(w http.ResponseWriter, r *http.Request) {
		seen[r.Method+" "+r.URL.Path] = r.Header.Clone()
		if r.URL.Path == "/auth/access-token" {
			var body map[string]string
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body["email"] != testEmail || body["password"] != testPassword {
				t.Errorf("token body %v, %v", body, err)
			}
			writeJSON(w, 201, `{"access_token":"abc"}`)
			return
		}
		writeJSON(w, 200, `{"data":{}}`)
	}, func(c *Config) { c.UserAgent = "cardsync/1.2.3" })
	if _, err := c.Account(t.Context()); err != nil {
		t.Fatal(err)
	}
	post, get := seen["POST /auth/access-token"], seen["GET /account"]
	if post.Get("Content-Type") != "application/json" || post.Get("Accept") != "application/json" || post.Get("User-Agent") != "cardsync/1.2.3" || post.Get("Authorization") != "" {
		t.Errorf("token request headers %v", post)
	}
	if get.Get("Authorization") != "Bearer abc" || get.Get("Accept") != "application/json" || get.Get("User-Agent") != "cardsync/1.2.3" {
		t.Errorf("account request headers %v", get)
	}
}

// TestSecretsNeverPrinted drives every failure path with a canary password
// and canary tokens, then greps every error, the debug log and every fmt
// rendering of Client and Config.
func TestSecretsNeverPrinted(t *testing.T) {
	const tokCanary = "tok-canary-5b2d8e"
	var texts []string
	check := func(what string, v ...any) {
		texts = append(texts, what+": "+fmt.Sprint(v...))
	}

	// 1. Against the sim, with faults and 401s; the sim's real token is read
	// back from the client so it can be grepped for too.
	e := newEnv(t, sim.Options{Cards: 100, IncludePAN: true, Faults: []sim.Fault{
		{Endpoint: "cards", Kind: sim.FaultStatus, Status: 503, Times: 1},
		{Endpoint: "cards", Kind: sim.FaultHTML, Times: 1},
		{Endpoint: "cards", Kind: sim.FaultRevoke, Pages: []int{3}, Times: 1},
		{Endpoint: "cards", Kind: sim.FaultForeignNext, URL: "http://user:" + testPassword + "@127.0.0.1:1", Pages: []int{4}},
	}}, func(c *Config) { c.MaxWait = time.Minute })
	_, err := walk(t, e.c, 1)
	check("walk error", err)
	simToken := e.c.auth.tok.Reveal()
	if simToken == "" {
		t.Fatal("no token cached")
	}
	e.sim.InjectFault(sim.Fault{Endpoint: "cards", Kind: sim.FaultRevoke})
	_, err = walk(t, e.c, 1)
	check("second walk", err)
	simToken2 := e.c.auth.tok.Reveal()
	check("client %v", fmt.Sprintf("%v %+v %#v %s", e.c, e.c, e.c, e.c))
	check("config", fmt.Sprintf("%v %+v %#v", *e.c.cfg, *e.c.cfg, e.c.cfg))
	check("token", fmt.Sprintf("%v %+v %#v %s %q %x", e.c.auth.tok, e.c.auth.tok, e.c.auth.tok, e.c.auth.tok, e.c.auth.tok, e.c.auth.tok))
	cfgJSON, _ := json.Marshal(struct{ P, T Secret }{e.c.cfg.Password, e.c.auth.tok})
	check("config json", string(cfgJSON))
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "password", e.c.cfg.Password, "cfg", *e.c.cfg)
	check("slog", logged.String())

	// 2. A server that issues a canary token and rejects everything.
	for _, status := range []int{401, 403, 422, 500} {
		c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"`+tokCanary+`"}`, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, status, `{"message":"no"}`)
		}), func(c *Config) { c.MaxWait = time.Second })
		_, err := c.Account(t.Context())
		check("canary account", err)
		_, err = walk(t, c, 1)
		check("canary walk", err)
	}
	// 2b. A server that echoes the request's secrets in its error bodies.
	for _, status := range []int{401, 403, 422, 500} {
		c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"`+tokCanary+`"}`, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, status, `{"message":"bad `+r.Header.Get("Authorization")+` for `+testPassword+`","errors":{"`+tokCanary+`":["`+tokCanary+`"]}}`)
		}), func(c *Config) { c.MaxWait, c.AuthRateLimit = time.Second, Rate{N: 100, Per: time.Second} })
		_, err := c.Account(t.Context())
		if err == nil || !strings.Contains(err.Error(), "bad Bearer "+redacted) {
			t.Errorf("status %d: error %v, want the echoed token replaced by %s", status, err, redacted)
		}
		check("echoing server", err)
	}
	// 3. Wrong credentials and a malformed token response.
	c, _, _ := handlerEnv(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"jwt":"`+tokCanary+`","password":"`+testPassword+`"}`)
	}, nil)
	check("malformed token", c.Authenticate(t.Context()))
	e2 := newEnv(t, sim.Options{}, func(c *Config) { c.Password = testPassword + "-wrong" })
	check("wrong credentials", e2.c.Authenticate(t.Context()))

	all := strings.Join(texts, "\n") + "\n" + e.log.String() + e2.log.String()
	if !strings.Contains(all, "another origin") {
		t.Errorf("the foreign-link path was not exercised:\n%s", all)
	}
	for _, secret := range []string{testPassword, tokCanary, simToken, simToken2} {
		if strings.Contains(all, secret) {
			t.Errorf("secret %.12s… leaked:\n%s", secret, all)
		}
	}
	if !strings.Contains(e.log.String(), "level=DEBUG") {
		t.Error("debug log is empty: the check proves nothing")
	}
}

// TestEchoedAuthorizationNeverLeaks attacks the error path as a hostile or
// careless server would: its error bodies echo the Authorization header at
// every offset from 0 to 600 bytes, followed by a tab, a quote, a newline
// or a NUL (escaped as JSON demands), in the message and in a 422 field
// message and key. No 8-character piece of the token, or of the password,
// may be left in the error or the client's log, whatever truncation did.
func TestEchoedAuthorizationNeverLeaks(t *testing.T) {
	const token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.c2lnbmF0dXJlLWNhbmFyeS04ZjNh"
	terms := map[string]string{"tab": `\t`, "quote": `\"`, "newline": `\n`, "NUL": `\u0000`}
	var offset, status int
	var term string
	c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"`+token+`"}`, func(w http.ResponseWriter, r *http.Request) {
		echo := strings.Repeat("x", offset) + "Authorization: " + r.Header.Get("Authorization") + term + " pw=" + testPassword + term + "tail"
		body := `{"message":"` + echo + `"}`
		if status == 422 {
			body = `{"message":"The given data was invalid.","errors":{"` + echo + `":["` + echo + `"]},"status_code":422}`
		}
		writeJSON(w, status, body)
	}), nil)
	var logs bytes.Buffer
	c.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	pieces := func(secret string) []string {
		var out []string
		for i := 0; i+8 <= len(secret); i++ {
			out = append(out, secret[i:i+8])
		}
		return out
	}
	secretPieces := append(pieces(token), pieces(testPassword)...)
	checked := 0
	for _, st := range []int{403, 422} {
		for name, tm := range terms {
			for offset = 0; offset <= 600; offset++ {
				status, term = st, tm
				_, err := c.Account(t.Context())
				if err == nil {
					t.Fatal("want an error")
				}
				text := err.Error() + "\n" + logs.String()
				for _, p := range secretPieces {
					if strings.Contains(text, p) {
						t.Fatalf("status %d, offset %d, %s: %q of a secret leaked in %q", st, offset, name, p, text)
					}
				}
				logs.Reset()
				checked++
			}
		}
	}
	if checked != 2*4*601 {
		t.Fatalf("checked %d bodies", checked)
	}
}
