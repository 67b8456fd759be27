package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cardsync/cardsync/load"
)

// DefaultBackupDirName is the directory beside the warehouse that Backup
// writes to when it is given none.
const DefaultBackupDirName = "backups"

// backupTimeFormat is the UTC time in a backup's name.
const backupTimeFormat = "20060102T150405Z"

// backupNameOf returns the pattern of the names Backup gives the backups
// of a warehouse whose file's stem is stem (BackupStem), and only those:
// <stem>-YYYYMMDDTHHMMSSZ.db, with -N before .db for the second and later
// backups taken within the same second. Prune never touches any other
// file.
func backupNameOf(stem string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(stem) + `-(\d{8}T\d{6}Z)(?:-([1-9]\d{0,3}))?\.db$`)
}

// BackupStem is the first part of the names of a warehouse's backups: the
// warehouse file's name without its .db extension (warehouse for
// warehouse.db, whose backups are warehouse-YYYYMMDDTHHMMSSZ.db).
func BackupStem(warehousePath string) string {
	return strings.TrimSuffix(filepath.Base(warehousePath), ".db")
}

// Temporary files of Backup (in the backup directory) and of Restore
// (beside the warehouse). A killed process leaves them; the next one
// removes them.
const (
	backupTempPattern = ".backup-*.tmp"
	backupLockName    = ".backup.lock"
)

// Every error Backup and Restore return wraps ErrWarehouse (the command
// exits 6), except ErrLocked; the sentinels below say more.

// ErrBackupCheck is wrapped when a copy fails its checks: PRAGMA
// integrity_check is not "ok", or application_id or user_version are not
// what cardsync writes. Backup leaves no file under a backup's name, and
// Restore changes nothing.
var ErrBackupCheck = errors.New("backup check failed")

// ErrBackupBusy is returned when another backup is writing to the same
// directory.
var ErrBackupBusy = errors.New("another backup is writing to this directory")

// DefaultBackupDir returns the backup directory used when none is
// configured: backups/ beside the warehouse file.
func DefaultBackupDir(warehousePath string) string {
	return filepath.Join(filepath.Dir(warehousePath), DefaultBackupDirName)
}

// Backup writes a consistent copy of the warehouse at warehousePath to dir
// (DefaultBackupDir when empty, created 0750 if missing) and returns its
// path: <stem>-YYYYMMDDTHHMMSSZ.db, the warehouse file's name without .db
// (BackupStem) and now's UTC wall-clock time (with -2, -3, ... when that
// name is taken). It keeps the newest keep backups (DefaultBackupKeep when
// keep is 0) of this warehouse and removes older ones: a file is one of
// its backups when it is named <stem>-… and carries the warehouse's
// identity (read from the file, like the new backup's). A file named like
// one whose identity is another warehouse's or cannot be read is never
// removed; the result lists it (BackupResult.Skipped). Nothing else in dir
// is ever removed, and nothing is pruned while the warehouse has no
// identity yet (written by an older cardsync and not opened for writing
// since). Backups of several warehouses may share one directory.
//
// The copy is written with VACUUM INTO a temporary file in dir, read in
// one transaction on a read-only connection of its own: a writer committing
// pages and analysts reading go on unhindered, and the copy is the database
// as of that transaction. On the copy it then checks PRAGMA integrity_check,
// application_id and user_version (a schema this binary knows), gives it the
// warehouse file's permissions (at most 0640), fsyncs it, renames it to its
// final name and fsyncs dir. A failed check wraps ErrBackupCheck. Any
// failure, or a kill, leaves no file under a backup's name; temporary files
// a killed backup left behind are removed by the next one. Only one backup
// writes to a directory at a time (ErrBackupBusy).
func Backup(ctx context.Context, warehousePath, dir string, keep int, now time.Time) (_ BackupResult, err error) {
	defer classify(&err)
	if keep < 0 {
		return BackupResult{}, fmt.Errorf("backup: keep %d: want 1 or more (0: %d)", keep, load.DefaultBackupKeep)
	}
	if keep == 0 {
		keep = load.DefaultBackupKeep
	}
	abs, err := filepath.Abs(warehousePath)
	if err != nil {
		return BackupResult{}, fmt.Errorf("backup %s: %w", warehousePath, err)
	}
	if dir == "" {
		dir = DefaultBackupDir(abs)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return BackupResult{}, fmt.Errorf("backup: %w", err)
	}
	mode := fi.Mode().Perm()&0o640 | 0o600
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return BackupResult{}, fmt.Errorf("backup: create the backup directory: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return BackupResult{}, err
	}
	defer unlock()
	// Holding the directory's lock, no other backup runs here: every
	// temporary file is a killed backup's.
	removeTemps(dir, backupTempPattern)

	tmp, err := newTempPath(dir, backupTempPattern)
	if err != nil {
		return BackupResult{}, fmt.Errorf("backup: %w", err)
	}
	done := false
	defer func() {
		if !done {
			removeWithJournal(tmp)
		}
	}()
	if err := vacuumInto(ctx, abs, tmp); err != nil {
		return BackupResult{}, fmt.Errorf("backup %s: %w", abs, err)
	}
	if err := checkCopy(ctx, tmp); err != nil {
		return BackupResult{}, fmt.Errorf("backup %s: the copy: %w", abs, err)
	}
	if err := finishFile(tmp, mode); err != nil {
		return BackupResult{}, fmt.Errorf("backup: %w", err)
	}
	final, err := freeBackupName(dir, BackupStem(abs), now)
	if err != nil {
		return BackupResult{}, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return BackupResult{}, fmt.Errorf("backup: %w", err)
	}
	done = true
	res := BackupResult{Path: final}
	if err := syncDir(dir); err != nil {
		return res, fmt.Errorf("backup: sync %s: %w", dir, err)
	}
	res.Skipped, err = pruneBackups(ctx, dir, keep, final, abs)
	if err != nil {
		return res, fmt.Errorf("backup %s written; %w", final, err)
	}
	return res, nil
}

