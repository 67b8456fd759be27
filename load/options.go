package load

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cardsync/cardsync/redact"
)

// DefaultAccount is Options.Account's default: the account of every row
// stored before schema version 5, and of a setup with a single account
// (the config's [api] table).
const DefaultAccount = "default"

var accountName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// CheckAccountName is the one rule for an account name (Options.Account,
// the name of a config [[accounts]] table): 1 to 64 characters of a-z, 0-9,
// _ and -. The schema's CHECK constraints hold the same rule.
func CheckAccountName(s string) error {
	if !accountName.MatchString(s) {
		return fmt.Errorf("%q: want 1 to 64 characters of a-z, 0-9, _ and -, e.g. %q", s, DefaultAccount)
	}
	return nil
}

// CheckFileMode is the one rule for Options.FileMode: the owner reads and
// writes; the group may read (analysts), never write; others get nothing.
func CheckFileMode(m os.FileMode) error {
	if m&^0o777 != 0 || m&0o600 != 0o600 || m&0o027 != 0 {
		return fmt.Errorf("%04o: want owner read/write, at most read for the group and nothing for others, e.g. 0640 or 0600", m)
	}
	return nil
}

// CheckSynchronous is the one rule for Options.Synchronous: FULL, NORMAL
// or EXTRA (case-insensitive). OFF is refused: a power cut could corrupt
// the warehouse.
func CheckSynchronous(s string) error {
	if !slices.Contains([]string{"FULL", "NORMAL", "EXTRA"}, strings.ToUpper(s)) {
		return fmt.Errorf("%q: want FULL, NORMAL or EXTRA", s)
	}
	return nil
}

// CheckMaxRemovedFraction is the one rule for Options.MaxRemovedFraction:
// above 0, at most 1.
func CheckMaxRemovedFraction(f float64) error {
	if !(f > 0 && f <= 1) {
		return fmt.Errorf("%v: want a fraction above 0 and at most 1, e.g. 0.2", f)
	}
	return nil
}

// WAL checkpoint modes (Options.WALCheckpoint).
const (
	// WALCheckpointAuto: cardsync empties the WAL itself (a TRUNCATE WAL
	// checkpoint after each run and on close), on top of SQLite's PASSIVE
	// autocheckpoint.
	WALCheckpointAuto = "auto"
	// WALCheckpointExternal: another process owns WAL checkpoints
	// (Litestream). cardsync never runs a TRUNCATE or RESTART WAL checkpoint
	// on the warehouse and leaves SQLite's PASSIVE autocheckpoint as it is.
	WALCheckpointExternal = "external"
)

// CheckWALCheckpoint is the one rule for Options.WALCheckpoint: "auto" or
// "external".
func CheckWALCheckpoint(s string) error {
	if s != WALCheckpointAuto && s != WALCheckpointExternal {
		return fmt.Errorf("%q: want %q or %q (with Litestream)", s, WALCheckpointAuto, WALCheckpointExternal)
	}
	return nil
}

// WithDefaults returns o with its zero fields filled with the defaults.
func (o Options) WithDefaults() Options {
	if o.FileMode == 0 {
		o.FileMode = DefaultFileMode
	}
	if o.Synchronous == "" {
		o.Synchronous = DefaultSynchronous
	}
	if o.MaxRemovedFraction == 0 {
		o.MaxRemovedFraction = DefaultMaxRemovedFraction
	}
	if o.WALCheckpoint == "" {
		o.WALCheckpoint = WALCheckpointAuto
	}
	if o.Account == "" {
		o.Account = DefaultAccount
	}
	return o
}

// Validate checks Options as Open would use them (after their defaults):
// every error, joined, each naming its field.
func (o Options) Validate() error {
	o = o.WithDefaults()
	var errs []error
	add := func(field string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
	}
	add("FileMode", CheckFileMode(o.FileMode))
	add("Synchronous", CheckSynchronous(o.Synchronous))
	add("MaxRemovedFraction", CheckMaxRemovedFraction(o.MaxRemovedFraction))
	add("WALCheckpoint", CheckWALCheckpoint(o.WALCheckpoint))
	add("Account", CheckAccountName(o.Account))
	add("KeepFields", CheckKeepFields(o.KeepFields))
	if o.AmountScale != nil {
		add("AmountScale", CheckCardAmountScale(*o.AmountScale))
	}
	add("CurrencyField", CheckCurrencyField(o.CurrencyField))
	return errors.Join(errs...)
}

