package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
)

// TestBackupAndRestoreCommands: backup prints the path it wrote (default
// directory beside the warehouse, -to elsewhere); restore brings it back
// and a backfill then gives the simulator's truth; the exit codes of
// refusals.
func TestBackupAndRestoreCommands(t *testing.T) {
	srv, e := newEnv(t, sim.Options{Seed: 5, Cards: 45})
	if code, _, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, errOut)
	}
	code, out, errOut := e.run(t.Context(), "backup")
	path := strings.TrimSpace(out)
	if code != 0 || filepath.Dir(path) != filepath.Join(filepath.Dir(e.db), "backups") || !strings.HasPrefix(filepath.Base(path), "warehouse-") {
		t.Fatalf("backup: exit %d, printed %q\n%s", code, out, errOut)
	}
	to := t.TempDir()
	if code, out, errOut := e.run(t.Context(), "backup", "-to", to, "-keep", "1"); code != 0 || filepath.Dir(strings.TrimSpace(out)) != to {
		t.Fatalf("backup -to: exit %d, printed %q\n%s", code, out, errOut)
	}

	for range 3 {
		srv.UpdateCard(srv.Cards()[0].ID)
	}
	srv.AddCard()
	srv.RemoveCard(srv.Cards()[1].ID)
	if code, _, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, errOut)
	}
	// Flags may follow FILE.
	if code, out, errOut := e.run(t.Context(), "restore", path, "-log-level", "info"); code != 0 || !strings.Contains(out, load.BeforeRestoreSuffix) {
		t.Fatalf("restore: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(e.db + load.BeforeRestoreSuffix); err != nil {
		t.Errorf("no %s: %v", load.BeforeRestoreSuffix, err)
	}
	db := openDB(t, e.db)
	var runs int
	if err := db.QueryRow("SELECT count(*) FROM sync_runs").Scan(&runs); err != nil || runs != 1 {
		t.Errorf("restored warehouse has %d runs (%v), want the backup's 1", runs, err)
	}
	db.Close()
	// Two walks: a removal is confirmed by the second walk that misses it.
	for range 2 {
		if code, _, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
			t.Fatalf("backfill after restore: exit %d\n%s", code, errOut)
		}
	}
	assertMatchesTruth(t, srv, e.db)

	bad := filepath.Join(t.TempDir(), "bad.db")
	if err := os.WriteFile(bad, []byte(strings.Repeat("x", 8192)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := e.run(t.Context(), "restore", bad); code != exitWarehouse || !strings.Contains(errOut, "backup check failed") {
		t.Errorf("restore of a file that is not a database: exit %d, want %d\n%s", code, exitWarehouse, errOut)
	}
	lock, err := load.AcquireLock(e.db)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := e.run(t.Context(), "restore", path); code != exitLocked || !strings.Contains(errOut, "sync in progress") {
		t.Errorf("restore during a sync: exit %d, want %d\n%s", code, exitLocked, errOut)
	}
	lock.Close()
	if code, _, _ := e.run(t.Context(), "restore"); code != exitConfig {
		t.Errorf("restore without FILE: exit %d, want %d", code, exitConfig)
	}
	if code, _, _ := e.run(t.Context(), "backup", "-keep", "-2"); code != exitConfig {
		t.Errorf("backup -keep -2: exit %d, want %d", code, exitConfig)
	}
	e.vars["CARDSYNC_WAREHOUSE_PATH"] = filepath.Join(t.TempDir(), "missing.db")
	if code, _, _ := e.run(t.Context(), "backup"); code != exitWarehouse {
		t.Errorf("backup of a missing warehouse: exit %d, want %d", code, exitWarehouse)
	}
}
