package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// backupTime is the wall-clock time backups in these tests are taken at.
var backupTime = time.Date(2025, 3, 1, 12, 0, 5, 0, time.FixedZone("CET", 3600))

// fillWarehouse commits pages pages of 15 cards in one run.
func fillWarehouse(t *testing.T, w *Warehouse, pages int) int64 {
	t.Helper()
	run := startRun(t, w)
	for p := 1; p <= pages; p++ {
		commit(t, w, run, page(p, idRange(15*(p-1)+1, 15*p), 1, 15*pages))
	}
	return run
}

// pathInt runs a query on the database file at path, read-only.
func pathInt(t *testing.T, path, q string) int64 {
	t.Helper()
	db, err := openPlain(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRowContext(t.Context(), q).Scan(&n); err != nil {
		t.Fatalf("%s on %s: %v", q, path, err)
	}
	return n
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestBackup(t *testing.T) {
	for _, mode := range []os.FileMode{0o640, 0o600} {
		t.Run(mode.String(), func(t *testing.T) {
			w, path, _ := openTest(t, load.Options{FileMode: mode})
			fillWarehouse(t, w, 3)
			res, err := Backup(t.Context(), path, "", 0, backupTime)
			got := res.Path
			if err != nil {
				t.Fatalf("Backup: %v", err)
			}
			want := filepath.Join(filepath.Dir(path), "backups", "warehouse-20250301T110005Z.db")
			if got != want {
				t.Errorf("Backup wrote %s, want %s (UTC time of the backup, beside the warehouse)", got, want)
			}
			fi, err := os.Stat(got)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != mode {
				t.Errorf("backup mode %v, want the warehouse's %v", fi.Mode().Perm(), mode)
			}
			if err := checkCopy(t.Context(), got); err != nil {
				t.Errorf("the backup fails its own check: %v", err)
			}
			if n := pathInt(t, got, "SELECT count(*) FROM cards"); n != 45 {
				t.Errorf("backup has %d cards, want 45", n)
			}
			if names := dirNames(t, filepath.Dir(got)); !slices.Equal(names, []string{".backup.lock", "warehouse-20250301T110005Z.db"}) {
				t.Errorf("backup directory holds %v, want the lock and the backup only", names)
			}
		})
	}
}

// TestBackupWhileWritingAndReading: a write transaction in progress on the
// writer and an analyst's open read transaction neither block a backup
// nor leak into it: the copy is the last committed state.
func TestBackupWhileWritingAndReading(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	fillWarehouse(t, w, 2)
	ro, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rtx, err := ro.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rtx.Rollback()
	var seen int
	if err := rtx.QueryRow("SELECT count(*) FROM cards").Scan(&seen); err != nil {
		t.Fatal(err)
	}
	wtx, err := w.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wtx.Rollback()
	if _, err := wtx.Exec(`INSERT INTO sync_runs (trigger, started_at, heartbeat_at, status, version) VALUES ('backfill', '2025-03-01T12:00:00Z', '2025-03-01T12:00:00Z', 'running', 'uncommitted')`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var got string
	go func() {
		var err error
		var res BackupResult
		res, err = Backup(t.Context(), path, t.TempDir(), 0, backupTime)
		got = res.Path
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Backup during a write transaction: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Backup blocked behind the writer or the reader")
	}
	if n := pathInt(t, got, "SELECT count(*) FROM sync_runs WHERE version = 'uncommitted'"); n != 0 {
		t.Error("the backup holds a row of an uncommitted transaction")
	}
	if n := pathInt(t, got, "SELECT count(*) FROM cards"); n != 30 {
		t.Errorf("backup has %d cards, want 30", n)
	}
	if err := wtx.Commit(); err != nil {
		t.Fatalf("the writer could not commit after the backup: %v", err)
	}
}

func TestBackupNamesAndPrune(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	fillWarehouse(t, w, 1)
	dir := t.TempDir()
	others := []string{"notes.txt", "warehouse-2025.db", "warehouse-20250101T000000Z.db.bak", "warehouse-20250101T000000Z-0.db", "xwarehouse-20250101T000000Z.db"}
	for _, name := range others {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var written []string
	for i, at := range []time.Time{
		backupTime, backupTime, backupTime.Add(time.Minute), backupTime.Add(time.Hour), backupTime.Add(time.Hour),
	} {
		res, err := Backup(t.Context(), path, dir, 3, at)
		if err != nil {
			t.Fatalf("backup %d: %v", i, err)
		}
		written = append(written, filepath.Base(res.Path))
	}
	wantWritten := []string{"warehouse-20250301T110005Z.db", "warehouse-20250301T110005Z-2.db", "warehouse-20250301T110105Z.db",
		"warehouse-20250301T120005Z.db", "warehouse-20250301T120005Z-2.db"}
	if !slices.Equal(written, wantWritten) {
		t.Errorf("names %v, want %v", written, wantWritten)
	}
	left, err := ListBackups(dir, path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range left {
		left[i] = filepath.Base(left[i])
	}
	if want := []string{"warehouse-20250301T120005Z-2.db", "warehouse-20250301T120005Z.db", "warehouse-20250301T110105Z.db"}; !slices.Equal(left, want) {
		t.Errorf("after pruning to 3: %v, want %v", left, want)
	}
	for _, name := range others {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("prune touched %s, which is not a backup: %v", name, err)
		}
	}
	// A clock set back: the new backup sorts oldest but is never the one
	// pruned.
	p, err := Backup(t.Context(), path, dir, 3, backupTime.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Path); err != nil {
		t.Errorf("the backup just written was pruned: %v", err)
	}
	if _, err := Backup(t.Context(), path, dir, -1, backupTime); err == nil {
		t.Error("keep -1 accepted")
	}
}

// TestBackupCleansUpAfterAKill: temporary files a killed backup left are
// removed by the next one; a backup already running in the directory
// makes another one give way.
func TestBackupCleansUpAfterAKill(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	fillWarehouse(t, w, 1)
	dir := t.TempDir()
	for _, name := range []string{".backup-123.tmp", ".backup-123.tmp-journal", ".backup-9.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("half a copy"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Backup(t.Context(), path, dir, 0, backupTime); err != nil {
		t.Fatal(err)
	}
	for _, name := range dirNames(t, dir) {
		if strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, "-journal") {
			t.Errorf("%s left behind", name)
		}
	}
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := Backup(t.Context(), path, dir, 0, backupTime); !errors.Is(err, ErrBackupBusy) {
		t.Errorf("Backup while another backup holds the directory: %v, want ErrBackupBusy", err)
	}
}

func TestBackupRefusesNonWarehouses(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "other.db")
	db := rawDB(t, foreign)
	if _, err := db.Exec("PRAGMA application_id = 7; CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Backup(t.Context(), foreign, "", 0, backupTime); !errors.Is(err, load.ErrForeignDatabase) {
		t.Errorf("backup of a foreign database: %v, want ErrForeignDatabase", err)
	}
	if _, err := Backup(t.Context(), filepath.Join(dir, "missing.db"), "", 0, backupTime); err == nil {
		t.Error("backup of a missing file succeeded")
	}
	if names, _ := ListBackups(filepath.Join(dir, "backups"), filepath.Join(dir, "missing.db")); len(names) != 0 {
		t.Errorf("refused backups left %v", names)
	}
}

// TestBackupCancelled: a cancelled backup leaves no file behind.
func TestBackupCancelled(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	fillWarehouse(t, w, 2)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Backup(ctx, path, dir, 0, backupTime); err == nil {
		t.Fatal("a cancelled backup succeeded")
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{".backup.lock"}) {
		t.Errorf("a cancelled backup left %v", names)
	}
}

// TestCheckCopyRefuses: what a backup or a file to restore is refused for.
func TestCheckCopyRefuses(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	fillWarehouse(t, w, 20)
	goodRes, err := Backup(t.Context(), path, t.TempDir(), 0, backupTime)
	good := goodRes.Path
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range bad(t, good) {
		t.Run(tt.name, func(t *testing.T) {
			err := checkCopy(t.Context(), tt.path)
			if !errors.Is(err, ErrBackupCheck) || tt.also != nil && !errors.Is(err, tt.also) {
				t.Errorf("checkCopy: %v, want ErrBackupCheck and %v", err, tt.also)
			}
		})
	}
}

type badFile struct {
	name string
	path string
	also error
}

// bad makes files a restore must refuse, from a good backup.
func bad(t *testing.T, good string) []badFile {
	t.Helper()
	dir := t.TempDir()
	cp := func(name string, edit func(b []byte) []byte, sqlText string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, edit(readFile(t, good)), 0o600); err != nil {
			t.Fatal(err)
		}
		if sqlText != "" {
			db := rawDB(t, p)
			if _, err := db.Exec(sqlText); err != nil {
				t.Fatal(err)
			}
			db.Close()
		}
		return p
	}
	same := func(b []byte) []byte { return b }
	empty := filepath.Join(dir, "empty.db")
	db := rawDB(t, empty)
	if _, err := db.Exec("CREATE TABLE t (x); DROP TABLE t"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	return []badFile{
		{name: "corrupt pages", path: cp("corrupt.db", func(b []byte) []byte {
			// Overwrite the middle pages (b-tree pages of the card
			// tables) with garbage; the header stays valid.
			for i := len(b) / 3; i < 2*len(b)/3; i++ {
				b[i] = byte(i * 7)
			}
			return b
		}, "")},
		{name: "truncated", path: cp("truncated.db", func(b []byte) []byte { return b[:len(b)/2] }, "")},
		{name: "not sqlite", path: cp("text.db", func([]byte) []byte { return []byte(strings.Repeat("not a database\n", 500)) }, "")},
		{name: "newer schema", path: cp("newer.db", same, "PRAGMA user_version = 999"), also: load.ErrSchemaTooNew},
		{name: "foreign application id", path: cp("foreign.db", same, "PRAGMA application_id = 1"), also: load.ErrForeignDatabase},
		{name: "not migrated", path: empty, also: load.ErrForeignDatabase},
	}
}

// TestPruneSparesTheWarehouse: backups written beside a warehouse that is
// itself named like a backup (of warehouse.db) never prune the warehouse,
// neither its own backups nor those of a warehouse.db elsewhere.
func TestPruneSparesTheWarehouse(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "warehouse-20000101T000000Z.db")
	w, err := Open(t.Context(), path, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fillWarehouse(t, w, 1)
	other, _, _ := openTest(t, load.Options{})
	fillWarehouse(t, other, 1)
	for i := range 3 {
		at := backupTime.Add(time.Duration(i) * time.Second)
		if _, err := Backup(t.Context(), path, dir, 1, at); err != nil {
			t.Fatal(err)
		}
		res, err := Backup(t.Context(), other.Path(), dir, 1, at)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.Skipped, func(s PruneSkip) bool { return s.Path == path }) {
			t.Errorf("pruning the backups of %s: skipped %v, want %s named", other.Path(), res.Skipped, path)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the warehouse was pruned: %v", err)
	}
	if files, _ := ListBackups(dir, path); len(files) != 1 {
		t.Errorf("%v: want the newest backup of %s", files, path)
	}
}

// TestNewestOwnBackup: in a directory two warehouses of one file name
// share, the newest backup of a warehouse is the newest file carrying its
// identity, not the other warehouse's newer backup nor a stray file named
// like a backup; a warehouse with no backup of its own has none.
func TestNewestOwnBackup(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	fillWarehouse(t, w, 1)
	other, otherPath, _ := openTest(t, load.Options{})
	fillWarehouse(t, other, 1)
	dir := t.TempDir()
	if got, err := NewestOwnBackup(t.Context(), dir, path); err != nil || got != "" {
		t.Fatalf("empty directory: %q, %v; want none", got, err)
	}
	own, err := Backup(t.Context(), path, dir, 7, backupTime)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := Backup(t.Context(), otherPath, dir, 7, backupTime.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(dir, "warehouse-20250301T130005Z.db")
	if err := os.WriteFile(stray, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := NewestOwnBackup(t.Context(), dir, path); err != nil || got != own.Path {
		t.Errorf("NewestOwnBackup = %q, %v; want its own %s, not %s or the stray file", got, err, own.Path, theirs.Path)
	}
	if got, err := NewestOwnBackup(t.Context(), dir, otherPath); err != nil || got != theirs.Path {
		t.Errorf("the other warehouse's newest = %q, %v; want %s", got, err, theirs.Path)
	}
	if got, err := NewestOwnBackup(t.Context(), dir, filepath.Join(t.TempDir(), "warehouse.db")); err != nil || got != "" {
		t.Errorf("a warehouse that does not exist: %q, %v; want none", got, err)
	}
}
