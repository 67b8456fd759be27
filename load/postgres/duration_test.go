package postgres

import (
	"slices"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestRunDurationMigrated: FinishRun stores the measured duration in
// sync_runs.duration_ms; a database from before migration 11 gains the
// column with NULL for its runs, and the report draws those from their
// stamps, to the second, beside a new run's measured 1.234 s.
func TestRunDurationMigrated(t *testing.T) {
	ctx := t.Context()
	w, _, clk := openPG(t, Options{})
	old := startRun(t, w)
	clk.Advance(3 * time.Second)
	if err := w.FinishRun(ctx, old, load.RunResult{Status: load.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`ALTER TABLE sync_runs DROP COLUMN duration_ms`, `DELETE FROM schema_migrations WHERE version = 11`} {
		if _, err := w.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	applied, err := Migrate(ctx, w.pool, nil, load.DefaultAmountRules())
	if err != nil || !slices.Equal(applied, []int{11}) {
		t.Fatalf("Migrate = %v, %v; want migration 11 applied", applied, err)
	}
	clk.Advance(time.Minute)
	run := startRun(t, w)
	if err := w.FinishRun(ctx, run, load.RunResult{Status: load.StatusFailed, Error: "x", Duration: 1234567 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	runs, err := w.Runs(ctx, 2)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %+v: %v", runs, err)
	}
	if d := runs[0].DurationMS; d == nil || *d != 1234 {
		t.Errorf("new run's duration_ms %v, want 1234", d)
	}
	if d := runs[1].DurationMS; d != nil {
		t.Errorf("run from before migration 11 has duration_ms %d, want NULL", *d)
	}
	d, err := w.ReportData(ctx, clk.Now().Add(-time.Hour), clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := []load.RunPoint{{ID: old, Millis: 3000}, {ID: run, Millis: 1234, Exact: true}}
	if len(d.RunPoints) != 2 {
		t.Fatalf("run points %+v", d.RunPoints)
	}
	for i, p := range d.RunPoints {
		if p.ID != want[i].ID || p.Millis != want[i].Millis || p.Exact != want[i].Exact {
			t.Errorf("run point %+v, want %+v", p, want[i])
		}
	}
	if r := d.RunDays; len(r) != 1 || r[0].MaxMillis != 3000 || r[0].MaxExact || r[0].TotalMillis != 4234 {
		t.Errorf("run days %+v: want the longest 3 s from the stamps, 4.234 s in all", r)
	}
}
