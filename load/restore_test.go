package load

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestore: a backup taken after one run, restored after a second run,
// brings back the first state; the second is kept in .before-restore,
// WAL frames included, and the next writer opens the restored file in WAL
// mode with its checkpoint.
func TestRestore(t *testing.T) {
	for _, mode := range []string{CheckpointAuto, CheckpointExternal} {
		t.Run(mode, func(t *testing.T) {
			w, path, _ := openTest(t, Options{Checkpoint: mode})
			fillWarehouse(t, w, 2)
			backup, err := Backup(t.Context(), path, "", 0, backupTime)
			if err != nil {
				t.Fatal(err)
			}
			run2 := startRun(t, w)
			commit(t, w, run2, page(3, idRange(31, 45), 1, 45))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := Restore(t.Context(), path, backup); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			for _, suffix := range []string{"-wal", "-shm"} {
				if _, err := os.Stat(path + suffix); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s still beside the restored file: %v", suffix, err)
				}
			}
			if n := pathInt(t, path+BeforeRestoreSuffix, "SELECT count(*) FROM cards"); n != 45 {
				t.Errorf(".before-restore has %d cards, want the replaced warehouse's 45", n)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != DefaultFileMode {
				t.Errorf("restored file: %v, %v; want mode %v", fi.Mode(), err, DefaultFileMode)
			}
			w2, err := Open(t.Context(), path, Options{Checkpoint: mode})
			if err != nil {
				t.Fatalf("open the restored warehouse: %v", err)
			}
			defer w2.Close()
			if got := queryString(t, w2, "PRAGMA journal_mode"); got != "wal" {
				t.Errorf("journal_mode %q after reopening", got)
			}
			if n := queryInt(t, w2, "SELECT count(*) FROM cards"); n != 30 {
				t.Errorf("restored warehouse has %d cards, want 30", n)
			}
			if n := queryInt(t, w2, "SELECT count(*) FROM sync_runs"); n != 1 {
				t.Errorf("restored warehouse has %d runs, want 1", n)
			}
			cp, err := w2.Checkpoint(t.Context(), StreamCards)
			if err != nil || cp.NextPage != 3 {
				t.Errorf("restored checkpoint %+v, %v; want next page 3", cp, err)
			}
			// A second restore replaces the older .before-restore.
			w2.Close()
			if err := Restore(t.Context(), path, backup); err != nil {
				t.Fatal(err)
			}
			if n := pathInt(t, path+BeforeRestoreSuffix, "SELECT count(*) FROM cards"); n != 30 {
				t.Errorf("second .before-restore has %d cards, want 30", n)
			}
		})
	}
}

// TestRestoreUnderAnOpenWriter: the daemon keeps the warehouse open between
// runs; a restore then swaps the file, and the writer's next Verify adopts
// it. The writer's own WAL (frames not yet checkpointed) never reaches the
// restored file: it went aside with the old one.
func TestRestoreUnderAnOpenWriter(t *testing.T) {
	w, path, _ := openTest(t, Options{Checkpoint: CheckpointExternal})
	fillWarehouse(t, w, 1)
	backup, err := Backup(t.Context(), path, "", 0, backupTime)
	if err != nil {
		t.Fatal(err)
	}
	run2 := startRun(t, w)
	commit(t, w, run2, page(2, idRange(16, 30), 1, 30))
	if err := Restore(t.Context(), path, backup); err != nil {
		t.Fatalf("Restore under an open writer: %v", err)
	}
	ev, msg, err := w.Verify(t.Context())
	if err != nil || ev != FileSwitched {
		t.Fatalf("Verify after restore: %v %q %v, want FileSwitched", ev, msg, err)
	}
	if n := queryInt(t, w, "SELECT count(*) FROM cards"); n != 15 {
		t.Errorf("the writer sees %d cards after the restore, want the backup's 15", n)
	}
	if n := queryInt(t, w, "SELECT count(*) FROM sync_runs"); n != 1 {
		t.Errorf("the writer sees %d runs, want 1", n)
	}
	run3 := startRun(t, w)
	commit(t, w, run3, page(2, idRange(16, 30), 2, 30))
	if got := queryString(t, w, "PRAGMA integrity_check"); got != "ok" {
		t.Errorf("integrity after writing to the restored file: %s", got)
	}
	if n := pathInt(t, path+BeforeRestoreSuffix, "SELECT count(*) FROM cards"); n != 30 {
		t.Errorf(".before-restore has %d cards, want 30 (its WAL kept beside it)", n)
	}
}

// TestRestoreRefuses: a file that fails its checks, and a warehouse whose
// lock a sync holds, leave everything as it was.
func TestRestoreRefuses(t *testing.T) {
	w, path, _ := openTest(t, Options{})
	fillWarehouse(t, w, 20)
	good, err := Backup(t.Context(), path, "", 0, backupTime)
	if err != nil {
		t.Fatal(err)
	}
	fillWarehouse(t, w, 1)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := statID(path)
	if err != nil {
		t.Fatal(err)
	}
	unchanged := func(t *testing.T) {
		t.Helper()
		if id, err := statID(path); err != nil || id != before {
			t.Errorf("the warehouse file was replaced (%v)", err)
		}
		if _, err := os.Stat(path + BeforeRestoreSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused restore left %s: %v", BeforeRestoreSuffix, err)
		}
		matches, _ := filepath.Glob(path + ".restore-*")
		if len(matches) > 0 {
			t.Errorf("a refused restore left %v", matches)
		}
	}
	for _, tt := range bad(t, good) {
		t.Run(tt.name, func(t *testing.T) {
			err := Restore(t.Context(), path, tt.path)
			if !errors.Is(err, ErrBackupCheck) || tt.also != nil && !errors.Is(err, tt.also) {
				t.Errorf("Restore: %v, want ErrBackupCheck and %v", err, tt.also)
			}
			unchanged(t)
		})
	}
	t.Run("locked", func(t *testing.T) {
		l, err := AcquireLock(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		err = Restore(t.Context(), path, good)
		var le *LockedError
		if !errors.Is(err, ErrLocked) || !errors.As(err, &le) || le.PID != os.Getpid() {
			t.Errorf("Restore while a sync holds the lock: %v, want a LockedError naming pid %d", err, os.Getpid())
		}
		unchanged(t)
	})
	t.Run("the warehouse itself", func(t *testing.T) {
		if err := Restore(t.Context(), path, path); err == nil || !strings.Contains(err.Error(), "itself") {
			t.Errorf("Restore of the warehouse onto itself: %v", err)
		}
		unchanged(t)
	})
}

// TestRestoreMissingWarehouse: a lost warehouse is restored from a backup
// into its path; no .before-restore is kept for the empty file.
func TestRestoreMissingWarehouse(t *testing.T) {
	w, path, _ := openTest(t, Options{})
	fillWarehouse(t, w, 1)
	backup, err := Backup(t.Context(), path, t.TempDir(), 0, backupTime)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "new.db")
	// A killed restore's leftover is removed.
	if err := os.WriteFile(target+".restore-1.tmp", []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Restore(t.Context(), target, backup); err != nil {
		t.Fatal(err)
	}
	if n := pathInt(t, target, "SELECT count(*) FROM cards"); n != 15 {
		t.Errorf("restored %d cards, want 15", n)
	}
	if _, err := os.Stat(target + BeforeRestoreSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s kept for a missing warehouse: %v", BeforeRestoreSuffix, err)
	}
	if _, err := os.Stat(target + ".restore-1.tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a killed restore's temporary file is still there: %v", err)
	}
}
