package extract

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cardsync/cardsync/redact"
)

// Rate is a request budget: at most N requests in any window of length Per.
type Rate struct {
	N   int
	Per time.Duration
}

// String formats the rate as ParseRate reads it, e.g. "180/1m0s".
func (r Rate) String() string { return strconv.Itoa(r.N) + "/" + r.Per.String() }

// interval is the time between two requests at exactly this rate.
func (r Rate) interval() time.Duration { return r.Per / time.Duration(r.N) }

// ParseRate reads "N/duration", e.g. "180/1m" or "10/60s". A bare unit
// ("180/m", "10/s", "5/h") means one of that unit.
func ParseRate(s string) (Rate, error) {
	n, per, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: want N/duration, e.g. 180/1m", s)
	}
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil || count <= 0 {
		return Rate{}, fmt.Errorf("rate %q: count must be a positive integer", s)
	}
	per = strings.TrimSpace(per)
	switch per {
	case "s", "m", "h":
		per = "1" + per
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return Rate{}, fmt.Errorf("rate %q: window must be a positive duration", s)
	}
	if d/time.Duration(count) <= 0 {
		return Rate{}, fmt.Errorf("rate %q: too many requests for the window", s)
	}
	return Rate{N: count, Per: d}, nil
}

// Defaults for zero Config fields.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxWait      = 5 * time.Minute
	DefaultMaxBodyBytes = 4 << 20
	DefaultAmountScale  = 2
	DefaultMaxPages     = 100_000
	DefaultUserAgent    = "cardsync/dev"
)

// DefaultRateLimit and DefaultAuthRateLimit are the service's documented limits.
var (
	DefaultRateLimit     = Rate{N: 180, Per: time.Minute}
	DefaultAuthRateLimit = Rate{N: 10, Per: time.Minute}
)

// Config configures a Client. Zero fields take the documented defaults.
type Config struct {
	// BaseURL is the service root, e.g. "https://api.example.com/api". It must
	// be https, or http to a loopback host (127.0.0.0/8, ::1, localhost).
	BaseURL string
	// Email and Password are the login credentials.
	Email    string
	Password Secret
	// TokenField is a dotted path ("data.jwt") to the token in the token
	// response; empty means auto-detection.
	TokenField string
	// RateLimit and AuthRateLimit pace data and token requests (defaults
	// 180/1m and 10/1m).
	RateLimit, AuthRateLimit Rate
	// Timeout bounds one attempt, body included (default 30s).
	Timeout time.Duration
	// MaxWait caps the total backoff wait for one request (default 5m).
	MaxWait time.Duration
	// MaxBodyBytes caps a response body (default 4 MiB).
	MaxBodyBytes int64
	// AmountScale is the number of decimals of amounts (default 2).
	AmountScale int
	// MaxPages refuses a walk whose first page claims more pages (default
	// 100,000: 1.5 million cards), so a corrupt total_pages cannot send the
	// client on a walk of 2^31 pages.
	MaxPages int
	// UserAgent is sent on every request (default "cardsync/dev").
	UserAgent string
	// Logger receives debug lines per page and info lines per notable event
	// (nil discards). Secrets and bodies are never logged.
	Logger *slog.Logger
	// Now is the clock for token expiry (default time.Now).
	Now func() time.Time
	// Transport replaces the built-in transport (tests).
	Transport http.RoundTripper
	// Secrets receives the password and every token the client obtains, and
	// scrubs them (and Bearer values and card numbers) from every piece of
	// upstream text before it is cut or shown. Share it with the log handler
	// so no line can carry them. nil: the client keeps its own.
	Secrets *redact.Secrets
	// OnWait, when set, is called before every retry wait (backoff after a
	// 429, 5xx or network error, Retry-After included) with a short reason
	// and the wait; ordinary pacing waits are not reported.
	OnWait func(reason string, d time.Duration)
}

func (c Config) withDefaults() Config {
	if c.RateLimit == (Rate{}) {
		c.RateLimit = DefaultRateLimit
	}
	if c.AuthRateLimit == (Rate{}) {
		c.AuthRateLimit = DefaultAuthRateLimit
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxWait <= 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.AmountScale == 0 {
		c.AmountScale = DefaultAmountScale
	}
	if c.MaxPages <= 0 {
		c.MaxPages = DefaultMaxPages
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Secrets == nil {
		c.Secrets = &redact.Secrets{}
	}
	return c
}

// parseBaseURL checks the base URL: https, or http to a loopback host; no
// userinfo, query or fragment.
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
		if !isLoopback(u.Hostname()) {
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

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validate checks the fields that have no default.
func (c Config) validate() error {
	var errs []error
	if strings.TrimSpace(c.Email) == "" {
		errs = append(errs, errors.New("email is empty"))
	}
	if c.Password == "" {
		errs = append(errs, errors.New("password is empty"))
	}
	for _, r := range []struct {
		name string
		r    Rate
	}{{"rate limit", c.RateLimit}, {"auth rate limit", c.AuthRateLimit}} {
		if r.r.N <= 0 || r.r.Per <= 0 || r.r.interval() <= 0 {
			errs = append(errs, fmt.Errorf("%s %v is not a positive rate", r.name, r.r))
		}
	}
	if c.AmountScale < 0 || c.AmountScale > 18 {
		errs = append(errs, fmt.Errorf("amount scale %d out of range 0..18", c.AmountScale))
	}
	return errors.Join(errs...)
}
