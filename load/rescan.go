package load

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cardsync/cardsync/load/internal/cardmove"
	"github.com/cardsync/cardsync/redact"
)

// A warehouse records the version of the redaction rules that wrote it
// (rules_state.rules_version, redact.RulesVersion), one for the whole
// warehouse: every account of a file, or of a PostgreSQL schema, shares
// it, as they share backups and card_fields. A warehouse written before it
// recorded one is at version 1. A run never raises it (the rows older rules
// wrote remain) and lowers it when its rules are older; Rescan raises it
// once every stored row has been through the current rules.

// RulesState is what a warehouse records of the rules that wrote it.
type RulesState struct {
	// Version is the rules version every stored row has been through.
	Version int
	// Rescan is the checkpoint of a rescan under way (nil: none).
	Rescan *RescanCheckpoint
	// RescannedAt is when the last rescan finished (zero: never).
	RescannedAt time.Time
}

// Outdated reports whether the warehouse predates the rules of this
// binary: rows older rules kept may hold what they remove.
func (s RulesState) Outdated() bool { return s.Version < redact.RulesVersion }

// RulesReader is a warehouse that records its rules version (both
// dialects, read-only opens included).
type RulesReader interface {
	RulesState(ctx context.Context) (RulesState, error)
}

// RescanCheckpoint is where a rescan stands: the rules version it applies
// and the last row it finished (its phase, account and key), stored with
// each batch so that a killed rescan continues after it.
type RescanCheckpoint struct {
	Version int
	Phase   string
	Account string
	Key     RescanKey
}

// RescanKey orders the rows of a phase within an account: by Text (a card
// id, a field name), then Num (a version, a row id).
type RescanKey struct {
	Text string
	Num  int64
}

// The phases of a rescan, in order: each account's rows (cards and their
// versions, account snapshots, rejected items, the runs' error texts),
// then what the accounts share (card_fields).
const (
	PhaseIDs       = "ids"       // card_state.card_id: a card number as id moved to its StoredID
	PhaseSeen      = "seen"      // walk_seen: the other ids of open walks (rejected items') likewise
	PhaseCards     = "cards"     // card_state: data, its hash, minor
	PhaseVersions  = "versions"  // card_versions.data
	PhaseSnapshots = "snapshots" // account_snapshots: name, email, timezone, raw
	PhaseRejected  = "rejected"  // rejected_cards: card_id, reason, data, data_sha256
	PhaseRuns      = "runs"      // sync_runs: error, account_error
	PhaseFields    = "fields"    // card_fields.name (every account's)
)

// accountPhases are the phases run for each account, in order.
var accountPhases = []string{PhaseIDs, PhaseSeen, PhaseCards, PhaseVersions, PhaseSnapshots, PhaseRejected, PhaseRuns}

// StoredRow is one row a rescan reads and may rewrite: its key and its
// texts (nil: NULL) in the order the phase lists them (see the Phase
// constants), and, for cards and rejected items, the stored hash.
type StoredRow struct {
	Key   RescanKey
	Texts []*string
	Hash  []byte
}

// RescanTx is one batch's transaction of a rescan: a dialect's statements.
type RescanTx interface {
	// Rows returns up to limit rows of phase (of account; PhaseFields:
	// every account's) after key, in key order.
	Rows(ctx context.Context, phase, account string, after RescanKey, limit int) ([]StoredRow, error)
	// Update stores row's texts (and hash) in place of those of the row
	// with its key, and reports whether it wrote (a dialect may find the
	// stored value equal to the new one). For PhaseFields it deletes the
	// field's row (the next walk records the field under its redacted
	// name).
	Update(ctx context.Context, phase, account string, row StoredRow) (bool, error)
	// SaveCheckpoint stores where the rescan stands.
	SaveCheckpoint(ctx context.Context, cp RescanCheckpoint) error
	// CardMoveTx holds the statements of a batch's card moves, which
	// moveCards sequences once for both dialects: each card of account
	// named by a move's Old id gets its New id in every table that
	// keys by card id (card_state, card_versions, removal_pending,
	// rejected_cards.card_id, the seen ids of the account's open walks)
	// and its "id" member in the stored data (card_state.data becomes the
	// move's Data and Hash; each version's "id" member becomes New). When
	// New is already stored (a sync under the new rules stored the card
	// beside its old row), the two merge (see cardmove.Move).
	CardMoveTx
}

