package load

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
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

// Checkpoint modes (Options.Checkpoint).
const (
	// CheckpointAuto: cardsync empties the WAL itself (a TRUNCATE
	// checkpoint after each run and on close), on top of SQLite's PASSIVE
	// autocheckpoint.
	CheckpointAuto = "auto"
	// CheckpointExternal: another process owns checkpoints (Litestream).
	// cardsync never runs a TRUNCATE or RESTART checkpoint on the
	// warehouse and leaves SQLite's PASSIVE autocheckpoint as it is.
	CheckpointExternal = "external"
)

// CheckCheckpoint is the one rule for Options.Checkpoint: "auto" or
// "external".
func CheckCheckpoint(s string) error {
	if s != CheckpointAuto && s != CheckpointExternal {
		return fmt.Errorf("%q: want %q or %q (with Litestream)", s, CheckpointAuto, CheckpointExternal)
	}
	return nil
}

// withDefaults fills the zero fields of Options.
func (o Options) withDefaults() Options {
	if o.FileMode == 0 {
		o.FileMode = DefaultFileMode
	}
	if o.Synchronous == "" {
		o.Synchronous = DefaultSynchronous
	}
	if o.MaxRemovedFraction == 0 {
		o.MaxRemovedFraction = DefaultMaxRemovedFraction
	}
	if o.Checkpoint == "" {
		o.Checkpoint = CheckpointAuto
	}
	if o.Account == "" {
		o.Account = DefaultAccount
	}
	return o
}

// Validate checks Options as Open would use them (after their defaults):
// every error, joined, each naming its field.
func (o Options) Validate() error {
	o = o.withDefaults()
	var errs []error
	add := func(field string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
	}
	add("FileMode", CheckFileMode(o.FileMode))
	add("Synchronous", CheckSynchronous(o.Synchronous))
	add("MaxRemovedFraction", CheckMaxRemovedFraction(o.MaxRemovedFraction))
	add("Checkpoint", CheckCheckpoint(o.Checkpoint))
	add("Account", CheckAccountName(o.Account))
	return errors.Join(errs...)
}
