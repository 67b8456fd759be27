package report

import (
	"context"
	"slices"
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
// the second the longest (2 s), one snapshot each, whose balance never
// moved and whose cards_balance moved at each run.
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
	for i := range 3 {
		v := int64(-1207 + 4000*i)
		b := load.NewBalanceDay("cards_balance", time.Time{}, 1, v, v, v, v)
		b.Run = int64(i + 5)
		rows = append(rows, b)
	}
	d.Fine.SetBalances(rows)
	last := now.Add(-42 * time.Second)
	d.LastSuccessAt, d.LastSuccessRun = &last, 7
	return d
}

// TestYoungWarehousePage: a warehouse minutes old is drawn per run, each
// chart with a point per run; an amount that moved at each run (one
// snapshot a run) draws no band and its legend names the line only; one
// that never moved draws no chart, but a line of text with its exact
// value; the header says the last sync was 42 s before; the longest run
// is named with its exact durations.
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
	if len(p.Balances) != 1 || !slices.Equal(p.Unchanged, []unchangedAmount{{"balance", "98542.10", 3}}) {
		t.Fatalf("%d balance figures, unchanged %+v; want cards_balance drawn, balance unchanged over 3 snapshots", len(p.Balances), p.Unchanged)
	}
	bal := p.Balances[0]
	svg := string(bal.SVG)
	if strings.Contains(svg, `class="band`) || strings.Contains(svg, "the band") || len(bal.Legend) != 1 || !strings.Contains(svg, `data-points="3"`) || !strings.Contains(svg, ">#6<") {
		t.Errorf("cards_balance, one value a run over 3 runs: legend %+v, chart %s", bal.Legend, svg)
	}
	var page strings.Builder
	if err := Render(&page, d); err != nil {
		t.Fatal(err)
	}
	if want := `<li><b>balance</b>: <span class="mono">98542.10</span> <span class="muted">(unchanged over 3 snapshots)</span></li>`; !strings.Contains(page.String(), want) {
		t.Errorf("the page lacks the unchanged balance's line %s", want)
	}
	if strings.Contains(page.String(), `id="bal-balance`) || !strings.Contains(page.String(), `id="bal-cards_balance-t"`) {
		t.Error("the unchanged balance has a chart, or the moving cards_balance none")
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

// TestManyRunsInSeconds: 90 runs in 14 s are drawn per second (not one
// dot per hour): every chart has at least 2 points, and says so.
func TestManyRunsInSeconds(t *testing.T) {
	now := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	d, err := load.NewReportData("w.db", now.Add(-90*24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	start := now.Add(-14 * time.Second)
	var bal []load.BalanceDay
	var runs []load.RunDay
	for i := range 90 {
		at := start.Add(time.Duration(i) * 14 * time.Second / 89)
		d.RunPoints = append(d.RunPoints, load.RunPoint{ID: int64(i + 1), StartedAt: at, Status: load.StatusSucceeded, Millis: 100, Exact: true})
		bal = append(bal, load.NewBalanceDay("balance", at.Truncate(time.Second), 1, int64(1000+i), int64(1000+i), int64(1000+i), int64(1000+i)))
		runs = append(runs, load.RunDay{Day: at.Truncate(time.Second), Runs: 1, Succeeded: 1, MaxMillis: 100, MaxExact: true, TotalMillis: 100})
	}
	d.FirstRunAt = &start
	d.Fine = load.PlanFine(&d)
	if d.Fine == nil || d.Fine.Unit != load.FineBucket || d.Fine.Bucket != time.Second {
		t.Fatalf("fine %+v, want per second", d.Fine)
	}
	d.Fine.SetBalances(bal)
	d.Fine.AddRuns(runs)
	tally := d.Fine.Tally()
	tally.Start("active", 3)
	d.Fine.Statuses, d.Fine.StatusCounts = tally.Lists()
	p, err := newPage(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(append([]figure{p.Statuses, p.Changes}, p.Runs...), p.Balances...) {
		svg := string(f.SVG)
		if strings.Contains(svg, `data-points="0"`) || strings.Contains(svg, `data-points="1"`) {
			t.Errorf("%s: fewer than 2 points: %s", f.Title, svg)
		}
		if strings.Contains(svg, "hour") {
			t.Errorf("%s speaks of hours: %s", f.Title, svg)
		}
	}
	if !strings.Contains(p.RunsNote, "one bar per second") || !strings.Contains(p.BalancesNote, "one point per second") {
		t.Errorf("notes %q, %q", p.RunsNote, p.BalancesNote)
	}
}

// TestManyRunsOverMonths: 400 runs over 60 or 90 days (more than
// load.ReportFineSpan of data) are drawn per day: never a bar per run
// (under a pixel wide).
func TestManyRunsOverMonths(t *testing.T) {
	now := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	for _, days := range []int{60, 90} {
		d, err := load.NewReportData("w.db", now.Add(-90*24*time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		start := now.Add(-time.Duration(days) * 24 * time.Hour)
		var rows []load.RunDay
		for i := range 400 {
			at := start.Add(time.Duration(i) * time.Duration(days) * 24 * time.Hour / 400)
			d.RunPoints = append(d.RunPoints, load.RunPoint{ID: int64(i + 1), StartedAt: at, Status: load.StatusSucceeded, Millis: 100, Exact: true})
			rows = append(rows, load.RunDay{Day: at, Runs: 1, Succeeded: 1, MaxMillis: 100, MaxExact: true})
		}
		d.FirstRunAt = &start
		d.Fine = load.PlanFine(&d)
		if d.Fine != nil {
			d.Fine.AddRuns(rows)
		}
		for _, r := range rows {
			r.Day = r.Day.Truncate(24 * time.Hour)
			if n := len(d.RunDays); n > 0 && d.RunDays[n-1].Day.Equal(r.Day) {
				d.RunDays[n-1].Runs++
				d.RunDays[n-1].Succeeded++
				continue
			}
			d.RunDays = append(d.RunDays, r)
		}
		figs, note := runFigures(d)
		if !strings.Contains(note, "one bar per day") || len(figs) != 3 {
			t.Errorf("%d days: note %q, %d figures", days, note, len(figs))
		}
		if slots := newTimeline(d).slots; slots > 91 {
			t.Errorf("%d days: %d slots, want one a day at most", days, slots)
		}
		for _, f := range figs {
			if strings.Contains(string(f.SVG), `data-points="400"`) {
				t.Errorf("%d days: %s drawn per run", days, f.Title)
			}
		}
	}
}

// TestPlurals: one day and one run are singular, and an amount's name may
// break after its '_'.
func TestPlurals(t *testing.T) {
	now := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	d, err := load.NewReportData("w.db", now.Add(-time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	d.LastRuns = []load.Run{{ID: 1, Status: load.StatusSucceeded, StartedAt: now.Add(-time.Minute), HeartbeatAt: now}}
	d.Latest = &load.LatestBalances{TakenAt: now, Amounts: []load.NamedAmount{{Name: "available_recharge_balance", Value: "1.00"}}}
	var b strings.Builder
	if err := Render(&b, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(1 UTC day)", "The only run", "available_<wbr>recharge_<wbr>balance"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("%q not on the page", want)
		}
	}
}
