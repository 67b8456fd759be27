package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
)

// Account is one [[accounts]] table: an API account of its own, synced
// into the same warehouse under its name. Keys it leaves out take the
// [api] table's value (token_field, rate_limit, auth_rate_limit); the
// client's other keys (timeout, max_wait, ...) are the [api] table's.
type Account struct {
	Name string `toml:"name"`
	Endpoint
	// RateGroup names a pacer shared by every account of the group (an
	// upstream that limits per IP or per user); "" is a pacer of its own.
	RateGroup string `toml:"rate_group"`
}

// AccountSettings is one API account, parsed: an [[accounts]] table, or
// the [api] table as the account named load.DefaultAccount.
type AccountSettings struct {
	// Name is the warehouse's account (load.Options.Account).
	Name          string
	BaseURL       string
	Email         string
	Password      extract.Secret
	TokenField    string
	RateLimit     extract.Rate
	AuthRateLimit extract.Rate
	// RateGroup is the shared pacer's name ("": the account's own).
	RateGroup string
	// From says where the account's address and credentials came from,
	// for the messages that name what to change.
	From AccountSources
}

// AccountSources say where an account's address and credentials were set,
// each as its key and source ("api.base_url (env CARDSYNC_API_BASE_URL)",
// "accounts.1.base_url (cardsync.toml:14)"); Password names the variable,
// the systemd credential or the password file (with its key and source) the
// password was read from.
type AccountSources struct {
	BaseURL, Email, Password string
}

// keyFrom is key with where its value came from, for a message: "KEY
// (SOURCE)", or KEY alone for a default.
func (c *Config) keyFrom(key string) string {
	if src := c.Source(key); src.Kind != FromDefault {
		return key + " (" + src.String() + ")"
	}
	return key
}

// AccountCredentialName is the systemd credential that holds the password
// of [[accounts]] name: api-password-NAME.
func AccountCredentialName(name string) string { return CredentialName + "-" + name }

// ExtractConfigFor is the API client's configuration for one account: the
// account's URL, credentials and rates, the [api] table's other values.
func (s Settings) ExtractConfigFor(a AccountSettings) extract.Config {
	return extract.Config{
		BaseURL:       a.BaseURL,
		Email:         a.Email,
		Password:      a.Password,
		TokenField:    a.TokenField,
		RateLimit:     a.RateLimit,
		AuthRateLimit: a.AuthRateLimit,
		Timeout:       s.Timeout,
		MaxWait:       s.MaxWait,
		MaxBodyBytes:  s.MaxBodyBytes,
		AmountScale:   s.AmountScale,
		MaxPages:      s.MaxPages,
		Secrets:       s.Secrets,
	}
}

// accountKey is the dotted key of field in the i-th [[accounts]] table
// (from 0), as sources and errors name it: accounts.0.base_url.
func accountKey(i int, field string) string {
	k := "accounts." + strconv.Itoa(i)
	if field != "" {
		k += "." + field
	}
	return k
}

