package walk

import (
	"context"

	"github.com/cardsync/cardsync/load"
)

// WalkTx is what CloseWalk needs of a dialect inside the transaction that
// closes a walk: its statements, not their sequence, which is CloseWalk's.
// A WalkTx knows its account and the time the attempt stamps.
type WalkTx interface {
	// ConflictTx applies the rule of one content per id and walk
	// (resolveConflicts), first.
	ConflictTx
	// ClosingRun is the run that closes walk walkID: runID, or, for a
	// reset (runID 0), the last run that committed pages to it.
	ClosingRun(ctx context.Context, walkID, runID int64) (int64, error)
	// PendingRemovals counts the account's cards in removal_pending.
	PendingRemovals(ctx context.Context) (int64, error)
	// ClearListedPending stamps the pending cards the walk listed again
	// as last seen by closingRun now and takes them off removal_pending;
	// it returns how many it took off.
	ClearListedPending(ctx context.Context, walkID, closingRun int64) (int64, error)
	// CountMissed counts the current cards, those among them the walk did
	// not list, and the ids the walk listed.
	CountMissed(ctx context.Context, walkID int64) (live, missed, listed int, err error)
	// RemoveConfirmed marks removed the current cards the walk missed
	// that an earlier consistent walk missed too (their open versions
	// close, a 'removed' version follows, they leave removal_pending) and
	// returns how many.
	RemoveConfirmed(ctx context.Context, walkID, runID int64) (int, error)
	// RecordPending puts the current cards the walk missed in
	// removal_pending (those not there yet), freezing their last seen at
	// the last complete walk that listed them, and returns how many.
	RecordPending(ctx context.Context, walkID int64) (int64, error)
	// EndWalk writes the walk's row (finished_run: runID, none when 0;
	// its distinct and duplicate ids, the pending removals, the reason
	// arg) and empties its walk_seen rows.
	EndWalk(ctx context.Context, walkID, runID int64, outcome string, removed int, reason any) error
	// FoldWalk merges the closed walk into the identical complete walk
	// before it (FoldWalkQuery, FoldWalkMerge).
	FoldWalk(ctx context.Context, walkID int64) error
}

// CloseWalk closes walk walkID with outcome in tx, the same steps for both
// dialects: an id it listed with two contents keeps its stored content
// (see ConflictTx), the cards it listed leave removal_pending, two-walk removal
// applies when the walk is consistent and the guard allows (fraction:
// Options.MaxRemovedFraction), the other misses go pending, the walk's row
// is written and its walk_seen rows emptied, and a complete walk that
// changed nothing folds into the walk before it. runID 0 is a reset.
//
// No card row is written for the cards the walk listed: the cards view
// derives last_seen_at/last_seen_run of a current card from the last
// complete walk. Only cards whose standing changes are written: a pending
// card listed again is stamped with this walk's close (its stored values
// were frozen when it went pending), and a card that goes pending has its
// stored values moved to the last complete walk that did list it.
func CloseWalk(ctx context.Context, tx WalkTx, walkID, runID int64, outcome string, end load.WalkEnd, fraction float64) (load.WalkResult, error) {
	var res load.WalkResult
	closingRun, err := tx.ClosingRun(ctx, walkID, runID)
	if err != nil {
		return res, err
	}
	// An id listed with two contents keeps its stored one (counted seen).
	if res.Conflicts, res.Undone, err = resolveConflicts(ctx, tx, walkID, runID); err != nil {
		return res, err
	}
	// Listed again, by any walk (even an inconsistent or reset one): alive.
	pending, err := tx.PendingRemovals(ctx)
	if err != nil {
		return res, err
	}
	var cleared int64
	if pending > 0 {
		if cleared, err = tx.ClearListedPending(ctx, walkID, closingRun); err != nil {
			return res, err
		}
	}
	var listed int
	if res.Live, res.Missed, listed, err = tx.CountMissed(ctx, walkID); err != nil {
		return res, err
	}
	step := Removals(end, res.Missed, res.Live, listed, fraction, pending > cleared)
	res.Held = step.Held
	if step.Remove {
		removed, err := tx.RemoveConfirmed(ctx, walkID, runID)
		if err != nil {
			return res, err
		}
		res.Removed, res.Live = removed, res.Live-removed
	}
	// The other misses join the pending list, held or not: a held walk
	// still records them, so a confirmation can act on them.
	var added int64
	if step.Record {
		if added, err = tx.RecordPending(ctx, walkID); err != nil {
			return res, err
		}
	}
	if err := tx.EndWalk(ctx, walkID, runID, outcome, res.Removed, ReasonArg(end)); err != nil {
		return res, err
	}
	if FoldsWalk(outcome, res.Removed, added, cleared) {
		if err := tx.FoldWalk(ctx, walkID); err != nil {
			return res, err
		}
	}
	return res, nil
}
