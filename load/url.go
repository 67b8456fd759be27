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
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	changed := false
	for k := range q {
		if strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword") {
			q.Set(k, "xxxxx")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}
