package worker

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/load/sqlitecheck"
	"github.com/cardsync/cardsync/sim"
)

// TestSyncedWarehousePassesSystemIntegrityCheck syncs from the simulator
// (a backfill, then a change, a removal confirmed over two walks and a new
// card) and runs the README's check, PRAGMA integrity_check with the
// system's sqlite3 CLI and Python's sqlite3 module, on the live file and on
// a backup: each must answer exactly "ok" (Debian 12's SQLite 3.40.1
// reported false NULL values on every warehouse of schema 5).
func TestSyncedWarehousePassesSystemIntegrityCheck(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t, sim.Options{Seed: 5, Cards: 60})
	sync := func() {
		t.Helper()
		if res, err := f.job.Run(ctx, TriggerBackfill, Options{}); err != nil || res.Status != "succeeded" {
			t.Fatalf("run: status %q err %v", res.Status, err)
		}
	}
	sync()
	all := f.srv.Cards()
	f.srv.UpdateCard(all[0].ID)
	f.srv.RemoveCard(all[1].ID)
	f.srv.AddCard()
	sync()
	sync()
	if st, err := f.wh.Summary(ctx); err != nil || st.CurrentCards != 60 {
		t.Fatalf("summary: %+v %v, want 60 current cards", st, err)
	}
	sqlitecheck.IntegrityOK(t, f.wh.Path())
	backup, err := sqlite.Backup(ctx, f.wh.Path(), filepath.Join(t.TempDir(), "backups"), 1, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sqlitecheck.IntegrityOK(t, backup.Path)
}
