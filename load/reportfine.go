package load

import (
	"slices"
	"sort"
	"time"
)

// Limits of the finer time axis (ReportData.Fine).
const (
	// ReportFineSpan is the least data a period must hold to be drawn per
	// day: from its first run in the period to its end. Less is drawn per
	// run or per hour.
	ReportFineSpan = 72 * time.Hour
	// ReportFineRuns is the most runs a short period may hold to be drawn
	// per run; more are drawn per hour.
	ReportFineRuns = 72
)

// Units of FineData.
const (
	FineRun  = "run"
	FineHour = "hour"
)

// FineData is a short period's data (less than ReportFineSpan from its
// first run) in slots finer than days: one per run, or one per UTC hour.
// Rows stamped before the first slot count in the first; a row belongs
// to the last slot that starts at or before its stamp.
type FineData struct {
	// Unit is FineRun or FineHour.
	Unit string
	// Starts are the slots' starts, ascending: the runs' starts (Runs
	// names them) or whole UTC hours.
	Starts []time.Time
	Runs   []int64
	// Balances are BalanceDays per slot (Day is the slot's start, Slot its
	// index), by amount in AmountNames' order, then slot.
	Balances []BalanceDay
	// Statuses and StatusCounts are ReportData's, at the end of each slot.
	Statuses     []string
	StatusCounts [][]int64
	// CardChanges count the card versions per slot with any.
	CardChanges []ChangeDay
}

// PlanFine returns the slots of d's finer axis, without data, or nil when
// the period is drawn per day: when it lists no run (RunPoints) or its
// first run started ReportFineSpan or more before its end.
func PlanFine(d *ReportData) *FineData {
	if len(d.RunPoints) == 0 {
		return nil
	}
	first := d.RunPoints[0].StartedAt
	if first.Before(d.Since) {
		first = d.Since
	}
	if d.Now.Sub(first) >= ReportFineSpan {
		return nil
	}
	sorted := slices.IsSortedFunc(d.RunPoints, func(a, b RunPoint) int { return a.StartedAt.Compare(b.StartedAt) })
	if len(d.RunPoints) <= ReportFineRuns && sorted {
		f := &FineData{Unit: FineRun}
		for _, r := range d.RunPoints {
			f.Starts = append(f.Starts, r.StartedAt)
			f.Runs = append(f.Runs, r.ID)
		}
		return f
	}
	f := &FineData{Unit: FineHour}
	for h := first.UTC().Truncate(time.Hour); !h.After(d.Now); h = h.Add(time.Hour) {
		f.Starts = append(f.Starts, h)
	}
	return f
}

// Slot is the index of the slot holding a row stamped t.
func (f *FineData) Slot(t time.Time) int {
	i := sort.Search(len(f.Starts), func(i int) bool { return f.Starts[i].After(t) })
	return max(i-1, 0)
}

// Tally returns a StatusTally over f's slots.
func (f *FineData) Tally() *StatusTally {
	return &StatusTally{n: len(f.Starts), index: f.Slot, counts: map[string][]int64{}}
}

// SetBalances merges rows of any granularity finer than the slots (the
// warehouse's rows per stamp), ordered by amount then stamp, into
// f.Balances.
func (f *FineData) SetBalances(rows []BalanceDay) {
	var out []BalanceDay
	for _, r := range rows {
		i := f.Slot(r.Day)
		if n := len(out); n > 0 && out[n-1].Amount == r.Amount && out[n-1].Slot == i {
			p := out[n-1]
			out[n-1] = NewBalanceDay(p.Amount, p.Day, p.Snapshots+r.Snapshots, p.First, min(p.Min, r.Min), max(p.Max, r.Max), r.Last)
			out[n-1].Slot = i
			continue
		}
		b := NewBalanceDay(r.Amount, f.Starts[i], r.Snapshots, r.First, r.Min, r.Max, r.Last)
		b.Slot = i
		out = append(out, b)
	}
	var d ReportData
	d.SetBalances(out)
	f.Balances = d.Balances
}

// AddChanges merges rows of card version counts (by stamp, any order)
// into f.CardChanges, one per slot with any.
func (f *FineData) AddChanges(rows []ChangeDay) {
	sums := make([]ChangeDay, len(f.Starts))
	seen := make([]bool, len(f.Starts))
	for _, c := range rows {
		i := f.Slot(c.Day)
		s := &sums[i]
		s.New, s.Changed, s.Removed, s.Returned = s.New+c.New, s.Changed+c.Changed, s.Removed+c.Removed, s.Returned+c.Returned
		seen[i] = true
	}
	f.CardChanges = nil
	for i, s := range sums {
		if seen[i] {
			s.Day, s.Slot = f.Starts[i], i
			f.CardChanges = append(f.CardChanges, s)
		}
	}
}