// Rescanner is a warehouse a rescan can rewrite (both dialects).
type Rescanner interface {
	RulesReader
	// ItemRules are the warehouse's rules: its card id key (IDKey) is what
	// a rescan stores card ids by.
	ItemRules() ItemRules
	// RescanAccounts lists the accounts holding rows, in order.
	RescanAccounts(ctx context.Context) ([]string, error)
	// RescanBatch runs fn in one short write transaction that no run of
	// account writes beside ("": what every account shares): the
	// account's run lock or lease row is held for the batch only.
	RescanBatch(ctx context.Context, account string, fn func(RescanTx) error) error
	// FinishRescan sets rules_version to the checkpoint's version and
	// clears the checkpoint (when a checkpoint of that version is there).
	FinishRescan(ctx context.Context, version int) error
}

// DefaultRescanBatch is how many rows a rescan rewrites per transaction.
const DefaultRescanBatch = 500

// RescanOptions configure Rescan.
type RescanOptions struct {
	// Policy is the current rules (Options.Settings().Policy: package
	// redact's rules, RedactFields and the secrets known).
	Policy *redact.Policy
	// Batch is how many rows a transaction reads (default
	// DefaultRescanBatch).
	Batch int
	// Logger receives a line per phase and account (nil: discard).
	Logger *slog.Logger
	// AfterBatch, when set, is called after each committed batch (tests).
	AfterBatch func()
}

// RescanResult counts what a rescan did.
type RescanResult struct {
	// Resumed: the rescan continued an earlier one's checkpoint.
	Resumed bool
	// Read and Changed count rows per phase.
	Read, Changed map[string]int
	// Secrets counts the strings, keys and numbers a secret was removed
	// from (as sync_runs.secrets_redacted).
	Secrets int
	// IDs counts the cards whose id, a card number an older release
	// stored in full, moved to its stored form (StoredID).
	IDs int
	// Batches is how many transactions committed.
	Batches int
	// Version is the rules version the warehouse is at afterwards.
	Version int
}

// TotalChanged is the rows changed in every phase.
func (r RescanResult) TotalChanged() int {
	n := 0
	for _, c := range r.Changed {
		n += c
	}
	return n
}

// Rescan applies the current rules (opts.Policy) to every row w stores
// that holds upstream text, in batches of opts.Batch rows, each in its own
// transaction with the checkpoint, account by account and phase by phase
// (accountPhases, then PhaseFields), and then sets the warehouse's rules
// version to redact.RulesVersion. A checkpoint of the same rules version
// left by a rescan that stopped is continued; one of other rules is
// started over. A row the rules leave as it is is not written: the hashes
// a walk compares change only with the data, so the next walk finds a
// card whose stored form changed the same as the API's (redacted) card.
//
// Each account's first phases move the card ids an older release stored
// as full card numbers (PhaseIDs: the cards; PhaseSeen: the other ids an
// open walk lists) to their StoredID under the warehouse's card id key
// (Rescanner.ItemRules), every row of a card in the batch's one
// transaction (moveCards over RescanTx's CardMoveTx, cardmove.Move), with the data and hash a
// sync of the same card now stores: the next sync finds the card
// unchanged. A moved card sorts elsewhere; met again, it is left as it is.
func Rescan(ctx context.Context, w Rescanner, opts RescanOptions) (RescanResult, error) {
	if opts.Batch <= 0 {
		opts.Batch = DefaultRescanBatch
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	res := RescanResult{Read: map[string]int{}, Changed: map[string]int{}}
	rules := ItemRules{Policy: opts.Policy, IDKey: w.ItemRules().IDKey}
	st, err := w.RulesState(ctx)
	if err != nil {
		return res, fmt.Errorf("rescan: %w", err)
	}
	var from *RescanCheckpoint
	if st.Rescan != nil && st.Rescan.Version == redact.RulesVersion {
		from, res.Resumed = st.Rescan, true
		log.Info("rescan resumed", "phase", from.Phase, "account", from.Account)
	}
	accounts, err := w.RescanAccounts(ctx)
	if err != nil {
		return res, fmt.Errorf("rescan: %w", err)
	}
	var steps []rescanStep
	for _, a := range accounts {
		for _, p := range accountPhases {
			steps = append(steps, rescanStep{a, p})
		}
	}
	steps = append(steps, rescanStep{"", PhaseFields})
	start := 0
	if from != nil {
		for i, s := range steps {
			if s.account == from.Account && s.phase == from.Phase {
				start = i
				break
			}
		}
	}
	for i := start; i < len(steps); i++ {
		s := steps[i]
		var after RescanKey
		if from != nil && i == start && s.account == from.Account && s.phase == from.Phase {
			after = from.Key
		}
		read, changed := res.Read[s.phase], res.Changed[s.phase]
		for {
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("rescan: %w", err)
			}
			var next *RescanCheckpoint
			if i+1 < len(steps) {
				next = &RescanCheckpoint{Version: redact.RulesVersion, Phase: steps[i+1].phase, Account: steps[i+1].account}
			}
			n, last, err := rescanBatch(ctx, w, rules, opts.Batch, s.account, s.phase, after, next, &res)
			if err != nil {
				return res, fmt.Errorf("rescan %s (account %q): %w", s.phase, s.account, err)
			}
			res.Batches++
			if opts.AfterBatch != nil {
				opts.AfterBatch()
			}
			if n < opts.Batch {
				break
			}
			after = last
		}
		if res.Read[s.phase]-read > 0 {
			log.Info("rescan step done", "phase", s.phase, "account", s.account,
				"rows_read", res.Read[s.phase]-read, "rows_changed", res.Changed[s.phase]-changed)
		}
	}
	if err := w.FinishRescan(ctx, redact.RulesVersion); err != nil {
		return res, fmt.Errorf("rescan: %w", err)
	}
	res.Version = redact.RulesVersion
	return res, nil
}

