package load

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cardsync/cardsync/money"
)

// This file holds what both warehouses share of the HTML report's data:
// its types, its limits and the steps that need no database. Each
// warehouse reads the rows in its own SQL (SQLite: report.go; PostgreSQL:
// package load/postgres) and fills ReportData through these.

// Reporter is what a warehouse offers the HTML report (package report):
// the data of a period, read in one read-only transaction so that a
// read-only handle serves it while a worker writes. Both the SQLite
// Warehouse and the PostgreSQL one implement it and give the same
// ReportData for the same history.
type Reporter interface {
	// ReportData reads what a report of the period [since, now] shows.
	ReportData(ctx context.Context, since, now time.Time) (ReportData, error)
}

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
	// FirstRunAt is when the period's first run started (nil: no run).
	FirstRunAt *time.Time
	// RunPoints lists every run of the period, oldest first, when there are
	// at most reportrows.ReportRunPoints of them (nil otherwise).
	RunPoints []RunPoint
	// LastRuns are the last reportrows.ReportLastRuns runs, newest first, whatever the
	// period.
	LastRuns []Run
	// ChangedCards are the newest reportrows.ReportCardChanges content changes of the
	// period with the top-level fields that changed; ChangedCardsTotal
	// counts them all.
	ChangedCards      []CardChange
	ChangedCardsTotal int64
	// Rejected are the items set aside during the period, latest first (at
	// most reportrows.ReportRejected); RejectedTotal counts them all.
	Rejected      []RejectedItem
	RejectedTotal int64
	// Fine is the period in runs or buckets of at most ReportFineRuns
	// slots (PlanFine); nil when it is drawn per day.
	Fine *FineData
	// CardSums are the current cards by currency with the exact sum of
	// their balance field (CardSumTally).
	CardSums []CardSum
	// BalanceType is card_fields.type of the balance field (BalanceField),
	// read with the rest; "" when card_fields has no row for it. CardSums
	// hold a sum only when it is Summable.
	BalanceType string
}

