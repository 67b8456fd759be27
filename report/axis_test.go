package report

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestSpanExact: ages and durations to the second, never rounded to 0.
func TestSpanExact(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                 "under 1 s",
		999 * time.Millisecond:            "under 1 s",
		42 * time.Second:                  "42 s",
		60 * time.Second:                  "1 min",
		185 * time.Second:                 "3 min 5 s",
		2*time.Hour + 5*time.Minute + 9e9: "2 h 5 min",
		76 * time.Hour:                    "3 d 4 h",
	} {
		if got := span(d); got != want {
			t.Errorf("span(%v) = %q, want %q", d, got, want)
		}
	}
	for ms, want := range map[int64]string{0: "0.000 s", 1234: "1.234 s", 60005: "60.005 s"} {
		if got := millis(ms); got != want {
			t.Errorf("millis(%d) = %q, want %q", ms, got, want)
		}
	}
	if got := secondsTick(1500); got != "1.5" {
		t.Errorf("secondsTick(1500) = %q", got)
	}
	if got := secondsTick(2000); got != "2" {
		t.Errorf("secondsTick(2000) = %q", got)
	}
}

// youngData is a warehouse three minutes old: three runs a minute apart,
// the second the longest (2 s), one snapshot each.
func youngData(t *testing.T) load.ReportData {
	t.Helper()
	now := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	d, err := load.NewReportData("w.db", now.Add(-90*24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		d.RunPoints = append(d.RunPoints, load.RunPoint{ID: int64(i + 5), StartedAt: now.Add(time.Duration(i-3) * time.Minute),
			Status: load.StatusSucceeded, Millis: int64(i % 2 * 2000)})
	}
	d.FirstRunAt = &d.RunPoints[0].StartedAt
	d.Fine = load.PlanFine(&d)
	var rows []load.BalanceDay
	for i := range 3 {
		b := load.NewBalanceDay("balance", time.Time{}, 1, 9854210, 9854210, 9854210, 9854210)
		b.Run = int64(i + 5)
		rows = append(rows, b)
	}
	d.Fine.SetBalances(rows)
	last := now.Add(-42 * time.Second)
	d.LastSuccessAt, d.LastSuccessRun = &last, 7
	return d
}

// TestYoungWarehousePage: a warehouse minutes old is drawn per run, each
// chart with a point per run; a flat amount draws no band and its legend
// names the line only; the header says the last sync was 42 s before;
// the longest run is named with its exact durations.
func TestYoungWarehousePage(t *testing.T) {
	d := youngData(t)
	if d.Fine == nil || d.Fine.Unit != load.FineRun {
		t.Fatalf("fine %+v, want per run", d.Fine)
	}
	p, err := newPage(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.LastSuccess, "run 7, 42 s before this report") {
		t.Errorf("last success %q", p.LastSuccess)
	}
	if len(p.Balances) != 1 {
		t.Fatalf("%d balance figures", len(p.Balances))
	}
	bal := p.Balances[0]
	svg := string(bal.SVG)
	if strings.Contains(svg, `class="band`) || strings.Contains(svg, "the band") || len(bal.Legend) != 1 || !strings.Contains(svg, `data-points="3"`) || !strings.Contains(svg, ">#6<") {
		t.Errorf("a flat balance over 3 runs: legend %+v, chart %s", bal.Legend, svg)
	}
	if !strings.Contains(svg, "98542.10") {
		t.Error("the balance's exact value is not a tick")
	}
	dur := string(p.Runs[0].SVG)
	if !strings.Contains(dur, "the longest, run 6, took 2 s.") || strings.Contains(dur, "fetch") {
		t.Errorf("duration chart: %s", dur)
	}
	for _, f := range append(append([]figure{p.Statuses, p.Changes}, p.Runs...), p.Balances...) {
		seen := map[int]bool{}
		for _, l := range f.Legend {
			if seen[l.Color] {
				t.Errorf("%s: legend colours %+v, want one each", f.Title, f.Legend)
			}
			seen[l.Color] = true
		}
	}
}

// TestBandWidth: a band is drawn when it has width somewhere over two
// slots or more, and not when it is a line or one slot.
func TestBandWidth(t *testing.T) {
	for _, tt := range []struct {
		band bandSeries
		want bool
	}{
		{bandSeries{points: []slotRange{{0, 5, 5}, {1, 7, 7}}}, false},
		{bandSeries{points: []slotRange{{0, 5, 9}}}, false},
		{bandSeries{points: []slotRange{{0, 5, 5}, {1, 7, 8}}}, true},
	} {
		c := &chart{id: "b", title: "b", desc: "b", slots: 2, slotLabel: func(int) string { return "x" }, yLabel: count, bands: []bandSeries{tt.band}}
		if got := strings.Contains(string(c.svg()), `class="band`); got != tt.want || tt.band.hasWidth() != tt.want {
			t.Errorf("band %+v drawn %v, want %v", tt.band.points, got, tt.want)
		}
	}
}

// TestTimelineUnits: per day beyond 3 days of data, with day labels; per
// hour with hour labels.
func TestTimelineUnits(t *testing.T) {
	now := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	d, err := load.NewReportData("w.db", now.Add(-5*24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	if tl := newTimeline(d); tl.per != "day" || tl.slots != 6 || tl.label(0) != "Feb 26" {
		t.Errorf("5 days: per %s, %d slots, first %q", tl.per, tl.slots, tl.label(0))
	}
	d.Fine = &load.FineData{Unit: load.FineBucket, Bucket: time.Hour, Starts: []time.Time{now.Add(-time.Hour), now}}
	if tl := newTimeline(d); tl.per != "hour" || tl.slots != 2 || tl.label(0) != "Mar 3 11:00" || tl.label(1) != "12:00" || tl.within() != "within an hour" {
		t.Errorf("2 hours: per %s, %d slots, labels %q %q", tl.per, tl.slots, tl.label(0), tl.label(1))
	}
	d.Fine = &load.FineData{Unit: load.FineBucket, Bucket: 5 * time.Minute, Starts: []time.Time{now.Add(-5 * time.Minute), now}}
	if tl := newTimeline(d); tl.slotName() != "per 5 min" || tl.noun != "5-min slot" || tl.label(0) != "Mar 3 11:55" || tl.label(1) != "12:00" {
		t.Errorf("5-minute buckets: %s, %s, labels %q %q", tl.slotName(), tl.noun, tl.label(0), tl.label(1))
	}
	d.Fine = &load.FineData{Unit: load.FineBucket, Bucket: time.Second, Starts: []time.Time{now.Add(-time.Second), now}}
	if tl := newTimeline(d); tl.slotName() != "per second" || tl.label(0) != "Mar 3 11:59:59" || tl.label(1) != "12:00:00" {
		t.Errorf("1-second buckets: %s, labels %q %q", tl.slotName(), tl.label(0), tl.label(1))
	}
}

// TestRunsPerHour: more than 72 runs over 30 hours are drawn per UTC
// hour (the smallest bucket giving at most 72 slots).
func TestRunsPerHour(t *testing.T) {
	now := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	d, err := load.NewReportData("w.db", now.Add(-90*24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	first := now.Add(-30 * time.Hour)
	d.FirstRunAt = &first
	d.Fine = load.PlanFine(&d)
	d.Fine.AddRuns([]load.RunDay{{Day: first, Runs: 12, Succeeded: 12, MaxMillis: 4000}, {Day: now.Add(-time.Minute), Runs: 11, Succeeded: 10, Failed: 1, MaxMillis: 7000}})
	figs, note := runFigures(d)
	if !strings.Contains(note, "one bar per hour, UTC") || len(figs) != 3 || figs[0].Title != "Runs per hour, by outcome" {
		t.Fatalf("note %q, figures %+v", note, figs)
	}
	if svg := string(figs[1].SVG); !strings.Contains(svg, `data-points="2"`) || !strings.Contains(svg, "took 7 s, in hour 11:00") {
		t.Errorf("longest run per hour: %s", svg)
	}
}
