package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// restoreTime is the wall-clock time restores in these tests run at.
var restoreTime = time.Date(2025, 3, 2, 10, 0, 0, 0, time.FixedZone("CET", 3600))

// TestRestore: a backup taken after one run, restored (forced) after a
// second run, brings back the first state; the second is kept in
// .before-restore-<time>, WAL frames included; the restored file is a live
// WAL warehouse (liveWAL) and the next writer opens it with its
// checkpoint. A second restore keeps its own file beside the first.
func TestRestore(t *testing.T) {
	for _, mode := range []string{load.WALCheckpointAuto, load.WALCheckpointExternal} {
		t.Run(mode, func(t *testing.T) {
			w, path, _ := openTest(t, load.Options{WALCheckpoint: mode})
			fillWarehouse(t, w, 2)
			res, err := Backup(t.Context(), path, "", 0, backupTime)
			backup := res.Path
			if err != nil {
				t.Fatal(err)
			}
			run2 := startRun(t, w)
			commit(t, w, run2, page(3, idRange(31, 45), 1, 45))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			first, err := Restore(t.Context(), path, backup, RestoreOptions{Force: true, Now: restoreTime})
			if err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if want := path + ".before-restore-20250302T090000Z"; first.BeforeRestore != want {
				t.Errorf("kept the replaced warehouse as %q, want %q", first.BeforeRestore, want)
			}
			liveWAL(t, path)
			if n := pathInt(t, first.BeforeRestore, "SELECT count(*) FROM cards"); n != 45 {
				t.Errorf(".before-restore has %d cards, want the replaced warehouse's 45", n)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != load.DefaultFileMode {
				t.Errorf("restored file: %v, %v; want mode %v", fi.Mode(), err, load.DefaultFileMode)
			}
			w2, err := Open(t.Context(), path, load.Options{WALCheckpoint: mode})
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
			cp, err := w2.Checkpoint(t.Context(), load.StreamCards)
			if err != nil || cp.NextPage != 3 {
				t.Errorf("restored checkpoint %+v, %v; want next page 3", cp, err)
			}
			// A second restore in the same second keeps the first one's
			// file and adds its own.
			w2.Close()
			second, err := Restore(t.Context(), path, backup, RestoreOptions{Now: restoreTime})
			if err != nil {
				t.Fatal(err)
			}
			liveWAL(t, path)
			if want := path + ".before-restore-20250302T090000Z-2"; second.BeforeRestore != want {
				t.Errorf("second restore kept the replaced warehouse as %q, want %q", second.BeforeRestore, want)
			}
			if n := pathInt(t, first.BeforeRestore, "SELECT count(*) FROM cards"); n != 45 {
				t.Errorf("the first .before-restore has %d cards after a second restore, want 45", n)
			}
			if n := pathInt(t, second.BeforeRestore, "SELECT count(*) FROM cards"); n != 30 {
				t.Errorf("second .before-restore has %d cards, want 30", n)
			}
		})
	}
}

// TestRestoreUnderAnOpenWriter: the daemon keeps the warehouse open between
// runs; a restore then swaps the file, and the writer's next Verify adopts
// it. The writer's own WAL (frames not yet checkpointed) never reaches the
// restored file: it went aside with the old one. With checkpoint
// "external", the empty -wal the restore left at the path is no reason for
// a TRUNCATE WAL checkpoint: the old file's WAL keeps its frames.
func TestRestoreUnderAnOpenWriter(t *testing.T) {
	w, path, _ := openTest(t, load.Options{WALCheckpoint: load.WALCheckpointExternal})
	fillWarehouse(t, w, 1)
	res, err := Backup(t.Context(), path, "", 0, backupTime)
	backup := res.Path
	if err != nil {
		t.Fatal(err)
	}
	run2 := startRun(t, w)
	commit(t, w, run2, page(2, idRange(16, 30), 1, 30))
	restored, err := Restore(t.Context(), path, backup, RestoreOptions{Force: true})
	if err != nil {
		t.Fatalf("Restore under an open writer: %v", err)
	}
	liveWAL(t, path)
	ev, msg, err := w.Verify(t.Context())
	if err != nil || ev != load.FileSwitched {
		t.Fatalf("Verify after restore: %v %q %v, want FileSwitched", ev, msg, err)
	}
	if fi, err := os.Stat(restored.BeforeRestore + "-wal"); err != nil || fi.Size() == 0 {
		t.Errorf("the replaced file's WAL after Verify: %v (size %d), want its frames (no TRUNCATE with checkpoint external)", err, fileSize(restored.BeforeRestore+"-wal"))
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
	if n := pathInt(t, restored.BeforeRestore, "SELECT count(*) FROM cards"); n != 30 {
		t.Errorf(".before-restore has %d cards, want 30 (its WAL kept beside it)", n)
	}
}

// liveWAL checks that the restored file at path is a warehouse as a live
// one is: in WAL mode (PRAGMA journal_mode read on a read-only connection,
// as an analyst's), with an empty -wal (no stale frame) and a -shm beside
// it, both with the file's mode, so a reader that cannot create them can
// open it.
func liveWAL(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		si, err := os.Stat(path + suffix)
		if err != nil {
			t.Errorf("no %s beside the restored file: %v", suffix, err)
			continue
		}
		if si.Mode().Perm() != fi.Mode().Perm() {
			t.Errorf("%s mode %v, the file's %v", suffix, si.Mode().Perm(), fi.Mode().Perm())
		}
		if suffix == "-wal" && si.Size() != 0 {
			t.Errorf("-wal of the restored file holds %d bytes, want 0", si.Size())
		}
	}
	db, err := openPlain(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode of the restored file on a read-only connection: %q, %v; want wal", mode, err)
	}
}

// TestRestoreRefuses: a file that fails its checks, and a warehouse whose
// lock a sync holds, leave everything as it was.
func TestRestoreRefuses(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	fillWarehouse(t, w, 20)
	goodRes, err := Backup(t.Context(), path, "", 0, backupTime)
	good := goodRes.Path
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
		if kept, _ := filepath.Glob(path + BeforeRestoreSuffix + "*"); len(kept) > 0 {
			t.Errorf("a refused restore left %v", kept)
		}
		matches, _ := filepath.Glob(path + ".restore-*")
		if len(matches) > 0 {
			t.Errorf("a refused restore left %v", matches)
		}
	}
	for _, tt := range bad(t, good) {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Restore(t.Context(), path, tt.path, RestoreOptions{Force: true})
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
		_, err = Restore(t.Context(), path, good, RestoreOptions{Force: true})
		var le *load.LockedError
		if !errors.Is(err, load.ErrLocked) || !errors.As(err, &le) || le.PID != os.Getpid() {
			t.Errorf("Restore while a sync holds the lock: %v, want a LockedError naming pid %d", err, os.Getpid())
		}
		unchanged(t)
	})
	t.Run("the warehouse itself", func(t *testing.T) {
		if _, err := Restore(t.Context(), path, path, RestoreOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "itself") {
			t.Errorf("Restore of the warehouse onto itself: %v", err)
		}
		unchanged(t)
	})
}

