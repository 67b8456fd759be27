package load

import (
	"context"
	"fmt"

	"github.com/cardsync/cardsync/load/internal/cardmove"
)

// The statements of a move, after cardmove.VersionsData, when no row of
// New exists (cardMoveSteps) and when the two merge (cardMergeSteps); both
// end with cardMoveEnd.
var (
	cardMoveSteps  = []cardmove.Stmt{cardmove.State, cardmove.Versions, cardmove.Pending}
	cardMergeSteps = []cardmove.Stmt{cardmove.MergeClose, cardmove.MergeAside, cardmove.Versions, cardmove.MergeAfter,
		cardmove.MergeChange, cardmove.MergeFirst, cardmove.MergePending}
	cardMoveEnd = []cardmove.Stmt{cardmove.Delete, cardmove.Rejected}
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
	// the old history's last version (cardmove.MergeAfter, cardmove.MergeChange).
	ExecCardMove(ctx context.Context, stmt cardmove.Stmt, account string, m cardmove.Move, last int64) error
	// MoveSeen replaces, in the seen ids of account's open walks, each
	// move's Old id with its New one.
	MoveSeen(ctx context.Context, account string, moves []cardmove.Move) error
}

// moveCards gives each card of account named by a move's Old id its New
// id in every table that keys by card id, merging it with New's row when
// there is one (cardmove.Move), then moves the seen ids of the account's open
// walks (RescanTx.MoveCards' contract, written once for both dialects).
// It returns how many cards moved.
func moveCards(ctx context.Context, tx CardMoveTx, account string, moves []cardmove.Move) (int, error) {
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
func moveCard(ctx context.Context, tx CardMoveTx, account string, m cardmove.Move) error {
	exists, err := tx.CardStored(ctx, account, m.New)
	if err != nil {
		return fmt.Errorf("move a card: %w", err)
	}
	if err := tx.ExecCardMove(ctx, cardmove.VersionsData, account, m, 0); err != nil {
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
	for _, list := range [][]cardmove.Stmt{steps, cardMoveEnd} {
		for _, stmt := range list {
			if err := tx.ExecCardMove(ctx, stmt, account, m, last); err != nil {
				return fmt.Errorf("move a card: %w", err)
			}
		}
	}
	return nil
}
