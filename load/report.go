package load

import (
	"context"
	"time"
)

// AmountNames are the account amounts in the API's order, as
// account_balances and account_balance_changes name them.
func AmountNames() []string {
	return []string{"balance", "cards_balance", "available_recharge_balance", "transfer_amount", "reach_amount", "authorizations"}
}

// ReportData is what an HTML report shows of a period: plain values read in
// one read transaction. Amounts are integer cents or the warehouse's exact
// decimal text, never floating point. Days are UTC days.
type ReportData struct {
	Path       string
	Since, Now time.Time
	// Days are the UTC days of the period, first to last.
	Days []time.Time
	// LastSuccessAt is when the last successful run finished (nil: never).
	LastSuccessAt  *time.Time
	LastSuccessRun int64
	CurrentCards   int64
	RemovedCards   int64
	// PendingRemovals are current cards missed by the last complete walk.
	PendingRemovals int64
	// Balances holds a day's first, smallest, largest and last value of
	// each amount, for the days with snapshots, by amount then day.
	Balances []BalanceDay
	// Latest is the latest account snapshot (nil when there is none).
	Latest *LatestBalances
	// Statuses are the card statuses seen, most frequent on the last day
	// first; StatusCounts[i][d] is the number of current cards with
	// Statuses[i] at the end of Days[d].
	Statuses     []string
	StatusCounts [][]int64
	// CardChanges counts card_versions rows per day and change, for the
	// days with any.
	CardChanges []ChangeDay
	// RunDays summarise the runs started on each day that has any.
	RunDays []RunDay
	// RunPoints lists every run of the period, oldest first, when there are
	// at most ReportRunPoints of them (nil otherwise).
	RunPoints []RunPoint
	// LastRuns are the last ReportLastRuns runs, newest first, whatever the
	// period.
	LastRuns []Run
	// ChangedCards are the newest ReportCardChanges content changes of the
	// period with the top-level fields that changed; ChangedCardsTotal
	// counts them all.
	ChangedCards      []CardChange
	ChangedCardsTotal int64
	// Rejected are the items set aside during the period, latest first (at
	// most ReportRejected); RejectedTotal counts them all.
	Rejected      []RejectedItem
	RejectedTotal int64
}

// BalanceDay is one amount on one UTC day, in cents.
type BalanceDay struct {
	Amount                string
	Day                   time.Time
	Snapshots             int64
	First, Min, Max, Last int64
	FirstText, LastText   string
	MinText, MaxText      string
}

// LatestBalances is the latest account snapshot's amounts as exact decimal
// text (from the view account_balances).
type LatestBalances struct {
	SnapshotID int64
	TakenAt    time.Time
	Amounts    []NamedAmount
	// AppliedCards and AvailableToApply are the card counts (nil: null).
	AppliedCards, AvailableToApply *int64
	// Rounded says an amount came with float noise and was rounded.
	Rounded bool
}

// NamedAmount is one amount as exact text; Null when the API sent null.
type NamedAmount struct {
	Name  string
	Value string
	Null  bool
}

// ChangeDay counts the card versions stored on one UTC day.
type ChangeDay struct {
	Day                             time.Time
	New, Changed, Removed, Returned int64
}

// RunDay summarises the runs started on one UTC day.
type RunDay struct {
	Day                                          time.Time
	Runs, Succeeded, Failed, Interrupted         int64
	Abandoned, Running                           int64
	MaxSeconds, TotalSeconds                     int64
	RateLimited, Retries, Rejected, RemovalsHeld int64
}

// RunPoint is one run for a per-run chart.
type RunPoint struct {
	ID           int64
	StartedAt    time.Time
	Seconds      int64
	Status       string
	RateLimited  int64
	Rejected     int64
	RemovalsHeld int64
}

// RejectedItem is one row of rejected_cards, its data cut to
// ReportValueBytes.
type RejectedItem struct {
	ID            int64
	CardID        string
	Reason        string
	Times         int64
	FirstAt       time.Time
	LastAt        time.Time
	Data          string
	DataTruncated bool
}

// Limits of ReportData's lists.
const (
	// ReportLastRuns is how many runs ReportData.LastRuns holds.
	ReportLastRuns = 20
	// ReportRunPoints is the most runs a period may hold for ReportData to
	// list each of them (RunPoints); beyond it only RunDays describe them.
	ReportRunPoints = 400
	// ReportCardChanges is how many changed cards ReportData lists.
	ReportCardChanges = 100
	// ReportRejected is how many rejected items ReportData lists.
	ReportRejected = 50
	// ReportValueBytes cuts the JSON values and data shown in the report.
	ReportValueBytes = 300
)

// CardChange is one content change of a card ('changed' version) with the
// top-level fields whose value differs from the version before, from the
// redacted data in card_versions.
type CardChange struct {
	CardID  string
	Version int64
	At      time.Time
	RunID   int64
	Fields  []FieldChange
}

// FieldChange is one top-level field before and after a change, as JSON
// text cut to ReportValueBytes. A field that was added has Before "" and
// Added; one that was dropped has After "" and Dropped.
type FieldChange struct {
	Name           string
	Before, After  string
	Added, Dropped bool
}

// Reporter is what the HTML report (package report) reads: ReportData of
// the period from since to now. The SQLite warehouse is one.
type Reporter interface {
	ReportData(ctx context.Context, since, now time.Time) (ReportData, error)
}
