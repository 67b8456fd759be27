package extract

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// The origin rules: which base URLs are allowed, and which URLs count as
// the configured origin (a redirect or links.next elsewhere is refused).

// CheckBaseURL is the one rule for the API's base URL: https, or plain
// http to a loopback host (the simulator); no userinfo, query or fragment.
func CheckBaseURL(s string) error {
	_, err := parseBaseURL(s)
	return err
}

// parseBaseURL checks the base URL (see CheckBaseURL) and normalises it.
func parseBaseURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("base url is empty")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("base url: %w", err)
	}
	if u.User != nil {
		return nil, errors.New("base url must not carry userinfo")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, errors.New("base url must not carry a query or fragment")
	}
	if u.Host == "" {
		return nil, fmt.Errorf("base url %q has no host", s)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !IsLoopback(u.Hostname()) {
			return nil, fmt.Errorf("base url %q: plain http is allowed only for loopback hosts", u.Redacted())
		}
	default:
		return nil, fmt.Errorf("base url %q: scheme must be https", u.Redacted())
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// IsLoopback reports whether host is localhost or a loopback address
// (127.0.0.0/8, ::1).
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin compares scheme, host and port (default ports made explicit).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		effectivePort(a) == effectivePort(b)
}

// effectivePort is the URL's port, the scheme's default when none is given.
func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