// rescanStep is one account's phase of a rescan ("": what the accounts share).
type rescanStep struct{ account, phase string }

// rescanBatch reads and rewrites, in one transaction of w, up to limit rows
// of phase (of account) after key after, counting into res, and stores the
// checkpoint: the last row done, or next (nil: none) when the step is done.
// It returns how many rows it read and the key of the last.
func rescanBatch(ctx context.Context, w Rescanner, rules ItemRules, limit int, account, phase string,
	after RescanKey, next *RescanCheckpoint, res *RescanResult) (n int, last RescanKey, err error) {
	err = w.RescanBatch(ctx, account, func(tx RescanTx) error {
		rows, err := tx.Rows(ctx, phase, account, after, limit)
		if err != nil {
			return err
		}
		n = len(rows)
		cp := RescanCheckpoint{Version: redact.RulesVersion, Phase: phase, Account: account, Key: after}
		if phase == PhaseIDs || phase == PhaseSeen {
			if err := rescanMoves(ctx, tx, rules, account, phase, rows, &cp, res); err != nil {
				return err
			}
			rows = nil
		}
		for _, r := range rows {
			out, secrets, ok := rescanRow(rules, phase, r)
			res.Secrets += secrets
			res.Read[phase]++
			if ok {
				wrote, err := tx.Update(ctx, phase, account, out)
				if err != nil {
					return err
				}
				if wrote {
					res.Changed[phase]++
				}
			}
			cp.Key = r.Key
		}
		last = cp.Key
		if n < limit && next != nil {
			// The step is done: the checkpoint names the next one.
			cp = *next
		}
		return tx.SaveCheckpoint(ctx, cp)
	})
	return n, last, err
}

// rescanMoves moves, in tx, the card ids of rows (of PhaseIDs or
// PhaseSeen) that hold card numbers to their StoredID, counting into res
// and advancing cp past each row.
func rescanMoves(ctx context.Context, tx RescanTx, rules ItemRules, account, phase string, rows []StoredRow,
	cp *RescanCheckpoint, res *RescanResult) error {
	var moves []cardmove.Move
	for _, r := range rows {
		res.Read[phase]++
		mv, ok, err := cardMove(rules, r)
		mv.SeenOnly = phase == PhaseSeen
		if err != nil {
			return err
		}
		if ok {
			moves = append(moves, mv)
		}
		cp.Key = r.Key
	}
	if len(moves) == 0 {
		return nil
	}
	moved, err := moveCards(ctx, tx, account, moves)
	if err != nil {
		return err
	}
	res.Changed[phase] += moved
	if phase == PhaseIDs {
		res.IDs += moved
	}
	return nil
}
