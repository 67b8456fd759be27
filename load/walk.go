package load

import (
	"time"
)

// Checkpoint is where the next run resumes a stream.
type Checkpoint struct {
	Stream     string    `json:"stream"`
	RunID      int64     `json:"run_id"`    // run that last moved it
	NextPage   int       `json:"next_page"` // 0 or 1: start of a walk
	TotalPages int       `json:"total_pages"`
	TotalItems int       `json:"total_items"`
	UpdatedAt  time.Time `json:"updated_at"`
	InProgress bool      `json:"in_progress"` // a walk has committed pages and not finished
}

// WalkSummary describes the open walk of a stream over every attempt (run)
// that committed pages to it.
type WalkSummary struct {
	WalkID       int64     `json:"walk_id"` // 0: no walk in progress
	StartedAt    time.Time `json:"started_at"`
	StartedRun   int64     `json:"started_run"`
	Runs         int       `json:"runs"`          // distinct runs that committed pages
	Pages        int       `json:"pages"`         // distinct page numbers committed
	LastPage     int       `json:"last_page"`     // highest page number committed
	TotalPages   int       `json:"total_pages"`   // last total_pages reported
	DistinctIDs  int       `json:"distinct_ids"`  // distinct card ids seen
	DuplicateIDs int       `json:"duplicate_ids"` // ids seen on more than one page
	FirstTotal   int       `json:"first_total"`   // total reported by the walk's first page
	LastTotal    int       `json:"last_total"`    // total reported by its latest page
	TotalChanged bool      `json:"total_changed"` // some page reported a different total
	MinTotal     int       `json:"min_total"`     // the smallest total any page reported
	MaxTotal     int       `json:"max_total"`     // the largest
	// Reason is the first page anomaly a commit recorded on the walk
	// (sync_walks.inconsistent_reason; "" when none) and AnomalyPages the pages
	// that showed one.
	Reason       string `json:"reason,omitempty"`
	AnomalyPages []int  `json:"anomaly_pages,omitempty"`
}

// StreamOf is s, or StreamCards for the empty stream.
func StreamOf(s string) string {
	if s == "" {
		return StreamCards
	}
	return s
}

// DefaultMaxRemovedFraction is Options.MaxRemovedFraction's default.
const DefaultMaxRemovedFraction = 0.2

// guardMinCards: the guard never holds a removal of this many cards or fewer
// (unless the list came back empty), whatever the fraction.
const guardMinCards = 10

// WalkEnd says how a walk ended, for FinishWalk.
type WalkEnd struct {
	// Consistent: every page was seen and the ids add up (the caller's
	// checks); only then are removals acted on.
	Consistent bool
	// ConfirmRemovals lifts the mass-removal guard for this walk
	// (`cardsync backfill -confirm-removals`).
	ConfirmRemovals bool
	// Reason is why an inconsistent walk is so (one of WalkReasons),
	// recorded unless a page anomaly was recorded first.
	Reason string
}

// Outcome is what sync_walks.outcome records of a walk that ended so:
// complete when consistent, else inconsistent.
func (e WalkEnd) Outcome() string {
	if e.Consistent {
		return "complete"
	}
	return "inconsistent"
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

// Removals is FinishWalk's rule for a walk that ended so: it missed missed
// of live live cards and listed listed ids, fraction is the guard's
// (Options.MaxRemovedFraction), and pendingLeft says whether cards listed
// by no walk since they went pending remain in removal_pending. Only a
// consistent walk that missed cards acts; the guard (HoldRemovals) holds
// its removals unless ConfirmRemovals.
func (e WalkEnd) Removals(missed, live, listed int, fraction float64, pendingLeft bool) RemovalStep {
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

// WalkResult is what FinishWalk did.
type WalkResult struct {
	// Removed counts cards marked removed: missed by this walk and by the
	// previous consistent one.
	Removed int
	// Held counts live cards the walk missed but the mass-removal guard kept
	// from removal (0 when the guard did not act).
	Held int
	// Missed counts live cards the walk did not list.
	Missed int
	// Live counts cards not marked removed when the walk ended.
	Live int
	// Pending counts cards awaiting confirmation after the walk.
	Pending int
	// Conflicts are the ids the walk listed on more than one page with
	// different content: each kept its stored content (see ConflictTx).
	Conflicts []IDConflict
	// Undone counts the changes the closing run's pages wrote to those
	// cards that the close took back (counted unchanged instead).
	Undone int
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
