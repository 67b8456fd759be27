package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/cardsync/cardsync/load"
	"modernc.org/sqlite"
)

// fileID identifies a file: its device and inode.
type fileID struct{ dev, ino uint64 }

func statID(path string) (fileID, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileID{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// writerParams are the writer connection's pragmas, in the DSN so that
// every connection the pool makes gets them.
func writerParams(syncMode string, busy time.Duration) []string {
	return []string{
		"_pragma=busy_timeout(" + strconv.Itoa(int(busy/time.Millisecond)) + ")",
		"_pragma=journal_mode(WAL)",
		"_pragma=foreign_keys(1)",
		"_pragma=synchronous(" + syncMode + ")",
		"_pragma=journal_size_limit(" + strconv.Itoa(journalSizeLimit) + ")",
		"_pragma=trusted_schema(0)",
		"_txlock=immediate",
		"_time_format=sqlite",
	}
}

// connect opens the writer connection on w.path: pragmas checked,
// persistent WAL, migrations, prepared statements, and the file's identity
// recorded.
func (w *Warehouse) connect(ctx context.Context) error {
	db, err := sql.Open("sqlite", dsn(w.path, writerParams(w.syncMode, w.busyTimeout())))
	if err != nil {
		return err
	}
	// One writer connection, kept for the life of the Warehouse: SQLite
	// allows one writer anyway, and keeping it open keeps -wal/-shm in place
	// for read-only analysts.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	w.db = db
	fail := func(err error) error {
		db.Close()
		w.db = nil
		return err
	}
	if err := w.setupWriter(ctx, w.syncMode); err != nil {
		return fail(err)
	}
	if err := w.migrate(ctx); err != nil {
		return fail(err)
	}
	key, err := readIDKey(ctx, db)
	if err != nil {
		return fail(err)
	}
	w.rules = w.set.ItemRules(key)
	if err := w.refreshColumnDocs(ctx); err != nil {
		return fail(err)
	}
	if w.page, err = preparePageStatements(ctx, db); err != nil {
		return fail(err)
	}
	if w.id, err = statID(w.path); err != nil {
		return fail(err)
	}
	return nil
}

// reconnect closes the writer connection and opens a new one on w.path.
func (w *Warehouse) reconnect(ctx context.Context) error {
	w.page.close()
	if err := w.db.Close(); err != nil {
		w.log.Warn("close the old connection", "err", err)
	}
	if err := w.connect(ctx); err != nil {
		return fmt.Errorf("reopen warehouse %s: %w", w.path, err)
	}
	return nil
}

// Writable implements load.Reader: Verify without its event (the
// worker calls Verify itself, before a run).
func (w *Warehouse) Writable(ctx context.Context) error {
	_, _, err := w.Verify(ctx)
	return err
}

// Verify checks, before a run writes, that the path still names the file
// this writer has open and that it can write it, and repairs what it can:
// a connection left read-only is reopened read-write; a deleted file is
// written back from the open database (VACUUM INTO a temporary file, then
// rename); a file replaced by another warehouse is adopted; one replaced by
// anything else is moved aside and the open database written back. The
// message says what happened, for the log.
func (w *Warehouse) Verify(ctx context.Context) (_ load.FileEvent, _ string, err error) {
	defer classify(&err)
	if w.readOnly {
		return load.FileOK, "", load.ErrReadOnly
	}
	id, err := statID(w.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := w.writeBack(ctx); err != nil {
			return load.FileOK, "", fmt.Errorf("the warehouse file was deleted and could not be written back: %w", err)
		}
		return load.FileWrittenBack, "the warehouse file was deleted while cardsync had it open; the open database was written back to " + w.path + ": nothing is lost", nil
	case err != nil:
		return load.FileOK, "", fmt.Errorf("check the warehouse file: %w", err)
	case id != w.id:
		// Our WAL may still sit at <path>-wal: empty it before anything
		// opens the file now at the path, or SQLite would read our frames
		// as that file's.
		w.walCheckpointTruncate(ctx)
		if isWarehouse(ctx, w.path) {
			if err := w.reconnect(ctx); err != nil {
				return load.FileOK, "", err
			}
			return load.FileSwitched, "the warehouse file was replaced by another cardsync warehouse (a restore?); cardsync now writes to it", nil
		}
		aside := w.path + ".replaced-" + time.Now().UTC().Format("20060102T150405Z")
		if err := os.Rename(w.path, aside); err != nil {
			return load.FileOK, "", fmt.Errorf("move aside the file that replaced the warehouse: %w", err)
		}
		// A -wal that is not empty after our WAL checkpoint belongs to the
		// foreign file: it goes aside with it.
		if fi, err := os.Stat(w.path + "-wal"); err == nil && fi.Size() > 0 {
			_ = os.Rename(w.path+"-wal", aside+"-wal")
		}
		if err := w.writeBack(ctx); err != nil {
			return load.FileOK, "", fmt.Errorf("write back the warehouse: %w", err)
		}
		return load.FileMovedAside, "the warehouse file was replaced by a file that is not a cardsync warehouse; it was moved to " + aside +
			" and the open database written back to " + w.path + ": nothing is lost", nil
	}
	if err := w.probeWrite(ctx); err == nil {
		return load.FileOK, "", nil
	} else if !isReadOnly(err) {
		return load.FileOK, "", fmt.Errorf("check the warehouse is writable: %w", err)
	}
	// SQLite opens a file it may not write read-only without a word; the
	// permissions may have been fixed since.
	if err := w.reconnect(ctx); err != nil {
		return load.FileOK, "", fmt.Errorf("%w: %w", load.ErrNotWritable, readOnlyDir(w.path, err))
	}
	if err := w.probeWrite(ctx); err != nil {
		return load.FileOK, "", fmt.Errorf("%w (%s as uid %d): %w", load.ErrNotWritable, w.path, os.Getuid(), readOnlyDir(w.path, err))
	}
	return load.FileReopened, "the warehouse connection was read-only (the file's permissions had changed); it was reopened read-write", nil
}

// walCheckpointTruncate moves the WAL's frames into the database and
// empties the WAL, giving up quietly when a reader holds a snapshot.
//
// With Options.WALCheckpoint "external" it does nothing when the -wal at the
// path is missing or empty (Restore moved ours aside with the old file and
// left the restored file an empty one of its own): no frame there can be
// read as the new file's, so the only TRUNCATE cardsync then ever runs is
// the one that keeps our frames from being read as those of a file put in
// place by hand.
func (w *Warehouse) walCheckpointTruncate(ctx context.Context) {
	if w.externalWALCheckpoints() {
		if fi, err := os.Stat(w.path + "-wal"); errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0 {
			return
		}
	}
	var busy, logPages, ckpt int
	if err := w.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &ckpt); err != nil || busy != 0 {
		w.log.Warn("could not empty the WAL before checking the replaced file", "err", err, "busy", busy)
	}
}

// probeWrite starts a write transaction and rolls it back.
func (w *Warehouse) probeWrite(ctx context.Context) error {
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// BEGIN IMMEDIATE takes the write lock; a write proves the file is
	// writable (a read-only connection refuses it).
	if _, err := tx.ExecContext(ctx, `UPDATE sync_checkpoints SET stream = stream WHERE 0`); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `PRAGMA user_version = `+strconv.Itoa(latestVersion()))
	return err
}

