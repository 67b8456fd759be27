package sqlite

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"

	"github.com/cardsync/cardsync/account"
)

var identityRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// historyRun is one run of historyWarehouse: a page of cards (changed each
// run) and an account snapshot.
func historyRun(t *testing.T, w *Warehouse, rev int) int64 {
	t.Helper()
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 15), rev, 15))
	name := "Acme"
	if err := w.SaveAccount(t.Context(), run, load.Account{Snapshot: account.Snapshot{Name: &name}}); err != nil {
		t.Fatal(err)
	}
	return run
}

// TestIdentity: a new warehouse gets a random identity once; reopening
// keeps it, a backup carries it, and another warehouse has its own.
func TestIdentity(t *testing.T) {
	ctx := t.Context()
	w, path, _ := openTest(t, load.Options{})
	id, err := w.ID(ctx)
	if err != nil || !identityRE.MatchString(id) {
		t.Fatalf("ID: %q, %v; want 32 hex digits", id, err)
	}
	fillWarehouse(t, w, 1)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2, err := Open(ctx, path, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if again, err := w2.ID(ctx); err != nil || again != id {
		t.Errorf("after reopening: %q, %v; want %q", again, err, id)
	}
	res, err := w2.Backup(ctx, t.TempDir(), 0, backupTime)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ReadIdentity(ctx, res.Path); err != nil || got != id {
		t.Errorf("the backup's identity: %q, %v; want the warehouse's %q", got, err, id)
	}
	other, _, _ := openTest(t, load.Options{})
	if oid, err := other.ID(ctx); err != nil || oid == id || !identityRE.MatchString(oid) {
		t.Errorf("another warehouse's identity: %q, %v; want its own (not %q)", oid, err, id)
	}
	if n := queryInt(t, w2, "SELECT count(*) FROM warehouse_identity"); n != 1 {
		t.Errorf("warehouse_identity has %d rows, want 1", n)
	}
	if _, err := w2.DB().ExecContext(ctx, `INSERT INTO warehouse_identity (singleton, warehouse_id, created_at) VALUES (2, ?, '2025-03-01T12:00:00Z')`, strings.Repeat("a", 32)); err == nil {
		t.Error("a second identity row was accepted")
	}
}

// TestUpgradeGetsIdentity: a warehouse of an earlier release (schema 4,
// testdata/release4.sql) has no identity; opening it for writing upgrades
// it and gives it one, stamped with the warehouse's clock, kept from then
// on.
func TestUpgradeGetsIdentity(t *testing.T) {
	ctx := t.Context()
	path := releaseWarehouse(t, "release4")
	if _, err := ReadIdentity(ctx, path); !errors.Is(err, ErrNoIdentity) || !errors.Is(err, load.ErrWarehouse) {
		t.Fatalf("ReadIdentity of a release-4 warehouse: %v, want ErrNoIdentity", err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w, err := Open(ctx, path, load.Options{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	id, err := w.ID(ctx)
	if err != nil || !identityRE.MatchString(id) {
		t.Fatalf("identity after the upgrade: %q, %v", id, err)
	}
	if got := queryString(t, w, "SELECT created_at FROM warehouse_identity"); got != "2026-01-02T03:04:05Z" {
		t.Errorf("created_at %q, want the upgrade's time", got)
	}
	w.Close()
	if got, err := ReadIdentity(ctx, path); err != nil || got != id {
		t.Errorf("identity read from the file: %q, %v; want %q", got, err, id)
	}
}

// TestRestoreKeepsHistory: after three runs, a backup of the first is
// refused (nothing changes) and the error counts what would be lost: two
// runs, two account snapshots and the card versions of runs 2 and 3, with
// the newest run of each side. -force restores it and keeps the replaced
// warehouse; a backup with all of the warehouse's history, the newer one
// kept, restores without -force.
func TestRestoreKeepsHistory(t *testing.T) {
	ctx := t.Context()
	w, path, _ := openTest(t, load.Options{})
	historyRun(t, w, 1)
	res, err := w.Backup(ctx, t.TempDir(), 0, backupTime)
	if err != nil {
		t.Fatal(err)
	}
	backup := res.Path
	historyRun(t, w, 2)
	historyRun(t, w, 3)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := statID(path)
	if err != nil {
		t.Fatal(err)
	}

	_, err = Restore(ctx, path, backup, RestoreOptions{Now: restoreTime})
	var refused *RestoreRefusedError
	if !errors.As(err, &refused) || !errors.Is(err, ErrRestoreRefused) || !errors.Is(err, load.ErrWarehouse) {
		t.Fatalf("Restore of run 1's backup after 3 runs: %v, want a RestoreRefusedError", err)
	}
	c := refused.Comparison
	if c.LostRuns != 2 || c.LostAccountSnapshots != 2 || c.LostCardVersions != 30 {
		t.Errorf("lost %d runs, %d snapshots, %d versions; want 2, 2, 30", c.LostRuns, c.LostAccountSnapshots, c.LostCardVersions)
	}
	if c.Current.LastRunID != 3 || c.File.LastRunID != 1 || c.Current.Runs != 3 || c.File.Runs != 1 ||
		c.Current.AccountSnapshots != 3 || c.File.AccountSnapshots != 1 || c.Current.ID == "" || c.Current.ID != c.File.ID {
		t.Errorf("comparison %+v", c)
	}
	for _, want := range []string{"2 runs, 2 account snapshots and 30 card versions", "3 runs, 3 account snapshots, 45 card versions, newest run 3 started ",
		"1 run, 1 account snapshot, 15 card versions, newest run 1 started ", "-force"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
	if id, err := statID(path); err != nil || id != before {
		t.Errorf("a refused restore replaced the warehouse (%v)", err)
	}
	if kept, _ := filepath.Glob(path + ".*re*"); len(kept) > 0 {
		t.Errorf("a refused restore left %v", kept)
	}

	forced, err := Restore(ctx, path, backup, RestoreOptions{Force: true, Now: restoreTime})
	if err != nil {
		t.Fatalf("forced: %v", err)
	}
	if n := pathInt(t, path, "SELECT count(*) FROM sync_runs"); n != 1 {
		t.Errorf("restored warehouse has %d runs, want 1", n)
	}
	if n := pathInt(t, forced.BeforeRestore, "SELECT count(*) FROM account_snapshots"); n != 3 {
		t.Errorf("%s has %d account snapshots, want the replaced warehouse's 3", forced.BeforeRestore, n)
	}
	// Restoring the kept file back discards nothing: no -force needed.
	back, err := Restore(ctx, path, forced.BeforeRestore, RestoreOptions{Now: restoreTime.Add(time.Minute)})
	if err != nil {
		t.Fatalf("restore of the kept 3-run warehouse over its 1-run backup: %v", err)
	}
	if n := pathInt(t, path, "SELECT count(*) FROM sync_runs"); n != 3 {
		t.Errorf("restored warehouse has %d runs, want 3", n)
	}
	kept, err := ListBeforeRestore(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range kept {
		names = append(names, filepath.Base(k.Path))
		if k.Bytes <= 0 || k.ReplacedAt.IsZero() {
			t.Errorf("kept %+v", k)
		}
	}
	if want := []string{"warehouse.db.before-restore-20250302T090100Z", "warehouse.db.before-restore-20250302T090000Z"}; !slices.Equal(names, want) {
		t.Errorf("ListBeforeRestore: %v, want %v (newest first)", names, want)
	}
	if back.BeforeRestore != kept[0].Path {
		t.Errorf("BeforeRestore %q, want %q", back.BeforeRestore, kept[0].Path)
	}
}

// TestRestoreAnotherWarehouse: a backup of another warehouse (staging over
// production) is refused without -force even when it holds more history,
// and the refusal names both identities; so is a file without an identity.
func TestRestoreAnotherWarehouse(t *testing.T) {
	ctx := t.Context()
	prod, path, _ := openTest(t, load.Options{})
	historyRun(t, prod, 1)
	prodID, _ := prod.ID(ctx)
	prod.Close()
	staging, _, _ := openTest(t, load.Options{})
	for rev := range 3 {
		historyRun(t, staging, rev+1)
	}
	stagingID, _ := staging.ID(ctx)
	res, err := staging.Backup(ctx, t.TempDir(), 0, backupTime)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Restore(ctx, path, res.Path, RestoreOptions{Now: restoreTime})
	var refused *RestoreRefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("Restore of staging's backup over production: %v, want a RestoreRefusedError", err)
	}
	if !strings.Contains(err.Error(), "another warehouse (identity "+stagingID+"; this warehouse's is "+prodID+")") {
		t.Errorf("the refusal does not name both identities:\n%v", err)
	}
	if c := refused.Comparison; c.LostRuns != 1 || c.LostAccountSnapshots != 1 || c.LostCardVersions != 15 {
		t.Errorf("lost %+v; want all of production's history", c)
	}

	// A file without an identity: who knows whose it is.
	anon := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, res.Path, anon, 0o600)
	db, err := sql.Open("sqlite", dsn(anon, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "DROP TABLE warehouse_identity"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Restore(ctx, path, anon, RestoreOptions{Now: restoreTime}); !errors.Is(err, ErrRestoreRefused) || !strings.Contains(err.Error(), "the file has no warehouse identity") {
		t.Errorf("Restore of a file without identity: %v, want a refusal", err)
	}

	if _, err := Restore(ctx, path, res.Path, RestoreOptions{Force: true, Now: restoreTime}); err != nil {
		t.Fatalf("forced: %v", err)
	}
	if got, err := ReadIdentity(ctx, path); err != nil || got != stagingID {
		t.Errorf("identity after the forced restore: %q, %v; want staging's %q", got, err, stagingID)
	}
}

// TestBackupsOfTwoWarehousesShareADir: three warehouses, two named
// warehouse.db in different directories and one prod.db, back up into one
// directory with keep 3, in turns, mostly within one second: each keeps its
// own newest 3 and never prunes another's, and a backup without an
// identity (written before identities) is never pruned; each backup says
// which files it left alone.
func TestBackupsOfTwoWarehousesShareADir(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	a, _, _ := openTest(t, load.Options{})
	b, _, _ := openTest(t, load.Options{})
	c, err := Open(ctx, filepath.Join(t.TempDir(), "prod.db"), load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, w := range []*Warehouse{a, b, c} {
		fillWarehouse(t, w, 1)
	}
	// An old backup of a: no identity.
	first, err := a.Backup(ctx, dir, 0, backupTime.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(first.Path, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "DROP TABLE warehouse_identity"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	mine := map[*Warehouse][]string{}
	for i := range 5 {
		// All in one second but the last: the -N suffixes of a and b
		// interleave, and still sort in the order each wrote them.
		at := backupTime.Add(time.Duration(i/4) * time.Minute)
		for _, w := range []*Warehouse{a, b, c} {
			res, err := w.Backup(ctx, dir, 3, at)
			if err != nil {
				t.Fatalf("backup %d of %s: %v", i, w.Path(), err)
			}
			mine[w] = append(mine[w], res.Path)
			if !slices.ContainsFunc(res.Skipped, func(s PruneSkip) bool { return s.Path == first.Path }) && w != c {
				t.Errorf("backup of %s: skipped %v, want the backup without identity named", w.Path(), res.Skipped)
			}
		}
	}
	if _, err := os.Stat(first.Path); err != nil {
		t.Errorf("the backup without identity was pruned: %v", err)
	}
	names := dirNames(t, dir)
	for w, paths := range mine {
		for i, p := range paths {
			_, err := os.Stat(p)
			if i < 2 && err == nil {
				t.Errorf("%s: %s was kept, want only the newest 3", w.Path(), filepath.Base(p))
			}
			if i >= 2 && err != nil {
				t.Errorf("%s: its backup %s was pruned (%v); directory: %v", w.Path(), filepath.Base(p), err, names)
			}
		}
	}
	if len(names) != 1+1+3*3 {
		t.Errorf("directory holds %v, want the lock, the old backup and 3 backups of each warehouse", names)
	}
	if !strings.HasPrefix(filepath.Base(mine[c][4]), "prod-20250301T") {
		t.Errorf("prod.db's backup named %s, want prod-<time>.db", mine[c][4])
	}
}
