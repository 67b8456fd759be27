package load

import (
	"context"
	"fmt"
)

// CardMoveStmt names one statement of a card's move (CardMove), which
// CardMoveTx.ExecCardMove executes for one move: a dialect's SQL, the
// sequence moveCards'. Old, New, Data and Hash are the move's.
type CardMoveStmt int

const (
	// CardMoveVersionsData sets the "id" member of the data of Old's
	// versions (those whose data has one) to New.
	CardMoveVersionsData CardMoveStmt = iota + 1
	// CardMoveState inserts New's card_state row: Old's, with Data and
	// Hash.
	CardMoveState
	// CardMoveVersions gives Old's versions the card id New.
	CardMoveVersions
	// CardMovePending gives Old's removal_pending row the card id New.
	CardMovePending
	// CardMoveDelete deletes Old's card_state row.
	CardMoveDelete
	// CardMoveRejected gives the rejected items of card id Old the card
	// id New.
	CardMoveRejected
	// CardMergeClose closes Old's open version (valid_to) when New's
	// first version starts.
	CardMergeClose
	// CardMergeAside sets New's versions aside (negative versions).
	CardMergeAside
	// CardMergeAfter numbers New's versions set aside after last, the old
	// history's last version.
	CardMergeAfter
	// CardMergeChange marks New's version last+1, when it is "new",
	// "returned" when version last is "removed" and "changed" otherwise.
	CardMergeChange
	// CardMergeFirst gives New's card_state row Old's first_seen_at and
	// first_seen_run when Old's is earlier.
	CardMergeFirst
	// CardMergePending deletes Old's removal_pending row.
	CardMergePending
)

// The statements of a move, after CardMoveVersionsData, when no row of
// New exists (cardMoveSteps) and when the two merge (cardMergeSteps); both
// end with cardMoveEnd.
var (
	cardMoveSteps  = []CardMoveStmt{CardMoveState, CardMoveVersions, CardMovePending}
	cardMergeSteps = []CardMoveStmt{CardMergeClose, CardMergeAside, CardMoveVersions, CardMergeAfter,
		CardMergeChange, CardMergeFirst, CardMergePending}
	cardMoveEnd = []CardMoveStmt{CardMoveDelete, CardMoveRejected}
)

// CardMoveTx is what moveCards needs of a dialect inside a rescan's
// batch: its statements, not their sequence, which is moveCards'.
type CardMoveTx interface {
	// CardStored reports whether account's card_state holds a row of id.
	CardStored(ctx context.Context, account, id string) (bool, error)
	// LastVersion returns the last version of account's card id (0: it
	// has none).
	LastVersion(ctx context.Context, account, id string) (int64, error)
	// ExecCardMove executes stmt for move m of account's card; last is
	// the old history's last version (CardMergeAfter, CardMergeChange).
	ExecCardMove(ctx context.Context, stmt CardMoveStmt, account string, m CardMove, last int64) error
	// MoveSeen replaces, in the seen ids of account's open walks, each
	// move's Old id with its New one.
	MoveSeen(ctx context.Context, account string, moves []CardMove) error
}

// moveCards gives each card of account named by a move's Old id its New
// id in every table that keys by card id, merging it with New's row when
// there is one (CardMove), then moves the seen ids of the account's open
// walks (RescanTx.MoveCards' contract, written once for both dialects).
// It returns how many cards moved.
func moveCards(ctx context.Context, tx CardMoveTx, account string, moves []CardMove) (int, error) {
	for _, m := range moves {
		if m.SeenOnly {
			continue
		}
		if err := moveCard(ctx, tx, account, m); err != nil {
			return 0, err
		}
	}
	if err := tx.MoveSeen(ctx, account, moves); err != nil {
		return 0, fmt.Errorf("move a walk's seen ids: %w", err)
	}
	return len(moves), nil
}

// moveCard moves one card (not SeenOnly) from m.Old to m.New.
func moveCard(ctx context.Context, tx CardMoveTx, account string, m CardMove) error {
	exists, err := tx.CardStored(ctx, account, m.New)
	if err != nil {
		return fmt.Errorf("move a card: %w", err)
	}
	if err := tx.ExecCardMove(ctx, CardMoveVersionsData, account, m, 0); err != nil {
		return fmt.Errorf("move a card: %w", err)
	}
	steps := cardMoveSteps
	var last int64
	if exists {
		if last, err = tx.LastVersion(ctx, account, m.Old); err != nil {
			return fmt.Errorf("merge a card: %w", err)
		}
		steps = cardMergeSteps
	}
	for _, list := range [][]CardMoveStmt{steps, cardMoveEnd} {
		for _, stmt := range list {
			if err := tx.ExecCardMove(ctx, stmt, account, m, last); err != nil {
				return fmt.Errorf("move a card: %w", err)
			}
		}
	}
	return nil
}

// Args returns the arguments of statement stmt for the move m of account
// (last: the merge's last old version, for CardMergeAfter and
// CardMergeChange), in the order every dialect's SQL takes them ($1… or
// ?1…); false for a statement not listed above.
func (m CardMove) Args(stmt CardMoveStmt, account string, last int64) ([]any, bool) {
	switch stmt {
	case CardMoveState:
		return []any{account, m.Old, m.New, m.Data, m.Hash}, true
	case CardMoveVersionsData, CardMoveVersions, CardMovePending, CardMoveRejected, CardMergeClose, CardMergeFirst:
		return []any{account, m.Old, m.New}, true
	case CardMoveDelete, CardMergePending:
		return []any{account, m.Old}, true
	case CardMergeAside:
		return []any{account, m.New}, true
	case CardMergeAfter, CardMergeChange:
		return []any{account, m.New, last}, true
	}
	return nil, false
}
