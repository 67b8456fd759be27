package load

import (
	"net/url"
	"strings"
)

// RedactURL returns a PostgreSQL URL fit for logs and error messages: the
// password (in the user info or a password= parameter) replaced by
// "xxxxx". Text that does not parse as a URL is returned as its scheme
// and "…" only, since it may be a key=value string holding a password.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		if i := strings.Index(s, "://"); i > 0 && !strings.ContainsAny(s[:i], " =") {
			return s[:i] + "://…"
		}
		return "…"
	}
	if u.User != nil {
		name := u.User.Username()
		if strings.Contains(name, ":") {
			// An encoded colon (%3A): the rest may be a password.
			name = name[:strings.Index(name, ":")] + ":xxxxx"
		}
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(name, "xxxxx")
		} else {
			u.User = url.User(name)
		}
	}
	u.RawQuery = redactQuery(u.RawQuery)
	if u.Fragment != "" || u.RawFragment != "" {
		// A connection string has no fragment: what follows '#' may be a secret.
		u.Fragment, u.RawFragment = "xxxxx", ""
	}
	return u.String()
}

// redactQuery is a URL's query fit for logs: a parameter whose name holds
// "password" in any case (password, sslpassword, an encoded
// "password=..." in the name) shows xxxxx, and a query that does not
// parse (a bad escape, a ';' separator) is not shown at all: what follows
// may be a password.
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return "…"
	}
	changed := false
	for k := range q {
		if strings.Contains(strings.ToLower(k), "password") {
			delete(q, k)
			if i := strings.IndexByte(k, '='); i >= 0 {
				k = k[:i]
			}
			q.Set(k, "xxxxx")
			changed = true
		}
	}
	if !changed {
		return raw
	}
	return q.Encode()
}
