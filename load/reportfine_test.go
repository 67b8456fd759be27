package load

import (
	"testing"
	"time"
)

func runsEvery(start time.Time, n int, every time.Duration) []RunPoint {
	var out []RunPoint
	for i := range n {
		out = append(out, RunPoint{ID: int64(i + 1), StartedAt: start.Add(time.Duration(i) * every)})
	}
	return out
}

// TestPlanFine: a period is drawn per run up to 72 runs, else in the
// smallest bucket giving at most 72 slots from the first run's (2 or more
// when the runs are a second or more apart), else (more than 72 days of
// runs) per day; with no run, per day.
func TestPlanFine(t *testing.T) {
	now := time.Date(2026, 3, 3, 12, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		since time.Time
		runs  []RunPoint
		// first is the first run's start when runs is nil (too many).
		first  time.Duration
		unit   string
		bucket time.Duration
		starts int
	}{
		{"three runs in a minute", now.Add(-90 * 24 * time.Hour), runsEvery(now.Add(-time.Minute), 3, time.Second), 0, FineRun, 0, 3},
		{"a day of hourly runs", now.Add(-90 * 24 * time.Hour), runsEvery(now.Add(-24*time.Hour), 24, time.Hour), 0, FineRun, 0, 24},
		{"a day of 5-minute runs", now.Add(-90 * 24 * time.Hour), runsEvery(now.Add(-24*time.Hour), 288, 5*time.Minute), 0, FineBucket, time.Hour, 25},
		{"a period of two hours in a long history", now.Add(-2 * time.Hour), runsEvery(now.Add(-2*time.Hour), 100, time.Minute), 0, FineBucket, 5 * time.Minute, 25},
		{"two days of 5-minute runs, too many to list", now.Add(-90 * 24 * time.Hour), nil, 48 * time.Hour, FineBucket, time.Hour, 49},
		{"90 runs in 14 s", now.Add(-90 * 24 * time.Hour), runsEvery(now.Add(-14*time.Second), 90, 155*time.Millisecond), 0, FineBucket, time.Second, 15},
		{"400 runs over 60 days", now.Add(-90 * 24 * time.Hour), runsEvery(now.Add(-60*24*time.Hour), 400, 3*time.Hour+36*time.Minute), 0, "", 0, 0},
		{"400 runs over 2 days", now.Add(-90 * 24 * time.Hour), runsEvery(now.Add(-48*time.Hour), 400, 7*time.Minute), 0, FineBucket, time.Hour, 49},
		{"400 runs over 90 days", now.Add(-90 * 24 * time.Hour), runsEvery(now.Add(-90*24*time.Hour), 400, 5*time.Hour+24*time.Minute), 0, "", 0, 0},
		{"four days", now.Add(-90 * 24 * time.Hour), runsEvery(now.Add(-96*time.Hour), 4, 24*time.Hour), 0, "", 0, 0},
		{"three days", now.Add(-90 * 24 * time.Hour), runsEvery(now.Add(-71*time.Hour), 4, 17*time.Hour), 0, FineRun, 0, 4},
		{"no run", now.Add(-time.Hour), nil, 0, "", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewReportData("w.db", tt.since, now)
			if err != nil {
				t.Fatal(err)
			}
			d.RunPoints = tt.runs
			if len(tt.runs) > 0 {
				d.FirstRunAt = &tt.runs[0].StartedAt
			} else if tt.first > 0 {
				at := now.Add(-tt.first)
				d.FirstRunAt = &at
			}
			f := PlanFine(&d)
			if tt.unit == "" {
				if f != nil {
					t.Fatalf("fine %s with %d slots, want per day", f.Unit, len(f.Starts))
				}
				return
			}
			if f == nil || f.Unit != tt.unit || f.Bucket != tt.bucket || len(f.Starts) != tt.starts {
				t.Fatalf("fine %+v, want %s %v with %d slots", f, tt.unit, tt.bucket, tt.starts)
			}
			if len(f.Starts) < 2 || len(f.Starts) > ReportFineRuns {
				t.Errorf("%d slots, want 2 to %d", len(f.Starts), ReportFineRuns)
			}
		})
	}
}

// TestFineMerges: rows per run or per stamp are merged into their slots:
// first of the first, lowest, highest, last of the last.
func TestFineMerges(t *testing.T) {
	now := time.Date(2026, 3, 3, 12, 30, 0, 0, time.UTC)
	f := &FineData{Unit: FineBucket, Bucket: time.Hour, Starts: []time.Time{now.Truncate(time.Hour).Add(-time.Hour), now.Truncate(time.Hour)}}
	h := f.Starts[1]
	f.SetBalances([]BalanceDay{
		NewBalanceDay("balance", h.Add(-2*time.Hour), 1, 5, 5, 5, 5), // before the first hour: in it
		NewBalanceDay("balance", h.Add(time.Minute), 1, 10, 10, 10, 10),
		NewBalanceDay("balance", h.Add(2*time.Minute), 2, 7, 3, 12, 9),
	})
	want := []BalanceDay{NewBalanceDay("balance", f.Starts[0], 1, 5, 5, 5, 5), NewBalanceDay("balance", h, 3, 10, 3, 12, 9)}
	want[1].Slot = 1
	if len(f.Balances) != 2 || f.Balances[0] != want[0] || f.Balances[1] != want[1] {
		t.Errorf("balances %+v, want %+v", f.Balances, want)
	}
	r := &FineData{Unit: FineRun, Starts: []time.Time{now, now}, Runs: []int64{4, 7}}
	r.AddChanges([]ChangeDay{{Run: 3, New: 1}, {Run: 4, New: 2}, {Run: 7, Changed: 1}, {Run: 7, Removed: 1}})
	if len(r.CardChanges) != 2 || r.CardChanges[0].New != 3 || r.CardChanges[1].Changed != 1 || r.CardChanges[1].Removed != 1 || r.CardChanges[1].Run != 7 {
		t.Errorf("changes per run %+v", r.CardChanges)
	}
}
