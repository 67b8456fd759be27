package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/internal/testbinary"
	"github.com/cardsync/cardsync/load/sqlitecheck"
	"github.com/cardsync/cardsync/sim"
)

// TestDemoAndItsQueries runs the demo, then every query command it prints,
// exactly as printed, through bash: each must succeed with rows and leave
// the warehouse's -wal and -shm in place (a read-write sqlite3 that closes
// last removes them, and read-only users need them). The demo has ended, so
// no other connection holds the file: the case where that removal happens.
func TestDemoAndItsQueries(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "demo.db")
	e := &env{t: t, vars: map[string]string{}}
	code, out, errOut := e.run(t.Context(), "demo", "-db", db, "-cards", "120", "-rate", "200")
	if code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"1) backfill", "120 new", "1 changed", "2 cards not listed", "3) sync again", "2 removed",
		"rate limited 1", "1 returned", "1 card not listed", "sqlite3"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	sqlitecheck.Program(t, "sqlite3", "sqlite3")
	var printed []string
	for _, line := range strings.Split(out, "\n") {
		if cmd, ok := strings.CutPrefix(line, "  sqlite3 "); ok {
			printed = append(printed, "sqlite3 "+cmd)
		}
	}
	if len(printed) != len(demoQueries) {
		t.Fatalf("demo printed %d query commands, want %d:\n%s", len(printed), len(demoQueries), out)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(db + suffix); err != nil {
			t.Fatalf("the demo warehouse has no %s before the queries: %v", suffix, err)
		}
	}
	for i, line := range printed {
		if !strings.Contains(line, " -readonly ") {
			t.Errorf("query %d does not open the file read-only: %s", i+1, line)
		}
		cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", line)
		testbinary.Own(cmd)
		cmd.Dir = dir
		res, err := cmd.CombinedOutput()
		if err != nil || len(bytes.TrimSpace(res)) == 0 {
			t.Errorf("%s\nfailed or returned no rows: %v\n%s", line, err, res)
		}
		for _, suffix := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(db + suffix); err != nil {
				t.Fatalf("%s\nremoved the warehouse's %s: %v", line, suffix, err)
			}
		}
	}
}

func TestDemoRefusesARealWarehouse(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 1, Cards: 20})
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill exit %d\n%s\n%s", code, out, errOut)
	}
	before, err := os.ReadFile(e.db)
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut := e.run(t.Context(), "demo", "-db", e.db, "-cards", "10")
	if code != exitConfig || !strings.Contains(errOut, "it holds 1 non-demo run;") {
		t.Fatalf("demo on a real warehouse: exit %d, %q; want a refusal", code, errOut)
	}
	after, err := os.ReadFile(e.db)
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("the real warehouse changed (%v)", err)
	}
	other := filepath.Join(t.TempDir(), "notes.db")
	os.WriteFile(other, []byte("not sqlite at all, but precious"), 0o600)
	if code, _, errOut := e.run(t.Context(), "demo", "-db", other); code != exitConfig {
		t.Errorf("demo on a foreign file: exit %d, %q; want a refusal", code, errOut)
	}
	if b, _ := os.ReadFile(other); string(b) != "not sqlite at all, but precious" {
		t.Errorf("demo overwrote a foreign file")
	}
}