// Backup writes a backup of this warehouse (see the package function
// Backup); it reads through a connection of its own, never the writer's.
func (w *Warehouse) Backup(ctx context.Context, dir string, keep int, now time.Time) (BackupResult, error) {
	return Backup(ctx, w.path, dir, keep, now)
}

// vacuumInto writes a consistent copy of the warehouse at src to dst with
// VACUUM INTO (one read transaction) on a read-only connection of its own.
func vacuumInto(ctx context.Context, src, dst string) error {
	// Never the immutable fallback of OpenReadOnly: a run may start
	// during the copy, and only a WAL-aware reader sees one transaction.
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	w, err := openReadOnly(ctx, abs, false)
	if err != nil {
		return err
	}
	defer w.Close()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// query_only refuses VACUUM INTO's writes to the new file; mode=ro
	// still keeps the source read-only.
	if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 0"); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("vacuum into %s: %w", dst, err)
	}
	return nil
}

// checkCopy checks a database file cardsync wrote or is about to use:
// application_id is ApplicationID, user_version is a migration this binary
// knows (1 to SchemaVersion) and PRAGMA integrity_check says "ok". Failures
// wrap ErrBackupCheck (and ErrForeignDatabase, ErrNotMigrated or a
// *SchemaVersionError for the ids).
func checkCopy(ctx context.Context, path string) error {
	db, err := openPlain(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBackupCheck, err)
	}
	defer db.Close()
	var appID, version int
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %s: %w", ErrBackupCheck, path, err)
	}
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBackupCheck, path, err)
	}
	switch {
	case appID != ApplicationID:
		return fmt.Errorf("%w: %s: %w: application_id is %#x, want %#x", ErrBackupCheck, path, load.ErrForeignDatabase, appID, ApplicationID)
	case version == 0:
		return fmt.Errorf("%w: %s: %w", ErrBackupCheck, path, load.ErrNotMigrated)
	case version > latestVersion():
		return fmt.Errorf("%w: %s: %w", ErrBackupCheck, path, &load.SchemaVersionError{Database: version, Binary: latestVersion()})
	}
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check(20)")
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %s: integrity_check: %w", ErrBackupCheck, path, err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return fmt.Errorf("%w: %s: integrity_check: %w", ErrBackupCheck, path, err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %s: integrity_check: %w", ErrBackupCheck, path, err)
	}
	if len(msgs) != 1 || msgs[0] != "ok" {
		return fmt.Errorf("%w: %s: integrity_check: %s", ErrBackupCheck, path, strings.Join(msgs, "; "))
	}
	return nil
}

// finishFile gives a finished copy its mode and fsyncs it.
func finishFile(path string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// freeBackupName returns the path of a backup of the warehouse named stem
// taken at now that no file uses yet. Within one second the numbers only
// grow (-2 after the highest one there, never a gap a pruned file left), so
// the names sort in the order the backups were written, even when several
// warehouses with the same stem share dir.
func freeBackupName(dir, stem string, now time.Time) (string, error) {
	stamp := now.UTC().Format(backupTimeFormat)
	files, err := listBackups(dir, stem)
	if err != nil {
		return "", err
	}
	next := 1
	for _, f := range files {
		if f.stamp == stamp && f.n >= next {
			next = f.n + 1
		}
	}
	for n := next; n < 10000; n++ {
		name := stem + "-" + stamp + ".db"
		if n > 1 {
			name = stem + "-" + stamp + "-" + strconv.Itoa(n) + ".db"
		}
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p, nil
		} else if err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("no free backup name for %s in %s", stamp, dir)
}

// lockDir takes an flock on dir's .backup.lock without waiting, so two
// backups never write to one directory at once; the returned func drops it.
func lockDir(dir string) (func(), error) {
	p := filepath.Join(dir, backupLockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("backup: lock %s: %w", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("backup: %w (%s)", ErrBackupBusy, dir)
		}
		return nil, fmt.Errorf("backup: lock %s: %w", p, err)
	}
	return func() { f.Close() }, nil
}

// newTempPath reserves a new empty file named after pattern in dir (VACUUM
// INTO accepts an empty file) and returns its path.
func newTempPath(dir, pattern string) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// removeTemps removes the files in dir matching pattern, and their
// journals (pattern followed by anything, so a journal whose file is gone
// goes too): what a killed backup or restore left behind.
func removeTemps(dir, pattern string) {
	// Matched on the base names only: the directory's own name may hold
	// glob characters.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if ok, _ := filepath.Match(pattern+"*", e.Name()); ok && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func removeWithJournal(path string) {
	_ = os.Remove(path)
	_ = os.Remove(path + "-journal")
}

// The result of a backup is package load's (the worker's scheduled backups
// read it without knowing the dialect); these names keep this package's
// spelling.
type (
	// BackupResult is load.BackupResult.
	BackupResult = load.BackupResult
	// PruneSkip is load.PruneSkip.
	PruneSkip = load.PruneSkip
)

// ErrBackupPrune is load.ErrBackupPrune.
var ErrBackupPrune = load.ErrBackupPrune
