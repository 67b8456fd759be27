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
		Batch:              BatchLimits{Pages: o.BatchPages, Delay: o.BatchDelay, CommitDelay: DefaultCommitDelay}.withDefaults(),
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
