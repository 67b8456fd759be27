package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cardsync/cardsync/load"
)

// BeforeRestoreSuffix, then -YYYYMMDDTHHMMSSZ (the UTC time of the
// restore), is appended to the warehouse path to name the file Restore
// keeps the replaced warehouse in (its WAL, if it had one, beside it with
// -wal appended, so opening it shows exactly what was replaced). A second
// restore within the same second adds -2, -3, ...: no kept warehouse is
// ever replaced. cardsync before warehouse identities kept one file,
// <warehouse>.before-restore, replaced by each restore.
const BeforeRestoreSuffix = ".before-restore"

// restoreTempSuffix names Restore's temporary copy beside the warehouse.
const restoreTempSuffix = ".restore-*.tmp"

// Restore replaces the warehouse at warehousePath with the backup file.
//
// It checks the file first (PRAGMA integrity_check, application_id,
// user_version not newer than this binary; ErrBackupCheck), then takes the
// writer lock and holds it for the swap: while a sync runs, it fails at
// once with a *LockedError (errors.Is ErrLocked), or, with opts.Wait,
// waits up to that long for the sync to end (WaitLock: a *LockWaitError
// when it does not, an error wrapping ctx.Err() when ctx ends first). It copies the backup with VACUUM
// INTO a temporary file beside the warehouse (so a backup that is itself in
// WAL mode comes whole) and checks the copy.
//
// It then compares the copy with the current warehouse and, unless
// opts.Force, refuses with a *RestoreRefusedError (errors.Is
// ErrRestoreRefused) and changes nothing when the current warehouse holds
// runs, account snapshots or card versions the copy lacks, when the two
// are not shown to be the same warehouse (their identities differ, or one
// has none), or when the current warehouse's history cannot be read. A
// missing or empty warehouse is replaced without a question.
//
// It fsyncs the copy, gives it the current file's mode and owner, and locks
// it, so a writer starting just after the swap waits for the swap to end.
// The current file is kept as <warehouse>.before-restore-YYYYMMDDTHHMMSSZ
// (opts.Now, with -2, -3, ... when that name is taken: an earlier one is
// never replaced; a hard link, or a copy where links fail; its -wal goes
// along with -wal appended). The current -wal and -shm are then removed,
// so no stale frame can ever be read as the restored file's, and the copy
// is renamed over the warehouse and the directory fsynced.
//
// The restored file is in WAL mode, as a live warehouse is: the copy is
// switched to WAL before the swap, and after it the file is opened once
// with a persistent WAL, so an empty -wal and a -shm sit beside it and
// read-only analysts (who cannot create them) can open it at once. Should
// that last step fail, the restore has still happened: the error says so
// (wrapping ErrWALFiles), and the next writer creates them. The next writer
// also migrates the file if it is older than the binary. A daemon that had
// the old file open adopts the new one at its next run (Warehouse.Verify)
// and resumes from the restored checkpoint.
func Restore(ctx context.Context, warehousePath, file string, opts RestoreOptions) (_ RestoreResult, err error) {
	defer classify(&err)
	var res RestoreResult
	abs, err := filepath.Abs(warehousePath)
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	src, err := restoreSource(ctx, abs, file)
	if err != nil {
		return res, err
	}
	mode, uid, gid := fileOwner(abs)
	// OpenLock creates an empty file when the warehouse is missing (a
	// restore after losing it); it is then replaced like any other.
	lock, err := WaitLock(ctx, abs, opts.Wait, opts.Waiting)
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	defer lock.Close()
	dir := filepath.Dir(abs)
	// Holding the writer lock, no other restore runs: these are a killed
	// restore's.
	removeTemps(dir, filepath.Base(abs)+restoreTempSuffix)

	tmp, err := newTempPath(dir, filepath.Base(abs)+restoreTempSuffix)
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	swapped := false
	defer func() {
		if !swapped {
			removeWithJournal(tmp)
		}
	}()
	if err := copyDatabase(ctx, src, tmp); err != nil {
		return res, fmt.Errorf("restore: copy %s: %w", src, err)
	}
	if err := checkCopy(ctx, tmp); err != nil {
		return res, fmt.Errorf("restore: the copy: %w", err)
	}
	c, reasons := compareForRestore(ctx, abs, tmp)
	if ctx.Err() != nil {
		return res, fmt.Errorf("restore: %w", ctx.Err())
	}
	res.Comparison = c
	if len(reasons) > 0 && !opts.Force {
		return res, &RestoreRefusedError{Warehouse: abs, File: src, Comparison: c, Reasons: reasons}
	}
	if err := readyCopy(ctx, tmp, mode, uid, gid); err != nil {
		return res, err
	}
	// Lock the new inode before it takes the name: a writer that opens the
	// path after the rename finds the lock held until the swap is done.
	newLock, err := os.Open(tmp)
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	defer newLock.Close()
	if err := syscall.Flock(int(newLock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return res, fmt.Errorf("restore: lock the copy: %w", err)
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	res.BeforeRestore, err = keepBeforeRestore(abs, now)
	if err != nil {
		return res, fmt.Errorf("restore: keep the current warehouse: %w", err)
	}
	// A -wal left at the path would be applied to the restored file by the
	// next connection: it went aside with the old file, and the -shm that
	// indexes it goes too. Writers are locked out; readers that have the
	// old file open keep their own descriptors of both.
	if err := removeWAL(abs); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	if err := os.Rename(tmp, abs); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	swapped = true
	if err := syncDir(dir); err != nil {
		return res, fmt.Errorf("restore: sync %s: %w", dir, err)
	}
	// Still holding both locks: no writer has opened the new file yet.
	if err := keepWALFiles(ctx, abs); err != nil {
		kept := ""
		if res.BeforeRestore != "" {
			kept = " (the replaced warehouse is kept as " + res.BeforeRestore + ")"
		}
		return res, fmt.Errorf("restore: %s is restored%s, but %w: %w", abs, kept, ErrWALFiles, err)
	}
	return res, nil
}

// readyCopy makes the checked copy at tmp ready to take the warehouse's
// name: in WAL mode, with the warehouse's owner (best effort) and mode,
// fsynced.
func readyCopy(ctx context.Context, tmp string, mode os.FileMode, uid, gid int) error {
	if err := walMode(ctx, tmp); err != nil {
		return fmt.Errorf("restore: the copy: %w", err)
	}
	if uid >= 0 {
		// Best effort: root restoring for the service user gives the file
		// back to it; anyone else can only keep their own.
		_ = os.Chown(tmp, uid, gid)
	}
	if err := finishFile(tmp, mode); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

// ErrWALFiles is wrapped when Restore swapped the file in but could not
// create its -wal and -shm: the restore is done, and until the next writer
// (a run, or cardsync check) creates them, readers without write access to
// the directory cannot open the warehouse.
var ErrWALFiles = errors.New("its -wal and -shm could not be created (readers without write access to the directory cannot open it until the next run or cardsync check)")

// walMode switches the database file at path to WAL mode, which SQLite
// keeps in the file's header, and closes it: the -wal and -shm it made go
// with the connection.
func walMode(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", dsn(path, []string{"mode=rw", "_pragma=busy_timeout(5000)", "_pragma=trusted_schema(0)"}))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return fmt.Errorf("journal_mode=WAL: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal_mode is %q, want wal (is the file on a filesystem without shared memory?)", mode)
	}
	return db.Close()
}

// keepWALFiles opens the WAL database at path read-write with a persistent
// WAL (as every writer does) and closes it, leaving an empty -wal and a
// -shm beside it with the file's mode (and, as root, its owner).
func keepWALFiles(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", dsn(path, []string{"mode=rw", "_pragma=busy_timeout(5000)", "_pragma=trusted_schema(0)"}))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	w := &Warehouse{db: db, path: path}
	if err := w.persistWAL(ctx); err != nil {
		return err
	}
	return db.Close()
}

// restoreSource checks the file a restore reads (a regular file, not the
// warehouse at abs itself, a whole database) and returns its absolute path.
func restoreSource(ctx context.Context, abs, file string) (string, error) {
	src, err := filepath.Abs(file)
	if err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	srcInfo, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	if !srcInfo.Mode().IsRegular() {
		return "", fmt.Errorf("restore: %s: %w: not a regular file", src, ErrBackupCheck)
	}
	if cur, err := os.Stat(abs); err == nil && os.SameFile(cur, srcInfo) {
		return "", fmt.Errorf("restore: %s is the warehouse itself", file)
	}
	if err := checkCopy(ctx, src); err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	return src, nil
}

// fileOwner is the permission and owner of the warehouse at abs, which the
// restored file takes (load.DefaultFileMode and no owner when it is
// missing).
func fileOwner(abs string) (mode os.FileMode, uid, gid int) {
	mode, uid, gid = load.DefaultFileMode, -1, -1
	if fi, err := os.Stat(abs); err == nil {
		mode = fi.Mode().Perm()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(st.Uid), int(st.Gid)
		}
	}
	return mode, uid, gid
}

// copyDatabase writes a consistent copy of the database at src (any
// journal mode, its WAL included) to dst with VACUUM INTO.
func copyDatabase(ctx context.Context, src, dst string) error {
	db, err := openPlain(src)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// openPlain opens a database file read-only, outside any warehouse
// handling: one connection, no migration.
func openPlain(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path, []string{"mode=ro", "_pragma=busy_timeout(5000)", "_pragma=trusted_schema(0)"}))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// keepBeforeRestore keeps the current warehouse (and its -wal) as
// <path>.before-restore-<now>, a name no file uses yet, and returns that
// path. An empty file (a warehouse that was missing, created by the lock)
// is not kept: it returns "".
func keepBeforeRestore(path string, now time.Time) (string, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	aside, err := freeBeforeRestoreName(path, now)
	if err != nil {
		return "", err
	}
	if err := linkOrCopy(path, aside); err != nil {
		return "", err
	}
	if wi, err := os.Stat(path + "-wal"); err == nil && wi.Size() > 0 {
		if err := linkOrCopy(path+"-wal", aside+"-wal"); err != nil {
			return "", err
		}
	}
	return aside, syncDir(filepath.Dir(path))
}

// freeBeforeRestoreName returns <path>.before-restore-<now>, with -2, -3,
// ... when a file (or its -wal, -shm or -journal) already uses the name.
func freeBeforeRestoreName(path string, now time.Time) (string, error) {
	base := path + BeforeRestoreSuffix + "-" + now.UTC().Format(backupTimeFormat)
	for n := 1; n < 10000; n++ {
		name := base
		if n > 1 {
			name = base + "-" + strconv.Itoa(n)
		}
		free := true
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			if _, err := os.Lstat(name + suffix); err == nil {
				free = false
			} else if !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
		}
		if free {
			return name, nil
		}
	}
	return "", fmt.Errorf("no free name for %s", base)
}

// linkOrCopy hard-links src as dst, or copies it (fsynced) where the file
// system has no hard links.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	return out.Close()
}
