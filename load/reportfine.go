package load

import (
	"slices"
	"sort"
	"time"
)

// ReportFineRuns is the most runs a period may hold to be drawn per run,
// and the most slots of a finer axis's buckets (reportFineBuckets).
const ReportFineRuns = 72

// ReportFineSpan is the longest span of data (from the period's first
// run to its end) drawn on a finer axis than days (per run or per
// bucket): beyond it, the report is drawn per day.
const ReportFineSpan = 72 * time.Hour

// reportFineBuckets are the finer axis's bucket sizes, smallest first:
// PlanFine takes the smallest that cuts the data's span into at most
// ReportFineRuns slots.
var reportFineBuckets = []time.Duration{time.Second, 5 * time.Second, 15 * time.Second,
	time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour}

// Units of FineData.
const (
	FineRun    = "run"
	FineBucket = "bucket"
)

// FineData is a period's data in at most ReportFineRuns slots: one per
// run, or one per bucket of Bucket (whole UTC seconds, minutes, hours or
// days) from the bucket of the period's first run. Per run, a row belongs
// to the run that wrote it (BalanceDay.Run, ChangeDay.Run; a run before
// the period's first counts in the first); per bucket, to the bucket of
// its stamp (one before the first bucket counts in the first).
type FineData struct {
	// Unit is FineRun or FineBucket.
	Unit string
	// Bucket is a FineBucket axis's bucket size (one of
	// reportFineBuckets).
	Bucket time.Duration
	// Starts are the slots' starts, ascending: the runs' starts (Runs
	// names them) or the buckets'.
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
	// RunHours summarise the runs per bucket with any (FineBucket only).
	RunHours []RunDay
}

// PlanFine returns the slots of d's finer axis, without data, or nil when
// the period is drawn per day: when it has no run (FirstRunAt), or more
// than ReportFineSpan of data. Within it, it is per run
// when the period lists at most ReportFineRuns runs (RunPoints), else per
// bucket from the first run's (or the period's start): the smallest of
// reportFineBuckets giving at most ReportFineRuns slots.
func PlanFine(d *ReportData) *FineData {
	if d.FirstRunAt == nil {
		return nil
	}
	first := *d.FirstRunAt
	if first.Before(d.Since) {
		first = d.Since
	}
	if d.Now.Sub(first) > ReportFineSpan {
		return nil // per day
	}
	sorted := slices.IsSortedFunc(d.RunPoints, func(a, b RunPoint) int { return a.StartedAt.Compare(b.StartedAt) })
	if len(d.RunPoints) > 0 && len(d.RunPoints) <= ReportFineRuns && sorted {
		f := &FineData{Unit: FineRun}
		for _, r := range d.RunPoints {
			f.Starts = append(f.Starts, r.StartedAt)
			f.Runs = append(f.Runs, r.ID)
		}
		return f
	}
	for _, b := range reportFineBuckets {
		start := first.UTC().Truncate(b)
		if int(d.Now.Sub(start)/b)+1 > ReportFineRuns {
			continue
		}
		f := &FineData{Unit: FineBucket, Bucket: b}
		for h := start; !h.After(d.Now); h = h.Add(b) {
			f.Starts = append(f.Starts, h)
		}
		return f
	}
	return nil
}

// Slot is the index of the bucket holding a row stamped t.
func (f *FineData) Slot(t time.Time) int {
	i := sort.Search(len(f.Starts), func(i int) bool { return f.Starts[i].After(t) })
	return max(i-1, 0)
}

// RunSlot is the index of the slot of run (a run before the period's
// first counts in the first slot; run ids grow with their starts).
func (f *FineData) RunSlot(run int64) int {
	i := sort.Search(len(f.Runs), func(i int) bool { return f.Runs[i] > run })
	return max(i-1, 0)
}

// slotOf is the slot of a warehouse's row: by its run when f is per run,
// else by its stamp.
func (f *FineData) slotOf(at time.Time, run int64) int {
	if f.Unit == FineRun {
		return f.RunSlot(run)
	}
	return f.Slot(at)
}

// Tally returns a StatusTally over f's slots.
func (f *FineData) Tally() *StatusTally {
	return &StatusTally{n: len(f.Starts), index: f.Slot, counts: map[string][]int64{}}
}

// SetBalances merges the warehouse's rows, per run (Run set) for a
// per-run f or per stamp (Day) for a per-bucket one, ordered by amount then
// run or stamp, into f.Balances.
func (f *FineData) SetBalances(rows []BalanceDay) {
	var out []BalanceDay
	for _, r := range rows {
		i := f.slotOf(r.Day, r.Run)
		if n := len(out); n > 0 && out[n-1].Amount == r.Amount && out[n-1].Slot == i {
			p := out[n-1]
			out[n-1] = NewBalanceDay(p.Amount, p.Day, p.Snapshots+r.Snapshots, p.First, min(p.Min, r.Min), max(p.Max, r.Max), r.Last)
			out[n-1].Slot, out[n-1].Run = i, p.Run
			continue
		}
		b := NewBalanceDay(r.Amount, f.Starts[i], r.Snapshots, r.First, r.Min, r.Max, r.Last)
		b.Slot, b.Run = i, r.Run
		if f.Unit == FineRun {
			b.Run = f.Runs[i]
		}
		out = append(out, b)
	}
	var d ReportData
	d.SetBalances(out)
	f.Balances = d.Balances
}

// AddChanges merges the warehouse's card version counts (per run or per
// stamp, as SetBalances's, any order) into f.CardChanges, one per slot
// with any.
func (f *FineData) AddChanges(rows []ChangeDay) {
	sums := make([]ChangeDay, len(f.Starts))
	seen := make([]bool, len(f.Starts))
	for _, c := range rows {
		i := f.slotOf(c.Day, c.Run)
		s := &sums[i]
		s.New, s.Changed, s.Removed, s.Returned = s.New+c.New, s.Changed+c.Changed, s.Removed+c.Removed, s.Returned+c.Returned
		seen[i] = true
	}
	f.CardChanges = nil
	for i, s := range sums {
		if seen[i] {
			s.Day, s.Slot = f.Starts[i], i
			if f.Unit == FineRun {
				s.Run = f.Runs[i]
			}
			f.CardChanges = append(f.CardChanges, s)
		}
	}
}

// AddRuns merges the warehouse's run summaries per stamp (any order) into
// f.RunHours, one per bucket with any: counts add up, the longest is kept.
func (f *FineData) AddRuns(rows []RunDay) {
	sums := make([]RunDay, len(f.Starts))
	for _, r := range rows {
		i := f.Slot(r.Day)
		s := &sums[i]
		s.Runs, s.Succeeded, s.Failed, s.Interrupted = s.Runs+r.Runs, s.Succeeded+r.Succeeded, s.Failed+r.Failed, s.Interrupted+r.Interrupted
		s.Abandoned, s.Running = s.Abandoned+r.Abandoned, s.Running+r.Running
		if r.MaxMillis > s.MaxMillis || r.MaxMillis == s.MaxMillis && r.MaxExact {
			s.MaxMillis, s.MaxExact = r.MaxMillis, r.MaxExact
		}
		s.TotalMillis += r.TotalMillis
		s.RateLimited, s.Retries, s.Rejected, s.RemovalsHeld = s.RateLimited+r.RateLimited, s.Retries+r.Retries, s.Rejected+r.Rejected, s.RemovalsHeld+r.RemovalsHeld
	}
	f.RunHours = nil
	for i, s := range sums {
		if s.Runs > 0 {
			s.Day, s.Slot = f.Starts[i], i
			f.RunHours = append(f.RunHours, s)
		}
	}
}
