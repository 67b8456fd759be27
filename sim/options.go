package sim

import (
	"cmp"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// TokenShape selects the JSON shape of a successful token response. The spec
// does not show it, so the simulator can answer in each plausible one.
type TokenShape int

const (
	// TokenShapeAccessToken answers {"access_token":T,"token_type":"bearer","expires_in":86400}
	// (tymon/jwt-auth style; the default).
	TokenShapeAccessToken TokenShape = iota
	// TokenShapeToken answers {"token":T}.
	TokenShapeToken
	// TokenShapeDataAccessToken answers {"data":{"access_token":T,"token_type":"bearer","expires_in":86400}}.
	TokenShapeDataAccessToken
	// TokenShapeDataToken answers {"data":{"token":T}}.
	TokenShapeDataToken
)

var tokenShapeNames = []string{"access_token", "token", "data.access_token", "data.token"}

// String returns the flag spelling of the shape: "access_token", "token",
// "data.access_token" or "data.token".
func (t TokenShape) String() string {
	if t < 0 || int(t) >= len(tokenShapeNames) {
		return fmt.Sprintf("TokenShape(%d)", int(t))
	}
	return tokenShapeNames[t]
}

// ParseTokenShape parses the spelling returned by TokenShape.String.
func ParseTokenShape(s string) (TokenShape, error) {
	for i, n := range tokenShapeNames {
		if strings.EqualFold(s, n) {
			return TokenShape(i), nil
		}
	}
	return 0, fmt.Errorf("unknown token shape %q (want one of %s)", s, strings.Join(tokenShapeNames, ", "))
}

// Defaults used by New for zero-valued Options fields.
const (
	DefaultEmail     = "demo@example.com"
	DefaultPassword  = "demo"
	DefaultWindow    = time.Minute
	DefaultAuthLimit = 10
	DefaultLimit     = 180
	DefaultTokenTTL  = 24 * time.Hour
	DefaultPageSize  = 15
)

// Options configure a Server. The zero value is a valid configuration with
// no cards; zero fields take the documented defaults.
type Options struct {
	// Seed makes the card data, the account and probabilistic faults
	// deterministic.
	Seed int64
	// Cards is the number of cards generated at start (0 is valid).
	Cards int
	// Email and Password are the only accepted credentials (defaults
	// DefaultEmail, DefaultPassword).
	Email, Password string
	// Window is the length of both rate-limit windows (default 1m). Tests
	// scale it down and drive it with Now.
	Window time.Duration
	// AuthLimit is the number of token requests allowed per window (default 10).
	AuthLimit int
	// Limit is the number of other requests allowed per window (default 180).
	Limit int
	// Sliding selects a sliding-window limiter; the default is a fixed window
	// that starts at the first request, as Laravel's limiter does.
	Sliding bool
	// TokenShape is the JSON shape of a successful token response.
	TokenShape TokenShape
	// TokenStatus is the status of a successful token response: 200 (default) or 201.
	TokenStatus int
	// TokenTTL is the token lifetime (default 24h), measured on Now.
	TokenTTL time.Duration
	// StringIDs serves card ids as JSON strings ("1003") instead of integers.
	StringIDs bool
	// IncludePAN adds a full Luhn-valid "card_number" and a "cvv" to every
	// card, for tests that prove cardsync never stores them.
	IncludePAN bool
	// ExtraFields adds fields a client does not know about (nested too).
	ExtraFields bool
	// UniqueFields spreads that many top-level fields of distinct names
	// over the cards, each name on one card (round robin: card n holds
	// names n, n+Cards, n+2·Cards, … below UniqueFields), as an API that
	// puts ids or free text in its keys would. The names are "u<j>_",
	// padded with "x" to FieldNameBytes; the value is j.
	UniqueFields int
	// FieldNameBytes is the length UniqueFields' names are padded to.
	FieldNameBytes int
	// PreviousLinks adds links.previous on pages after the first, as Fractal
	// does; off by default.
	PreviousLinks bool
	// PHPEscaping writes JSON strings the way PHP's json_encode does by
	// default: "/" as "\/" and non-ASCII as \uXXXX escapes.
	PHPEscaping bool
	// OddData mixes into the card list a fixed set of odd items a real
	// server can send (unusual and unusable ids, items that are not objects,
	// odd field names, deep nesting, card numbers in odd forms, look-alikes):
	// one after every ceil(Cards/n) generated cards. Card.Odd names each.
	OddData bool
	// FloatNoise serves the account's number amounts as PHP serialises
	// floats with noise: balance 1234.5600000000002, available_recharge_balance
	// 0.30000000000000004.
	FloatNoise bool
	// AccountDrift changes balance and cards_balance by a seeded amount on
	// every account read after the first, so runs see balance changes.
	AccountDrift bool
	// PageSize is the server-side page size (default 15); per_page is ignored.
	PageSize int
	// Now is the clock for token expiry, rate-limit windows and timestamps
	// of changed cards (default time.Now). Waits of faults use real time.
	Now func() time.Time
	// BaseURL, when set, is the base of links.next (for example
	// "https://api.example.com"); by default it is built from the request's Host.
	BaseURL string
	// Faults are injected at start, as if passed to InjectFault.
	Faults []Fault
	// Logger receives debug lines about injected faults (nil discards).
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	o.Email = cmp.Or(o.Email, DefaultEmail)
	o.Password = cmp.Or(o.Password, DefaultPassword)
	o.Window = cmp.Or(max(o.Window, 0), DefaultWindow)
	o.AuthLimit = cmp.Or(max(o.AuthLimit, 0), DefaultAuthLimit)
	o.Limit = cmp.Or(max(o.Limit, 0), DefaultLimit)
	o.TokenStatus = cmp.Or(o.TokenStatus, 200)
	o.TokenTTL = cmp.Or(max(o.TokenTTL, 0), DefaultTokenTTL)
	o.PageSize = cmp.Or(max(o.PageSize, 0), DefaultPageSize)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Cards < 0 {
		o.Cards = 0
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	return o
}

// RegisterFlags registers a flag for every option on fs, writing into o.
// Current non-zero values of o are the flag defaults; otherwise the flag
// defaults are -cards 500 -seed 1 and the package defaults. -fault may be
// repeated; see ParseFault for its syntax.
func (o *Options) RegisterFlags(fs *flag.FlagSet) {
	if o.Cards == 0 {
		o.Cards = 500
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	d := o.withDefaults()
	o.Email, o.Password, o.Window = d.Email, d.Password, d.Window
	o.AuthLimit, o.Limit, o.TokenStatus, o.TokenTTL, o.PageSize = d.AuthLimit, d.Limit, d.TokenStatus, d.TokenTTL, d.PageSize

	fs.IntVar(&o.Cards, "cards", o.Cards, "number of cards to generate")
	fs.Int64Var(&o.Seed, "seed", o.Seed, "seed for the generated data and probabilistic faults")
	fs.StringVar(&o.Email, "email", o.Email, "the accepted login e-mail")
	fs.StringVar(&o.Password, "password", o.Password, "the accepted login password")
	fs.DurationVar(&o.Window, "window", o.Window, "rate-limit window length")
	fs.IntVar(&o.AuthLimit, "auth-limit", o.AuthLimit, "token requests allowed per window")
	fs.IntVar(&o.Limit, "limit", o.Limit, "other requests allowed per window")
	fs.BoolVar(&o.Sliding, "sliding", o.Sliding, "use sliding rate-limit windows instead of fixed ones")
	fs.Func("token-shape", "token response shape: access_token (default), token, data.access_token, data.token", func(s string) error {
		t, err := ParseTokenShape(s)
		if err != nil {
			return err
		}
		o.TokenShape = t
		return nil
	})
	fs.Func("token-status", "status of a successful token response: 200 (default) or 201", func(s string) error {
		switch s {
		case "200":
			o.TokenStatus = 200
		case "201":
			o.TokenStatus = 201
		default:
			return fmt.Errorf("token status %q: want 200 or 201", s)
		}
		return nil
	})
	fs.DurationVar(&o.TokenTTL, "token-ttl", o.TokenTTL, "token lifetime")
	fs.BoolVar(&o.StringIDs, "string-ids", o.StringIDs, "serve card ids as JSON strings")
	fs.BoolVar(&o.IncludePAN, "pan", o.IncludePAN, "include a full card_number and cvv in every card")
	fs.BoolVar(&o.ExtraFields, "extra-fields", o.ExtraFields, "add unknown (nested) fields to every card")
	fs.IntVar(&o.UniqueFields, "unique-fields", o.UniqueFields, "spread this many top-level fields of distinct names over the cards, one card each")
	fs.IntVar(&o.FieldNameBytes, "field-name-bytes", o.FieldNameBytes, "pad the names of -unique-fields to this many bytes")
	fs.BoolVar(&o.PreviousLinks, "previous-links", o.PreviousLinks, "add links.previous on pages after the first")
	fs.BoolVar(&o.PHPEscaping, "php-escaping", o.PHPEscaping, `escape "/" and non-ASCII in JSON strings like PHP's json_encode`)
	fs.BoolVar(&o.OddData, "odd-data", o.OddData, "mix odd items into the cards: unusual and unusable ids, non-objects, odd field names, deep nesting, card numbers in odd forms")
	fs.BoolVar(&o.FloatNoise, "float-noise", o.FloatNoise, "serve number amounts with PHP float noise (1234.5600000000002)")
	fs.BoolVar(&o.AccountDrift, "account-drift", o.AccountDrift, "change balance and cards_balance on every account read after the first")
	fs.IntVar(&o.PageSize, "page-size", o.PageSize, "server-side page size (per_page is ignored)")
	fs.StringVar(&o.BaseURL, "base-url", o.BaseURL, "base URL for links.next (default: from the request Host)")
	fs.Func("fault", "inject a fault (repeatable): [ENDPOINT:]KIND[=ARG][,KEY=VALUE...], e.g.\n"+
		"\tcards:status=503,retry_after=2s,times=3,pages=2-4\n"+
		"ENDPOINT: token, account, cards, all (default all)\n"+
		"KIND: status=5xx, html[=502], reset, truncate, latency=DUR, trickle=DUR, ratelimit,\n"+
		"\trevoke, foreign=URL, loop[=PAGE], links-array, total=DELTA, oversize[=BYTES],\n"+
		"\tlinks-shapes, bom, content-type, deep-meta[=DEPTH], no-content, redirect[=URL]\n"+
		"\twalk faults: empty-page[=PAGE] (default 2), shrinking-total[=N] (from page 2 on),\n"+
		"\trepeated-page[=PAGE] (default every page), phantom-pages[=N] (total_pages N, default 2000),\n"+
		"\tfloat-pagination (2.0 for 2), fractional-pages (total_pages without ceil());\n"+
		"\ttimes=1 for once (a refetch gets it right)\n"+
		"\tshuffle-members, secrets-in-data\n"+
		"KEYS: times=N, skip=N, percent=P, pages=A-B[,C...], retry_after=DUR, chunk=BYTES, claim=N", func(s string) error {
		f, err := ParseFault(s)
		if err != nil {
			return err
		}
		o.Faults = append(o.Faults, f)
		return nil
	})
}
