// Package cardmove names the statements of a card's move, which a rescan
// makes when a card's stored id is a full card number (Move: from Old to
// New, its StoredID), and gives each statement's arguments in the order
// every dialect's SQL takes them (Move.Args). Package load sequences the
// statements once (RescanTx's CardMoveTx); load/sqlite and load/postgres
// write them.
package cardmove

// Move is one card a rescan moves from the full card number an older
// release stored as its id to its stored form (StoredID), the id a sync
// under the current rules computes for the same upstream id, so that the
// card keeps one identity.
//
// When a row of New already exists (a sync under the current rules ran
// before the rescan and stored the card again under its new id, while the
// old row remained), the rows merge: the newer card_state row (New's) is
// kept, with the earlier first_seen_at and first_seen_run of the two; the
// old row's versions come first in the merged history (1..n, the open one
// closed when New's first version starts) and New's follow, renumbered
// from n+1, the first of them marked "returned" when the old history ended
// in "removed" and "changed" otherwise; the old row's pending removal is
// dropped and its row deleted.
type Move struct {
	// Old is the id as stored (a full card number), New its StoredID.
	Old, New string
	// Data is card_state.data with its "id" member New (redacted and
	// canonical, as a sync stores it) and Hash its DataHash.
	Data string
	Hash []byte
	// SeenOnly moves an id no card_state row holds (a rejected item's,
	// listed by an open walk): only the walk's seen ids and
	// rejected_cards.card_id.
	SeenOnly bool
}

// Stmt names one statement of a card's move (Move), which
// CardMoveTx.ExecCardMove executes for one move: a dialect's SQL, the
// sequence moveCards'. Old, New, Data and Hash are the move's.
type Stmt int

const (
	// VersionsData sets the "id" member of the data of Old's
	// versions (those whose data has one) to New.
	VersionsData Stmt = iota + 1
	// State inserts New's card_state row: Old's, with Data and
	// Hash.
	State
	// Versions gives Old's versions the card id New.
	Versions
	// Pending gives Old's removal_pending row the card id New.
	Pending
	// Delete deletes Old's card_state row.
	Delete
	// Rejected gives the rejected items of card id Old the card
	// id New.
	Rejected
	// MergeClose closes Old's open version (valid_to) when New's
	// first version starts.
	MergeClose
	// MergeAside sets New's versions aside (negative versions).
	MergeAside
	// MergeAfter numbers New's versions set aside after last, the old
	// history's last version.
	MergeAfter
	// MergeChange marks New's version last+1, when it is "new",
	// "returned" when version last is "removed" and "changed" otherwise.
	MergeChange
	// MergeFirst gives New's card_state row Old's first_seen_at and
	// first_seen_run when Old's is earlier.
	MergeFirst
	// MergePending deletes Old's removal_pending row.
	MergePending
)

// Args returns the arguments of statement stmt for the move m of account
// (last: the merge's last old version, for MergeAfter and
// MergeChange), in the order every dialect's SQL takes them ($1… or
// ?1…); false for a statement not listed above.
func (m Move) Args(stmt Stmt, account string, last int64) ([]any, bool) {
	switch stmt {
	case State:
		return []any{account, m.Old, m.New, m.Data, m.Hash}, true
	case VersionsData, Versions, Pending, Rejected, MergeClose, MergeFirst:
		return []any{account, m.Old, m.New}, true
	case Delete, MergePending:
		return []any{account, m.Old}, true
	case MergeAside:
		return []any{account, m.New}, true
	case MergeAfter, MergeChange:
		return []any{account, m.New, last}, true
	}
	return nil, false
}