// TestRestoreMissingWarehouse: a lost warehouse is restored from a backup
// into its path; no .before-restore is kept for the empty file.
func TestRestoreMissingWarehouse(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	fillWarehouse(t, w, 1)
	res, err := Backup(t.Context(), path, t.TempDir(), 0, backupTime)
	backup := res.Path
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "new.db")
	// A killed restore's leftover is removed.
	if err := os.WriteFile(target+".restore-1.tmp", []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	restored, err := Restore(t.Context(), target, backup, RestoreOptions{})
	if err != nil {
		t.Fatalf("Restore into a missing warehouse's path: %v", err)
	}
	if restored.BeforeRestore != "" {
		t.Errorf("kept %q for a missing warehouse", restored.BeforeRestore)
	}
	liveWAL(t, target)
	if n := pathInt(t, target, "SELECT count(*) FROM cards"); n != 15 {
		t.Errorf("restored %d cards, want 15", n)
	}
	if kept, _ := filepath.Glob(target + BeforeRestoreSuffix + "*"); len(kept) > 0 {
		t.Errorf("%v kept for a missing warehouse", kept)
	}
	if _, err := os.Stat(target + ".restore-1.tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a killed restore's temporary file is still there: %v", err)
	}
}

// TestRestoreWaitsForARun: a restore with a wait, meeting a run in
// progress (the account's lock held, as serve's run holds it), changes
// nothing while the run goes on; when the run ends it compares the file
// with the warehouse as the run left it. Here the run added a run of
// history the backup lacks, so without Force the restore is refused, and
// with Force it restores, keeping the run's work in .before-restore.
func TestRestoreWaitsForARun(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run(map[bool]string{false: "refused after the wait", true: "forced"}[force], func(t *testing.T) {
			w, path, _ := openTest(t, load.Options{})
			fillWarehouse(t, w, 1)
			res, err := Backup(t.Context(), path, "", 0, backupTime)
			if err != nil {
				t.Fatal(err)
			}
			backup := res.Path
			run, err := OpenAccountLock(path, 0, load.DefaultAccount)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			if err := run.Acquire(); err != nil {
				t.Fatal(err)
			}
			before, err := statID(path)
			if err != nil {
				t.Fatal(err)
			}
			waiting := make(chan *load.LockedError, 1)
			type result struct {
				res RestoreResult
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := Restore(t.Context(), path, backup, RestoreOptions{Force: force, Now: restoreTime, Wait: time.Minute,
					Waiting: func(held *load.LockedError, _ time.Duration) {
						select {
						case waiting <- held:
						default:
						}
					}})
				done <- result{r, err}
			}()
			var held *load.LockedError
			select {
			case held = <-waiting:
			case r := <-done:
				t.Fatalf("Restore did not wait for the run: %+v, %v", r.res, r.err)
			}
			if held.PID != os.Getpid() {
				t.Errorf("waiting for pid %d, want this process's %d", held.PID, os.Getpid())
			}
			// The run goes on while the restore waits: it commits a second
			// run, then lets go of the lock.
			run2 := startRun(t, w)
			commit(t, w, run2, page(2, idRange(16, 30), 1, 30))
			if id, err := statID(path); err != nil || id != before {
				t.Errorf("the warehouse was replaced during the run (%v)", err)
			}
			if kept, _ := filepath.Glob(path + BeforeRestoreSuffix + "*"); len(kept) > 0 {
				t.Errorf("kept %v during the run", kept)
			}
			if err := run.Release(); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if !force {
				var refused *RestoreRefusedError
				if !errors.As(r.err, &refused) || refused.Comparison.LostRuns != 1 {
					t.Fatalf("Restore after the run: %v, want a refusal to discard the run it made", r.err)
				}
				if n := pathInt(t, path, "SELECT count(*) FROM sync_runs"); n != 2 {
					t.Errorf("the warehouse has %d runs after a refused restore, want 2", n)
				}
				return
			}
			if r.err != nil {
				t.Fatalf("Restore after the run: %v", r.err)
			}
			if n := pathInt(t, path, "SELECT count(*) FROM sync_runs"); n != 1 {
				t.Errorf("restored warehouse has %d runs, want the backup's 1", n)
			}
			if n := pathInt(t, r.res.BeforeRestore, "SELECT count(*) FROM sync_runs"); n != 2 {
				t.Errorf("%s has %d runs, want the 2 the run left", r.res.BeforeRestore, n)
			}
		})
	}
}
