package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
)

// TestRunSpanSubSecond: a measured duration (sync_runs.duration_ms) keeps
// its sub-second part; one from whole-second stamps does not pretend to.
func TestRunSpanSubSecond(t *testing.T) {
	for _, c := range []struct {
		ms    int64
		exact bool
		want  string
	}{
		{1234, true, "1.234 s"},
		{42, true, "0.042 s"},
		{0, true, "0.000 s"},
		{59999, true, "59.999 s"},
		{60000, true, "1 min 0.0 s"},
		{185299, true, "3 min 5.2 s"},
		{3599999, true, "59 min 59.9 s"},
		{2*3600*1000 + 5*60*1000 + 9123, true, "2 h 5 min"},
		{1000, false, "1 s"},
		{0, false, "under 1 s"},
		{185000, false, "3 min 5 s"},
	} {
		if got := runSpan(c.ms, c.exact); got != c.want {
			t.Errorf("runSpan(%d, %v) = %q, want %q", c.ms, c.exact, got, c.want)
		}
	}
	ms := int64(1234)
	rows := runRows([]load.Run{{ID: 3, Status: load.StatusSucceeded, DurationMS: &ms}})
	if len(rows) != 1 || rows[0].Duration != "1.234 s" {
		t.Errorf("runs table: %+v, want a duration of 1.234 s", rows)
	}
}

// TestRunChartsMeasured: the duration charts draw runs with their
// measured milliseconds and name the longest by them: run 2's 1.234 s
// beats run 1's 1 s from its stamps (drawn as 1000 ms), and a slot's
// longest run is told to the millisecond.
func TestRunChartsMeasured(t *testing.T) {
	now := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	points := []load.RunPoint{
		{ID: 1, StartedAt: now.Add(-2 * time.Minute), Status: load.StatusSucceeded},
		{ID: 2, StartedAt: now.Add(-time.Minute), Status: load.StatusSucceeded},
	}
	points[0].SetDuration(nil, 1)
	points[1].SetDuration(&[]int64{1234}[0], 1)
	figs := perRunFigures(points)
	if svg := string(figs[0].SVG); !strings.Contains(svg, "the longest, run 2, took 1.234 s.") || strings.Contains(svg, "fetch") || strings.Contains(svg, `class="line`) {
		t.Errorf("duration chart (no line for the pages' fetch time): %s", svg)
	}
	for _, l := range figs[0].Legend {
		if l.Line {
			t.Errorf("duration legend has a line %+v", l)
		}
	}
	var day load.RunDay
	day.SetLongest(&[]int64{1234}[0], &[]int64{1000}[0])
	if day.MaxMillis != 1234 || !day.MaxExact {
		t.Fatalf("longest of 1234 ms measured and 1 s stamped: %+v", day)
	}
	d, err := load.NewReportData("w.db", now.Add(-90*24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	first := now.Add(-30 * time.Hour)
	d.FirstRunAt = &first
	d.Fine = load.PlanFine(&d)
	day.Day, day.Runs, day.Succeeded = now.Add(-time.Minute), 80, 80
	d.Fine.AddRuns([]load.RunDay{day})
	figs, _ = runFigures(d)
	if svg := string(figs[1].SVG); !strings.Contains(svg, "took 1.234 s, in hour 11:00") {
		t.Errorf("longest run per hour: %s", svg)
	}
}

// TestOldWarehouseDurations: a warehouse of release 4 migrates with its
// runs' duration_ms NULL; the report draws them from their stamps, and a
// new run with its measured duration, and still renders.
func TestOldWarehouseDurations(t *testing.T) {
	dump, err := os.ReadFile(filepath.Join("..", "load", "sqlite", "testdata", "release4.sql"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "old.db")
	if err := sqlite.LoadSQL(t.Context(), path, string(dump)); err != nil {
		t.Fatal(err)
	}
	w, err := sqlite.Open(t.Context(), path, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	old, err := w.Runs(t.Context(), 100)
	if err != nil || len(old) == 0 {
		t.Fatalf("runs %d: %v", len(old), err)
	}
	for _, r := range old {
		if r.DurationMS != nil {
			t.Errorf("run %d of release 4 has duration_ms %d after the migration, want NULL", r.ID, *r.DurationMS)
		}
	}
	id, err := w.StartRun(t.Context(), load.TriggerSchedule, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(t.Context(), id, load.RunResult{Status: load.StatusSucceeded, Duration: 1234567 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	since := time.Since(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	d, err := w.ReportData(t.Context(), time.Now().Add(-since), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.RunPoints) != len(old)+1 {
		t.Fatalf("%d run points, want %d", len(d.RunPoints), len(old)+1)
	}
	for _, p := range d.RunPoints {
		if exact := p.ID == id; p.Exact != exact || exact && p.Millis != 1234 || !exact && p.Millis%1000 != 0 {
			t.Errorf("run point %+v: want run %d measured (1234 ms), the others from their stamps", p, id)
		}
	}
	if n := len(d.RunDays); n < 2 || d.RunDays[n-1].MaxMillis != 1234 || !d.RunDays[n-1].MaxExact || d.RunDays[0].MaxExact {
		t.Errorf("run days %+v: want today's longest run measured (1234 ms), release 4's from their stamps", d.RunDays)
	}
	out := filepath.Join(dir, "report.html")
	if err := Write(t.Context(), w, out, Options{Since: since}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "1.234 s") {
		t.Error("the report does not show the new run's 1.234 s")
	}
	checkSelfContained(t, b)
}

// TestAbandonedUnknown: an abandoned run without duration_ms (killed: its
// stamps stop at its last heartbeat) has an unknown duration, in the
// table and in the per-run chart (no bar, not the longest); a finished
// run without it (recorded before schema version 14) keeps its stamps'.
func TestAbandonedUnknown(t *testing.T) {
	start := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	fin := start.Add(5 * time.Second)
	rows := runRows([]load.Run{
		{ID: 2, Status: load.StatusAbandoned, StartedAt: start.Add(7 * time.Second), HeartbeatAt: start.Add(8 * time.Second)},
		{ID: 1, Status: load.StatusSucceeded, StartedAt: start, HeartbeatAt: fin, FinishedAt: &fin},
	})
	if rows[0].Duration != "unknown" || rows[1].Duration != "5 s" || rows[0].Started != "2026-03-03 12:00:07 UTC" {
		t.Errorf("durations %q, %q; started %q", rows[0].Duration, rows[1].Duration, rows[0].Started)
	}
	points := []load.RunPoint{{ID: 1, StartedAt: start, Status: load.StatusAbandoned}, {ID: 2, StartedAt: fin, Status: load.StatusSucceeded}}
	points[0].SetDuration(nil, 1)
	points[1].SetDuration(nil, 0)
	if !points[0].Unknown || points[0].Millis != 0 || points[1].Unknown {
		t.Fatalf("points %+v", points)
	}
	svg := string(perRunFigures(points)[0].SVG)
	if !strings.Contains(svg, "the longest, run 2, took under 1 s") {
		t.Errorf("duration chart: %s", svg)
	}
	if svg := string(perRunFigures(points[:1])[0].SVG); !strings.Contains(svg, "no duration is known (abandoned without one)") {
		t.Errorf("duration chart of an abandoned run: %s", svg)
	}
}