// accountSettings parses the [[accounts]] tables into s.Accounts, or,
// without any, makes the [api] table (already in s) the one account named
// load.DefaultAccount. needAPI requires each account's URL, email and
// password, as apiSettings does for [api].
func (c *Config) accountSettings(s *Settings, needAPI bool, getenv func(string) string) error {
	if len(c.Accounts) == 0 {
		s.Accounts = []AccountSettings{s.AccountSettings}
		return nil
	}
	if c.API.BaseURL != "" {
		return c.fail(accountKey(0, ""), "[[accounts]] tables and api.base_url (%s) are both set: "+
			"[api] alone stands for one account named %q; with [[accounts]], give every account its own table and remove api.base_url",
			c.Source("api.base_url"), load.DefaultAccount)
	}
	names := map[string]int{}
	groups := map[string]int{}
	for i, a := range c.Accounts {
		fail := func(field, format string, args ...any) error { return c.failAccount(i, field, format, args...) }
		if err := load.CheckAccountName(a.Name); err != nil {
			return fail("name", "%v", err)
		}
		if j, dup := names[a.Name]; dup {
			return fail("name", "%q is also the name of %s (%s): names must be unique", a.Name, accountKey(j, ""), c.Source(accountKey(j, "name")))
		}
		names[a.Name] = i
		as := AccountSettings{Name: a.Name, BaseURL: strings.TrimRight(a.BaseURL, "/"), Email: a.Email,
			TokenField: a.TokenField, RateGroup: a.RateGroup}
		if as.TokenField == "" {
			as.TokenField = s.TokenField
		}
		if as.BaseURL != "" || needAPI {
			if as.BaseURL == "" {
				return fail("base_url", "required in account %q", a.Name)
			}
			if err := extract.CheckBaseURL(as.BaseURL); err != nil {
				return fail("base_url", "%v", err)
			}
		}
		if needAPI {
			if strings.TrimSpace(as.Email) == "" {
				return fail("email", "required in account %q", a.Name)
			}
			pw, err := c.accountPassword(i, a, getenv)
			if err != nil {
				return err
			}
			as.Password = pw
			as.From = AccountSources{BaseURL: c.keyFrom(accountKey(i, "base_url")), Email: c.keyFrom(accountKey(i, "email")),
				Password: c.secretFrom(getenv, AccountCredentialName(a.Name), accountKey(i, "password_file"), a.PasswordFile)}
			s.Secrets.Add(pw.Reveal())
		}
		var err error
		as.RateLimit, as.AuthRateLimit = s.RateLimit, s.AuthRateLimit
		if a.RateLimit != "" {
			if as.RateLimit, err = parseRate(a.RateLimit); err != nil {
				return fail("rate_limit", "%v", err)
			}
		}
		if a.AuthRateLimit != "" {
			if as.AuthRateLimit, err = parseRate(a.AuthRateLimit); err != nil {
				return fail("auth_rate_limit", "%v", err)
			}
		}
		if a.RateGroup != "" {
			if err := load.CheckAccountName(a.RateGroup); err != nil {
				return fail("rate_group", "%v", err)
			}
			// One pacer paces the whole group: its accounts must agree on it.
			if j, ok := groups[a.RateGroup]; ok {
				first := s.Accounts[j]
				if first.RateLimit != as.RateLimit || first.AuthRateLimit != as.AuthRateLimit {
					return fail("rate_group", "%q: account %q has rate_limit %s and auth_rate_limit %s, account %q (%s) has %s and %s: the accounts of a group share one pacer and must have the same rates",
						a.RateGroup, a.Name, as.RateLimit, as.AuthRateLimit, first.Name, c.Source(accountKey(j, "")), first.RateLimit, first.AuthRateLimit)
				}
			} else {
				groups[a.RateGroup] = i
			}
		}
		s.Accounts = append(s.Accounts, as)
	}
	return nil
}

// accountPassword finds the password of [[accounts]] number i: the systemd
// credential api-password-NAME, then its password_file. CARDSYNC_API_PASSWORD
// is the [api] account's only.
func (c *Config) accountPassword(i int, a Account, getenv func(string) string) (extract.Secret, error) {
	return credentialOrFile(getenv, AccountCredentialName(a.Name), accountKey(i, "password_file"), a.PasswordFile,
		func(format string, args ...any) error { return c.failAccount(i, "password_file", format, args...) },
		fmt.Sprintf("no password for account %q: set password_file or a systemd credential %s", a.Name, AccountCredentialName(a.Name)))
}

// failAccount is fail for field of [[accounts]] number i; a field the file
// leaves out is named at its table's header line.
func (c *Config) failAccount(i int, field, format string, args ...any) *Error {
	e := c.fail(accountKey(i, field), format, args...)
	if e.Source.Kind == FromDefault {
		e.Source = c.Source(accountKey(i, ""))
	}
	return e
}

// NamedAccounts reports whether the settings name accounts of their own
// ([[accounts]], or more than one) rather than the [api] table's one
// account, load.DefaultAccount. Every account runs the same way either
// way; only what a person reads differs: output and log lines about named
// accounts say which account they are about, the [api] table's one
// account's read as they always did.
func (s Settings) NamedAccounts() bool {
	return len(s.Accounts) != 1 || s.Accounts[0].Name != load.DefaultAccount
}
