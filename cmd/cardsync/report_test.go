package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

func TestParseSince(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"90d", 90 * 24 * time.Hour, true},
		{"1d", 24 * time.Hour, true},
		{"36h", 36 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"0d", 0, false},
		{"-3d", 0, false},
		{"-1h", 0, false},
		{"1.5d", 0, false},
		{"d", 0, false},
		{"", 0, false},
		{"90 days", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSince(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("parseSince(%q) = %v, %v; want %v (ok %v)", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

// TestReportCommand: report reads the warehouse named by the configuration
// (here CARDSYNC_WAREHOUSE_PATH, then -db) read-only and writes the file.
func TestReportCommand(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 3, Cards: 40})
	out := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := e.run(t.Context(), "report", "-o", out); code != exitWarehouse || !strings.Contains(errOut, "does not exist") {
		t.Errorf("report before any sync: exit %d, %q; want %d", code, errOut, exitWarehouse)
	}
	if code, _, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill exit %d: %s", code, errOut)
	}
	code, stdout, errOut := e.run(t.Context(), "report", "-o", out, "-since", "7d")
	if code != 0 || !strings.Contains(stdout, out) {
		t.Fatalf("report exit %d, stdout %q, stderr %s", code, stdout, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<h1>cardsync report</h1>") || !strings.Contains(string(b), e.db) || strings.Contains(string(b), "<script") {
		t.Errorf("report does not name the warehouse or has a script:\n%.500s", b)
	}
	if code, _, _ := e.run(t.Context(), "report", "-o", out, "-since", "soon"); code != exitConfig {
		t.Errorf("-since soon: exit %d, want %d", code, exitConfig)
	}
	other := filepath.Join(t.TempDir(), "other.html")
	e.vars["CARDSYNC_WAREHOUSE_PATH"] = filepath.Join(t.TempDir(), "none.db")
	if code, _, errOut := e.run(t.Context(), "report", "-db", e.db, "-o", other); code != 0 {
		t.Errorf("report -db: exit %d: %s", code, errOut)
	}
}

func TestDemoWritesReport(t *testing.T) {
	dir := t.TempDir()
	e := &env{t: t, vars: map[string]string{}}
	code, out, errOut := e.run(t.Context(), "demo", "-db", filepath.Join(dir, "demo.db"), "-cards", "45", "-rate", "200")
	if code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, errOut)
	}
	page := filepath.Join(dir, "report.html")
	if !strings.Contains(out, "report: "+page) {
		t.Errorf("demo does not print the report's path %s:\n%s", page, out)
	}
	if fi, err := os.Stat(page); err != nil || fi.Size() < 10_000 {
		t.Errorf("demo report: %v, %v", fi, err)
	}
}
