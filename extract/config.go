package extract

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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

// String formats the rate as ParseRate reads it, e.g. "180/1m".
func (r Rate) String() string { return strconv.Itoa(r.N) + "/" + FormatDuration(r.Per) }

// FormatDuration writes d as time.Duration.String does, without the zero
// units it appends: "1m" for a minute, "1h30m" for an hour and a half.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// interval is the time between two requests at exactly this rate.
func (r Rate) interval() time.Duration { return r.Per / time.Duration(r.N) }

// ParseRate reads "N/duration", e.g. "180/1m" or "10/60s". A bare unit
// means one of that unit: "180/m", "180/min" and "180/minute" are
// "180/1m"; likewise s, sec, second and h, hour.
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
	switch strings.ToLower(per) {
	case "s", "sec", "second":
		per = "1s"
	case "m", "min", "minute":
		per = "1m"
	case "h", "hour":
		per = "1h"
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return Rate{}, fmt.Errorf("rate %q: window must be a positive duration such as 1m, 60s or 1h (e.g. \"180/1m\")", s)
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
	// MinAmountScale and MaxAmountScale bound Config.AmountScale: amounts
	// end up in cents, so more decimals than 2 could not be stored.
	MinAmountScale = 1
	MaxAmountScale = 2
	// MaxMaxPages bounds Config.MaxPages.
	MaxMaxPages = 10_000_000
	// MinMaxBodyBytes and MaxMaxBodyBytes bound Config.MaxBodyBytes.
	MinMaxBodyBytes  = 64 << 10
	MaxMaxBodyBytes  = 1 << 30
	DefaultUserAgent = "cardsync/dev"
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
	// MaxPages refuses a walk at a page that bears out more pages (its
	// total_pages, its total at its per_page agreeing; default 100,000: 1.5
	// million cards), so a corrupt envelope cannot send the client on a
	// walk of 2^31 pages (a total_pages alone cannot: see Client.Pages).
	MaxPages int
	// UserAgent is sent on every request (default "cardsync/dev").
	UserAgent string
	// Logger receives debug lines per page and info lines per notable event
	// (nil discards). Secrets and bodies are never logged.
	Logger *slog.Logger
	// Clock is the one time source of the client: token expiry, pacing,
	// backoff and Retry-After waits (nil: the real clock). Tests share a
	// settable one with the simulator (sim.Clock).
	Clock Clock
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
	// Observer, when set, is told about every attempt, retry, 429 and token
	// request (metrics); nil observes nothing.
	Observer Observer
	// Pacer, when set, paces this client's requests together with every
	// other client given the same Pacer (its rates replace RateLimit and
	// AuthRateLimit, which must then equal them or be zero); nil: a pacer
	// of the client's own.
	Pacer *Pacer
}

func (c Config) withDefaults() Config {
	c.RateLimit = cmp.Or(c.RateLimit, DefaultRateLimit)
	c.AuthRateLimit = cmp.Or(c.AuthRateLimit, DefaultAuthRateLimit)
	c.Timeout = cmp.Or(max(c.Timeout, 0), DefaultTimeout)
	c.MaxWait = cmp.Or(max(c.MaxWait, 0), DefaultMaxWait)
	c.MaxBodyBytes = cmp.Or(max(c.MaxBodyBytes, 0), DefaultMaxBodyBytes)
	c.AmountScale = cmp.Or(c.AmountScale, DefaultAmountScale)
	c.MaxPages = cmp.Or(max(c.MaxPages, 0), DefaultMaxPages)
	c.UserAgent = cmp.Or(c.UserAgent, DefaultUserAgent)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	if c.Secrets == nil {
		c.Secrets = &redact.Secrets{}
	}
	if c.Observer == nil {
		c.Observer = noObserver{}
	}
	return c
}

// CheckAmountScale is the one rule for Config.AmountScale.
func CheckAmountScale(n int) error {
	if n < MinAmountScale || n > MaxAmountScale {
		return fmt.Errorf("%d out of range %d..%d (amounts are stored in cents)", n, MinAmountScale, MaxAmountScale)
	}
	return nil
}

// CheckRate is the one rule for a rate limit: a positive count in a
// positive window, with a spacing above zero.
func CheckRate(r Rate) error {
	if r.N <= 0 || r.Per <= 0 || r.interval() <= 0 {
		return fmt.Errorf("%v is not a positive rate", r)
	}
	return nil
}

// Validate checks a Config as New would use it (after its defaults):
// every error, joined, each naming its field.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	add := func(field string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
	}
	add("BaseURL", CheckBaseURL(c.BaseURL))
	if strings.TrimSpace(c.Email) == "" {
		add("Email", errors.New("empty"))
	}
	if c.Password == "" {
		add("Password", errors.New("empty"))
	}
	add("RateLimit", CheckRate(c.RateLimit))
	add("AuthRateLimit", CheckRate(c.AuthRateLimit))
	add("AmountScale", CheckAmountScale(c.AmountScale))
	if c.MaxBodyBytes < MinMaxBodyBytes || c.MaxBodyBytes > MaxMaxBodyBytes {
		add("MaxBodyBytes", fmt.Errorf("%d out of range %d..%d", c.MaxBodyBytes, MinMaxBodyBytes, MaxMaxBodyBytes))
	}
	if c.MaxPages < 1 || c.MaxPages > MaxMaxPages {
		add("MaxPages", fmt.Errorf("%d out of range 1..%d", c.MaxPages, MaxMaxPages))
	}
	return errors.Join(errs...)
}
