package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

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

// TestServeReportRefresh: serve's [report] observer writes the report
// after a successful run and leaves it alone after a failed one; without
// [report] path there is none.
func TestServeReportRefresh(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 4, Cards: 25})
	if code, _, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, errOut)
	}
	out := filepath.Join(t.TempDir(), "site", "index.html")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	e.vars["CARDSYNC_REPORT_PATH"] = out
	e.vars["CARDSYNC_REPORT_SINCE"] = "7d"
	cfg, err := config.Load("", e.environ())
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Settings(false, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if s.ReportSince != 7*24*time.Hour {
		t.Fatalf("report.since = %v, want 7 days", s.ReportSince)
	}
	// The daemon's writer stays open, as under serve: the refresh reads
	// through a connection of its own.
	wh, err := sqlite.Open(t.Context(), s.DBPath, s.LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	var logs syncBuffer
	obs := reportObserver(t.Context(), s, s.DBPath, slog.New(slog.NewTextHandler(&logs, nil)))
	obs.RunFinished(t.Context(), worker.Result{Status: load.StatusFailed})
	obs.wait()
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("a failed run wrote the report")
	}
	obs.RunFinished(t.Context(), worker.Result{Status: load.StatusSucceeded})
	obs.RunFinished(t.Context(), worker.Result{Status: load.StatusSucceeded}) // folded into the first
	obs.wait()
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), "<svg") {
		t.Fatalf("report after a successful run: %v (%d bytes)", err, len(page))
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*")); len(leftovers) != 0 {
		t.Errorf("temp files left beside the report: %v", leftovers)
	}
	// A directory that is gone: logged, not fatal.
	bad := reportObserver(t.Context(), config.Settings{ReportPath: filepath.Join(t.TempDir(), "missing", "r.html"), ReportSince: time.Hour}, s.DBPath, slog.New(slog.NewTextHandler(&logs, nil)))
	bad.RunFinished(t.Context(), worker.Result{Status: load.StatusSucceeded})
	bad.wait()
	if !strings.Contains(logs.String(), "not refreshed") {
		t.Errorf("a failed refresh is not logged:\n%s", logs.String())
	}
	delete(e.vars, "CARDSYNC_REPORT_PATH")
	cfg, _ = config.Load("", e.environ())
	s, _ = cfg.Settings(false, func(string) string { return "" })
	if reportObserver(t.Context(), s, s.DBPath, nil) != nil {
		t.Errorf("without [report] path serve refreshes a report")
	}
}
