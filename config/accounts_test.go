package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/extract"
)

func TestAccountsParsed(t *testing.T) {
	pwA := writeFile(t, "pw-a", "alpha-secret\n", 0o600)
	pwB := writeFile(t, "pw-b", "beta-secret\n", 0o600)
	file := `[api]
rate_limit = "30/1m"
token_field = "access"

[[accounts]]
name = "alpha"
base_url = "https://alpha.example.com/"
email = "a@example.com"
password_file = "` + pwA + `"
rate_group = "shared-ip"

[[accounts]]
name = "beta"
base_url = "https://beta.example.com"
email = "b@example.com"
password_file = "` + pwB + `"
token_field = "jwt"
rate_limit = "30/1m"
auth_rate_limit = "2/1m"
`
	cfg, err := Load(writeFile(t, "c.toml", file, 0o600), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Source("accounts.1.token_field").String(); !strings.HasSuffix(got, "c.toml:17") {
		t.Errorf("source of accounts.1.token_field = %s, want c.toml:17", got)
	}
	s, err := cfg.Settings(false, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []AccountSettings{
		{Name: "alpha", BaseURL: "https://alpha.example.com", Email: "a@example.com", TokenField: "access",
			RateLimit: extract.Rate{N: 30, Per: time.Minute}, AuthRateLimit: s.AuthRateLimit, RateGroup: "shared-ip"},
		{Name: "beta", BaseURL: "https://beta.example.com", Email: "b@example.com", TokenField: "jwt",
			RateLimit: extract.Rate{N: 30, Per: time.Minute}, AuthRateLimit: extract.Rate{N: 2, Per: time.Minute}},
	}
	if len(s.Accounts) != len(want) {
		t.Fatalf("accounts %+v, want %+v", s.Accounts, want)
	}
	for i := range want {
		if s.Accounts[i] != want[i] {
			t.Errorf("account %d = %+v, want %+v", i, s.Accounts[i], want[i])
		}
	}
	// The commands that talk to the API get every account, passwords
	// included.
	sa, err := cfg.Settings(true, noEnv)
	if err != nil {
		t.Fatalf("Settings(needAPI): %v", err)
	}
	if len(sa.Accounts) != 2 || sa.Accounts[0].Password.Reveal() == "" || sa.Accounts[1].Password.Reveal() == "" {
		t.Errorf("Settings(needAPI) accounts %v: want two, each with its password", sa.Accounts)
	}
	if c := s.ExtractConfigFor(s.Accounts[1]); c.BaseURL != "https://beta.example.com" || c.TokenField != "jwt" || c.Timeout != s.Timeout {
		t.Errorf("ExtractConfigFor(beta) = %+v", c)
	}
	if !s.NamedAccounts() {
		t.Error("two [[accounts]] do not count as named")
	}
	one := s
	one.Accounts = s.Accounts[:1]
	if !one.NamedAccounts() {
		t.Error("one [[accounts]] table named alpha does not count as named")
	}
}

func TestAPITableIsTheDefaultAccount(t *testing.T) {
	pw := writeFile(t, "pw", "s3cret\n", 0o600)
	file := "[api]\nbase_url = \"https://api.example.com\"\nemail = \"a@example.com\"\npassword_file = \"" + pw + "\"\n"
	path := writeFile(t, "c.toml", file, 0o600)
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Settings(true, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := AccountSettings{Name: "default", BaseURL: "https://api.example.com", Email: "a@example.com", Password: "s3cret",
		RateLimit: s.RateLimit, AuthRateLimit: s.AuthRateLimit,
		From: AccountSources{BaseURL: "api.base_url (" + path + ":2)", Email: "api.email (" + path + ":3)",
			Password: `api.password_file "` + pw + `" (` + path + ":4)"}}
	if len(s.Accounts) != 1 || s.Accounts[0] != want {
		t.Errorf("accounts %+v, want [%+v]", s.Accounts, want)
	}
	if s.LoadOptions().Account != "" {
		t.Errorf("load options name account %q; the default account is load's default", s.LoadOptions().Account)
	}
	if s.NamedAccounts() {
		t.Error("the [api] table's one account counts as named")
	}
}

func TestAccountErrors(t *testing.T) {
	pw := writeFile(t, "pw", "s3cret\n", 0o600)
	loosePW := writeFile(t, "pw-loose", "s3cret\n", 0o644)
	acct := func(name, extra string) string {
		return "[[accounts]]\nname = \"" + name + "\"\nbase_url = \"https://" + name + ".example.com\"\nemail = \"a@example.com\"\npassword_file = \"" + pw + "\"\n" + extra
	}
	tests := []struct {
		name     string
		file     string
		wantKey  string
		wantLine int
		wantMsg  string
	}{
		{name: "api base_url and accounts", file: "[api]\nbase_url = \"https://api.example.com\"\n\n" + acct("alpha", ""),
			wantKey: "accounts.0", wantLine: 4, wantMsg: "api.base_url (" /* and its line */},
		{name: "bad name", file: acct("Alpha", ""), wantKey: "accounts.0.name", wantLine: 2, wantMsg: "a-z, 0-9"},
		{name: "missing name", file: strings.Replace(acct("alpha", ""), "name = \"alpha\"\n", "", 1), wantKey: "accounts.0.name", wantLine: 1, wantMsg: `""`},
		{name: "duplicate name", file: acct("alpha", "") + acct("beta", "") + acct("alpha", ""), wantKey: "accounts.2.name", wantLine: 12, wantMsg: "name of accounts.0 ("},
		{name: "missing base url", file: strings.Replace(acct("alpha", ""), "base_url = \"https://alpha.example.com\"\n", "", 1), wantKey: "accounts.0.base_url", wantLine: 1, wantMsg: `required in account "alpha"`},
		{name: "http to a remote host", file: acct("alpha", "") + strings.Replace(acct("beta", ""), "https://", "http://", 1), wantKey: "accounts.1.base_url", wantLine: 8, wantMsg: "loopback"},
		{name: "missing email", file: strings.Replace(acct("alpha", ""), "email = \"a@example.com\"\n", "", 1), wantKey: "accounts.0.email", wantMsg: "required"},
		{name: "missing password", file: strings.Replace(acct("alpha", ""), "password_file = \""+pw+"\"\n", "", 1), wantKey: "accounts.0.password_file", wantMsg: "api-password-alpha"},
		{name: "world-readable password file", file: strings.Replace(acct("alpha", ""), pw, loosePW, 1), wantKey: "accounts.0.password_file", wantLine: 5, wantMsg: "readable by group or others"},
		{name: "bad rate", file: acct("alpha", "rate_limit = \"fast\"\n"), wantKey: "accounts.0.rate_limit", wantLine: 6, wantMsg: "N/duration"},
		{name: "bad auth rate", file: acct("alpha", "auth_rate_limit = \"0/1m\"\n"), wantKey: "accounts.0.auth_rate_limit", wantLine: 6},
		{name: "bad rate group", file: acct("alpha", "rate_group = \"Shared IP\"\n"), wantKey: "accounts.0.rate_group", wantLine: 6},
		{name: "rate group with two rates", file: acct("alpha", "rate_group = \"ip\"\n") + acct("beta", "rate_group = \"ip\"\nrate_limit = \"5/1s\"\n"),
			wantKey: "accounts.1.rate_group", wantLine: 12, wantMsg: "share one pacer"},
		{name: "unknown key", file: acct("alpha", "bse_url = \"x\"\n"), wantKey: "accounts.bse_url", wantLine: 6, wantMsg: "unknown key"},
		{name: "wrong type", file: acct("alpha", "rate_group = 3\n"), wantLine: 6, wantMsg: "quoted string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "c.toml", tt.file, 0o600)
			cfg, err := Load(path, nil)
			if err == nil {
				_, err = cfg.Settings(true, noEnv)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *Error", err)
			}
			if tt.wantKey != "" && ce.Key != tt.wantKey {
				t.Errorf("key %q, want %q (%v)", ce.Key, tt.wantKey, err)
			}
			if tt.wantLine != 0 && ce.Source.Line != tt.wantLine {
				t.Errorf("line %d, want %d (%v)", ce.Source.Line, tt.wantLine, err)
			}
			if ce.Source.Kind != FromFile || ce.Source.Line == 0 {
				t.Errorf("no line in %v", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q, want it to contain %q", err, tt.wantMsg)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error leaks the password: %v", err)
			}
		})
	}
}