// BalanceDay is one amount on one UTC day, in cents; in FineData, one
// amount in one slot (Day is the slot's start, Slot its index).
type BalanceDay struct {
	Amount string
	Day    time.Time
	Slot   int
	// Run is the run a warehouse's row for a per-run FineData is of.
	Run                   int64
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

// ChangeDay counts the card versions stored on one UTC day; in FineData,
// in one slot (Day is the slot's start, Slot its index).
type ChangeDay struct {
	Day  time.Time
	Slot int
	// Run is the run a warehouse's row for a per-run FineData is of.
	Run                             int64
	New, Changed, Removed, Returned int64
}

// RunDay summarises the runs started on one UTC day; in FineData, in
// one slot (Day is its start, Slot its index). A run's duration is
// sync_runs.duration_ms, or from its stamps (whole seconds, to its last
// heartbeat while it runs) when that is NULL and the run was not
// abandoned (an abandoned run without it counts 0): MaxMillis is the longest,
// MaxExact whether that one is duration_ms, TotalMillis their sum.
type RunDay struct {
	Day                                          time.Time
	Slot                                         int
	Runs, Succeeded, Failed, Interrupted         int64
	Abandoned, Running                           int64
	MaxMillis, TotalMillis                       int64
	MaxExact                                     bool
	RateLimited, Retries, Rejected, RemovalsHeld int64
}

// SetLongest sets MaxMillis and MaxExact from the longest measured run
// (max of duration_ms) and the longest run known from its stamps only,
// either nil when there is none; a tie is exact.
func (r *RunDay) SetLongest(exactMS, stampedMS *int64) {
	r.MaxMillis, r.MaxExact = 0, false
	if stampedMS != nil {
		r.MaxMillis = *stampedMS
	}
	if exactMS != nil && (stampedMS == nil || *exactMS >= *stampedMS) {
		r.MaxMillis, r.MaxExact = *exactMS, true
	}
}

// RunPoint is one run for a per-run chart. Millis is its duration:
// sync_runs.duration_ms when known (Exact), else from its stamps in whole
// seconds (to its last heartbeat while it runs). Unknown marks an
// abandoned run without duration_ms (Millis 0): its stamps end at its
// last heartbeat, not when it was killed, so its duration is not known.
type RunPoint struct {
	ID           int64
	StartedAt    time.Time
	Millis       int64
	Exact        bool
	Unknown      bool
	Status       string
	RateLimited  int64
	Rejected     int64
	RemovalsHeld int64
}

// SetDuration sets Millis, Exact and Unknown from sync_runs.duration_ms
// (nil when NULL), the run's stamps' whole seconds and its Status (set
// first): an abandoned run without duration_ms is Unknown.
func (p *RunPoint) SetDuration(exactMS *int64, stampSeconds int64) {
	p.Millis, p.Exact, p.Unknown = stampSeconds*1000, false, false
	switch {
	case exactMS != nil:
		p.Millis, p.Exact = *exactMS, true
	case p.Status == StatusAbandoned:
		p.Millis, p.Unknown = 0, true
	}
}

// RejectedItem is one row of rejected_cards, its data cut to
// reportrows.ReportValueBytes.
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
// text cut to reportrows.ReportValueBytes. A field that was added has Before "" and
// Added; one that was dropped has After "" and Dropped.
type FieldChange struct {
	Name           string
	Before, After  string
	Added, Dropped bool
}

// NewReportData starts the ReportData of the period [since, now] of the
// warehouse at path: Path, Since and Now in UTC and the UTC days of the
// period. It fails when the period does not start before it ends. Both
// warehouses then compare stamps to since and now at whole seconds, as
// they store them.
func NewReportData(path string, since, now time.Time) (ReportData, error) {
	if !since.Before(now) {
		return ReportData{}, fmt.Errorf("report data: the period starts at %s, after its end %s",
			since.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	d := ReportData{Path: path, Since: since.UTC(), Now: now.UTC()}
	for day := dayOf(since); !day.After(now); day = day.AddDate(0, 0, 1) {
		d.Days = append(d.Days, day)
	}
	return d, nil
}

func dayOf(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// StatusTally counts current cards by status at the end of each day of a
// report's period: the counts at the start of the period, then a +1 for
// each card version that starts on a day and a -1 for each that ends.
// FineData.Tally gives one over a finer axis's slots.
type StatusTally struct {
	n int
	// index is the slot of a stamp; -1 or n and beyond: outside.
	index  func(time.Time) int
	counts map[string][]int64
}

// Start counts n cards with status at the start of the period.
func (t *StatusTally) Start(status string, n int64) { t.add(status, 0, n) }

// Change adds n cards (a negative n removes them) with status from the end
// of day on; a day outside the period, or n = 0, changes nothing.
func (t *StatusTally) Change(day time.Time, status string, n int64) {
	if t.n == 0 {
		return
	}
	i := t.index(day)
	if i >= 0 && i < t.n && n != 0 {
		t.add(status, i, n)
	}
}

// ChangeSlot is Change at slot i (FineData.RunSlot's).
func (t *StatusTally) ChangeSlot(i int, status string, n int64) {
	if i >= 0 && i < t.n && n != 0 {
		t.add(status, i, n)
	}
}

func (t *StatusTally) add(status string, day int, n int64) {
	if t.counts[status] == nil {
		t.counts[status] = make([]int64, t.n)
	}
	for i := day; i < t.n; i++ {
		t.counts[status][i] += n
	}
}

// Fill sets d.Statuses and d.StatusCounts: the statuses with a count other
// than 0 on some day, most frequent on the last day first, then by name
// (bytewise).
func (t *StatusTally) Fill(d *ReportData) {
	d.Statuses, d.StatusCounts = t.Lists()
}

// Lists returns what Fill sets: the statuses and their counts.
func (t *StatusTally) Lists() (statuses []string, counts [][]int64) {
	for st, c := range t.counts {
		if slices.ContainsFunc(c, func(n int64) bool { return n != 0 }) {
			statuses = append(statuses, st)
		}
	}
	last := t.n - 1
	slices.SortFunc(statuses, func(a, b string) int {
		if ca, cb := t.counts[a][last], t.counts[b][last]; ca != cb {
			if ca > cb {
				return -1
			}
			return 1
		}
		if a < b {
			return -1
		}
		return 1
	})
	for _, st := range statuses {
		counts = append(counts, t.counts[st])
	}
	return statuses, counts
}

// NewBalanceDay is the BalanceDay of amount on day from its count and its
// first, smallest, largest and last value in cents, with their exact text.
func NewBalanceDay(amount string, day time.Time, snapshots, first, lo, hi, last int64) BalanceDay {
	return BalanceDay{Amount: amount, Day: day, Snapshots: snapshots, First: first, Min: lo, Max: hi, Last: last,
		FirstText: centsText(first), MinText: centsText(lo), MaxText: centsText(hi), LastText: centsText(last)}
}

// SetBalances sets d.Balances from days of any order: by amount in
// AmountNames' order, then in the order given (by day).
func (d *ReportData) SetBalances(days []BalanceDay) {
	d.Balances = nil
	for _, name := range AmountNames() {
		for _, b := range days {
			if b.Amount == name {
				d.Balances = append(d.Balances, b)
			}
		}
	}
}

// centsText is the exact decimal text of an amount in cents, as the views
// show it ('31337.07', '-0.07').
func centsText(minor int64) string { return money.FromMinor(minor, 2).String() }

// NewStatusTally returns an empty tally over days (ReportData.Days).
func NewStatusTally(days []time.Time) *StatusTally {
	index := func(t time.Time) int {
		if len(days) == 0 {
			return -1
		}
		return int(dayOf(t).Sub(days[0]) / (24 * time.Hour))
	}
	return &StatusTally{n: len(days), index: index, counts: map[string][]int64{}}
}