// Defaults for Options.
const (
	DefaultFileMode    os.FileMode = 0o640
	DefaultSynchronous             = "FULL"
)

// Options configures Open. The zero value is usable.
type Options struct {
	// FileMode is the permission of a newly created database file; SQLite
	// gives -wal and -shm the same. Default 0640 (group-readable, so analysts
	// in the file's group can query it; never world-readable by default).
	FileMode os.FileMode
	// Synchronous is PRAGMA synchronous: OFF, NORMAL, FULL (default) or EXTRA.
	Synchronous string
	// Now stamps every time written (default time.Now).
	Now func() time.Time
	// Logger receives debug and warning lines (nil: discard).
	Logger *slog.Logger
	// RedactFields adds JSON key names (case-insensitive) dropped at any depth
	// from cards and account JSON, on top of package redact's rule (keys
	// whose last word is cvv, cvc, cvv2, cvc2, cvn or pin, or whose last two
	// words are security code, pin code or cvv code).
	RedactFields []string
	// KeepFields, when not nil, are the only top-level card fields stored
	// ([cards] keep_fields): the others are dropped from each card, after
	// the rules and before it is hashed or stored, and counted
	// (sync_runs.fields_dropped). "id" is always kept. Names are the
	// fields' names as stored (card_fields.name), matched exactly. nil
	// stores every field.
	KeepFields []string
	// AmountScale is the decimals of card amounts ([cards] amount_scale)
	// on a card that names no currency ISO 4217 knows: a card's decimal
	// fields are held in integer minor units at its currency's minor unit,
	// else at this scale (AmountRules). nil: DefaultCardAmountScale.
	AmountScale *int
	// CurrencyField is the top-level card field holding a card's currency
	// ([cards] currency_field); "": the field found by its name
	// (IsCurrencyName).
	CurrencyField string
	// Secrets are the password and the tokens in use (nil: none): every
	// string, key and number of card and account JSON, every account field,
	// rejected item and reason has them replaced by "[REDACTED]" before it
	// is hashed or stored (sync_runs.secrets_redacted counts them). The set
	// is read at each use, so a token added while a run goes on is removed
	// from what follows.
	Secrets *redact.Secrets
	// MaxRemovedFraction is the mass-removal guard: a consistent walk that
	// would remove more than this fraction of the live cards (and more than
	// 10) removes nothing until confirmed. Default DefaultMaxRemovedFraction.
	MaxRemovedFraction float64
	// BatchPages, BatchDelay and CommitDelay bound a WalkWriter's batch of
	// pages: how many it holds before committing them (default
	// DefaultBatchPages), for how long after the first of them (default
	// DefaultBatchDelay), and for how long after the first page that changes
	// something ([warehouse] commit_delay; nil: DefaultCommitDelay; 0: such a
	// page commits at once, with the pages buffered before it). BatchPages 1
	// commits every page in its own transaction.
	BatchPages  int
	BatchDelay  time.Duration
	CommitDelay *time.Duration
	// WALCheckpoint says who empties the WAL ([warehouse] checkpoint):
	// WALCheckpointAuto (default, "") or WALCheckpointExternal (Litestream;
	// see CheckWALCheckpoint).
	WALCheckpoint string
	// Account is the API account the Warehouse reads and writes (default
	// DefaultAccount; see CheckAccountName). Every read and write is scoped
	// to it: two Warehouses of different accounts on one file see none of
	// each other's cards, versions, checkpoints, walks, removals, guard,
	// runs, snapshots or rejected items. card_fields (the columns of the one
	// cards_flat view) and column_docs are shared by the file. Each
	// account's writer holds that account's run lock (OpenAccountLock):
	// accounts of one file sync at the same time, their commits take turns
	// (BusyTimeout).
	Account string
	// BusyTimeout bounds how long a write waits for another connection's
	// write transaction (default 5 s). Writers of several accounts of one
	// file commit one at a time: give them a wait longer than the longest
	// commit (a walk's end on a large account takes seconds).
	BusyTimeout time.Duration
	// WriteTurns, shared by the Warehouses of several accounts of one file
	// in one process, gives their write transactions turns in arrival
	// order (see WriteTurns); nil: each waits in SQLite's busy handler.
	WriteTurns *WriteTurns
}
