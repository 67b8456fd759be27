package walk

import "github.com/cardsync/cardsync/load"

// StreamOf is s, or StreamCards for the empty stream.
func StreamOf(s string) string {
	if s == "" {
		return load.StreamCards
	}
	return s
}

// guardMinCards: the guard never holds a removal of this many cards or fewer
// (unless the list came back empty), whatever the fraction.
const guardMinCards = 10

// HoldRemovals is the mass-removal guard: whether a consistent walk that
// listed listed ids and missed missed of live current cards must hold its
// removals (unless confirmed): it listed nothing while cards are live, or it
// missed more than 10 cards and more than fraction of the live ones.
func HoldRemovals(missed, live, listed int, fraction float64) bool {
	return missed > 0 && (listed == 0 || missed > guardMinCards && float64(missed) > fraction*float64(live))
}

// RemovalStep is what closing a walk does about the live cards it missed
// (see FinishWalk).
type RemovalStep struct {
	// Record puts the missed cards in removal_pending (those not there
	// yet), held or not, so that a confirmation can act on them.
	Record bool
	// Remove first marks removed the missed cards that an earlier
	// consistent walk missed too.
	Remove bool
	// Held counts the missed cards the mass-removal guard keeps from
	// removal (WalkResult.Held).
	Held int
}

// Removals is FinishWalk's rule for a walk that ended so (e): it missed missed
// of live live cards and listed listed ids, fraction is the guard's
// (Options.MaxRemovedFraction), and pendingLeft says whether cards listed
// by no walk since they went pending remain in removal_pending. Only a
// consistent walk that missed cards acts; the guard (HoldRemovals) holds
// its removals unless ConfirmRemovals.
func Removals(e load.WalkEnd, missed, live, listed int, fraction float64, pendingLeft bool) RemovalStep {
	if !e.Consistent || missed == 0 {
		return RemovalStep{}
	}
	if !e.ConfirmRemovals && HoldRemovals(missed, live, listed, fraction) {
		return RemovalStep{Record: true, Held: missed}
	}
	return RemovalStep{Record: true, Remove: pendingLeft}
}

// FoldsWalk says whether a closed walk is folded into the identical walk
// before it (when there is one): it is complete, removed nothing and
// neither added nor cleared pending removals.
func FoldsWalk(outcome string, removed int, pendingAdded, pendingCleared int64) bool {
	return outcome == "complete" && removed == 0 && pendingAdded == 0 && pendingCleared == 0
}

// The fold's rule, in SQL that SQLite and PostgreSQL both run as it is but
// for the numbered parameters (?1 and ?2 here, $1 and $2 in PostgreSQL):
// package load/postgres folds walks with the same statements.
const (
	// FoldWalkQuery selects the walk into which the closed walk ?1 folds
	// (no row: none): the walk before it of the account's stream, both
	// complete, neither removing a card, with the same totals, pages,
	// distinct and duplicated ids and pending removals, walk ?1 having
	// written no card and left no card pending.
	FoldWalkQuery = `SELECT p.walk_id FROM sync_walks AS p, sync_walks AS c
		WHERE c.walk_id = ?1
		  AND p.walk_id = (SELECT max(walk_id) FROM sync_walks WHERE account = c.account AND stream = c.stream AND walk_id < ?1)
		  AND p.outcome = 'complete' AND c.outcome = 'complete' AND p.removed = 0 AND c.removed = 0
		  AND p.first_total = c.first_total AND p.last_total = c.last_total AND c.total_changed = 0
		  AND p.pages = c.pages AND p.distinct_ids = c.distinct_ids AND p.duplicate_ids = c.duplicate_ids
		  AND p.pending_removals = c.pending_removals
		  AND NOT EXISTS (SELECT 1 FROM run_pages WHERE walk_id = ?1 AND (cards_new > 0 OR cards_changed > 0))
		  AND NOT EXISTS (SELECT 1 FROM removal_pending WHERE walk_id = ?1)`
	// FoldWalkMerge gives the earlier walk ?1 the finish of walk ?2 and
	// adds its walks and runs; walk ?2's run_pages rows then move to walk
	// ?1 and its row goes.
	FoldWalkMerge = `UPDATE sync_walks AS p SET
			finished_at = c.finished_at, finished_run = c.finished_run,
			walks = p.walks + c.walks, runs = p.runs + c.runs, last_run = c.last_run
		FROM sync_walks AS c WHERE p.walk_id = ?1 AND c.walk_id = ?2`
)

// ReasonArg is e.Reason as the walk's close records it: nil when "" or the
// walk is consistent.
func ReasonArg(e load.WalkEnd) any {
	if e.Consistent || e.Reason == "" {
		return nil
	}
	return e.Reason
}