func isReadOnly(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 8 // SQLITE_READONLY
}

// isWarehouse reports whether the file at path is a cardsync warehouse.
func isWarehouse(ctx context.Context, path string) bool {
	db, err := sql.Open("sqlite", dsn(path, []string{"mode=ro", "_pragma=busy_timeout(1000)"}))
	if err != nil {
		return false
	}
	defer db.Close()
	var appID int
	return db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID) == nil && appID == ApplicationID
}

// writeBack writes the open database to w.path again: VACUUM INTO a
// temporary file beside it (a consistent copy, read from the open
// connection, WAL included), file mode and fsync, then the connection is
// closed, the stale -wal and -shm removed and the copy renamed into place,
// and the connection reopened on it.
func (w *Warehouse) writeBack(ctx context.Context) error {
	tmp := w.path + ".writeback-" + strconv.Itoa(os.Getpid())
	_ = os.Remove(tmp)
	if err := w.snapshotTo(ctx, tmp); err != nil {
		return err
	}
	w.page.close()
	if err := w.db.Close(); err != nil {
		w.log.Warn("close the connection to the deleted file", "err", err)
	}
	if err := removeWAL(w.path); err != nil {
		return err
	}
	if err := os.Rename(tmp, w.path); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(w.path)); err != nil {
		return err
	}
	return w.connect(ctx)
}

// snapshotTo writes a consistent copy of the database to path (which must
// not exist) with VACUUM INTO, gives it the warehouse's file mode and
// fsyncs it. The copy is not a WAL database until opened by a writer.
func (w *Warehouse) snapshotTo(ctx context.Context, path string) error {
	if _, err := w.db.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("vacuum into %s: %w", path, err)
	}
	return finishFile(path, cmp.Or(w.opts.FileMode, load.DefaultFileMode))
}

// removeWAL removes the -wal and -shm of the database at path, before
// another file takes its name: a stale frame must never be read as the new
// file's.
func removeWAL(path string) error {
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", path+suffix, err)
		}
	}
	return nil
}

// syncDir fsyncs a directory, so a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// CheckCreatable reports whether a file exists at path and, when none
// does, checks that the warehouse can be created there: its directory
// takes a new file (a probe file, created and removed at once). It is
// `cardsync check` before the first run.
func CheckCreatable(path string) (exists bool, err error) {
	defer classify(&err)
	if _, err := os.Stat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err == nil, err
	}
	dir := filepath.Dir(path)
	probe, err := os.CreateTemp(dir, ".cardsync-check-*")
	if err != nil {
		return false, fmt.Errorf("warehouse directory %s is not usable: %w", dir, err)
	}
	probe.Close()
	return false, os.Remove(probe.Name())
}

// CheckWritable proves that this process could sync the warehouse at path
// without writing anything: it takes the writer lock (ErrLocked when a sync
// holds it) and opens the file read-write for a write transaction that it
// rolls back. The connection keeps a persistent WAL, so a -wal and -shm
// that a manual read-write open removed are back afterwards and read-only
// analysts can open the file again. A file that does not exist yet is not
// created.
func CheckWritable(ctx context.Context, path string) (err error) {
	defer classify(&err)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("check writable: %w", err)
	}
	l, err := AcquireLock(path)
	if err != nil {
		return err
	}
	defer l.Close()
	db, err := sql.Open("sqlite", dsn(path, []string{"mode=rw", "_pragma=busy_timeout(2000)", "_txlock=immediate"}))
	if err != nil {
		return fmt.Errorf("check writable: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	w := &Warehouse{db: db, path: path}
	if err := w.persistWAL(ctx); err != nil {
		return fmt.Errorf("check writable: %w", readOnlyDir(path, err))
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", load.ErrNotWritable, readOnlyDir(path, err))
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("%w: %w", load.ErrNotWritable, readOnlyDir(path, err))
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(v)); err != nil {
		return fmt.Errorf("%w: %w", load.ErrNotWritable, readOnlyDir(path, err))
	}
	return nil
}
