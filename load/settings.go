package load

import (
	"io"
	"log/slog"
	"time"

	"github.com/cardsync/cardsync/redact"
)

// Settings are the Options every warehouse takes alike (SQLite here,
// PostgreSQL in package load/postgres), with their defaults applied: what a
// Warehouse keeps of them.
type Settings struct {
	// Account is Options.Account (default DefaultAccount).
	Account string
	// Now is Options.Now (default time.Now).
	Now func() time.Time
	// Logger is Options.Logger (default: one that discards).
	Logger *slog.Logger
	// Policy redacts with Options.RedactFields on top of package redact's
	// rule, and removes Options.Secrets.
	Policy *redact.Policy
	// KeepFields is Options.KeepFields (nil: every field).
	KeepFields []string
	// MaxRemovedFraction is Options.MaxRemovedFraction (default
	// DefaultMaxRemovedFraction).
	MaxRemovedFraction float64
	// Batch are Options.BatchPages, BatchDelay and CommitDelay (defaults
	// DefaultBatchPages, DefaultBatchDelay and DefaultCommitDelay).
	Batch BatchLimits
	// Amounts are Options.AmountScale (default DefaultCardAmountScale) and
	// CurrencyField: the scale of each card's decimal fields.
	Amounts AmountRules
}

// Settings returns the settings of o every warehouse shares, defaults
// applied. It checks nothing: Validate does.
func (o Options) Settings() Settings {
	d := o.WithDefaults()
	s := Settings{
		Account:            d.Account,
		Now:                o.Now,
		Logger:             o.Logger,
		Policy:             redact.NewSecretPolicy(o.RedactFields, o.Secrets),
		KeepFields:         o.KeepFields,
		MaxRemovedFraction: d.MaxRemovedFraction,
		Batch:              BatchLimits{Pages: o.BatchPages, Delay: o.BatchDelay, CommitDelay: DefaultCommitDelay}.WithDefaults(),
		Amounts:            AmountRules{Scale: DefaultCardAmountScale, CurrencyField: o.CurrencyField},
	}
	if o.AmountScale != nil {
		s.Amounts.Scale = *o.AmountScale
	}
	if o.CommitDelay != nil {
		s.Batch.CommitDelay = *o.CommitDelay
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return s
}

// ItemRules are the rules of the settings with the warehouse's card id key
// (read at open).
func (s Settings) ItemRules(idKey []byte) ItemRules {
	return NewItemRules(s.Policy, idKey, s.KeepFields)
}

// Defaults for Options.BatchPages, Options.BatchDelay and
// Options.CommitDelay.
const (
	DefaultBatchPages  = 50
	DefaultBatchDelay  = 5 * time.Second
	DefaultCommitDelay = time.Second
)

// BatchLimits bound a WalkWriter's batch of pages (Options.BatchPages,
// BatchDelay and CommitDelay): the batch commits when it holds Pages pages,
// Delay after its first page, or CommitDelay after its first page that
// changes something (0: at once).
type BatchLimits struct {
	Pages       int
	Delay       time.Duration
	CommitDelay time.Duration
}

// WithDefaults fills what is unset: Pages and Delay when not positive.
// CommitDelay has no unset value here (0 commits at once): Options.Settings
// gives it DefaultCommitDelay when Options.CommitDelay is nil.
func (l BatchLimits) WithDefaults() BatchLimits {
	if l.Pages <= 0 {
		l.Pages = DefaultBatchPages
	}
	if l.Delay <= 0 {
		l.Delay = DefaultBatchDelay
	}
	return l
}
