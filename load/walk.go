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

// DefaultMaxRemovedFraction is Options.MaxRemovedFraction's default.
const DefaultMaxRemovedFraction = 0.2

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

// IDConflict is a card id a walk listed on more than one page with
// different content, and the pages that listed it, in order.
type IDConflict struct {
	ID    string `json:"id"`
	Pages []int  `json:"pages"`
}
