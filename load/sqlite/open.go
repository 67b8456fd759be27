package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/redact"
)

// ApplicationID is written to PRAGMA application_id of every warehouse:
// 0x43534E43, the ASCII bytes "CSNC" (cardsync). Open refuses a non-empty
// SQLite file that carries another id.
const ApplicationID = 0x43534E43

// Warehouse is the SQLite warehouse. A writer (Open) holds exactly one
// connection; it is safe for concurrent use, calls queue on that connection.
type Warehouse struct {
	db       *sql.DB
	path     string
	readOnly bool
	now      func() time.Time
	log      *slog.Logger
	policy   *redact.Policy
	// set are the settings of the options; rules, the rules a page's items
	// are stored by, with the card id key read at each connect.
	set   load.Settings
	rules load.ItemRules
	// maxRemovedFraction is Options.MaxRemovedFraction.
	maxRemovedFraction float64
	// page holds CommitPage's statements, prepared once per writer.
	page *pageStatements
	// opts, syncMode and id are what a writer needs to reconnect: the
	// options it was opened with and the file (device, inode) it has open.
	opts      load.Options
	syncMode  string
	id        fileID
	immutable bool
	// batch is Options.BatchPages, BatchDelay and CommitDelay with defaults
	// applied.
	batch load.BatchLimits

	// account is Options.Account with its default applied.
	account string
	// rescanUnlocked: RescanBatch takes no run lock (a backup's copy,
	// which no run writes).
	rescanUnlocked bool

	closeOnce sync.Once
	closeErr  error
}

// busyTimeout is Options.BusyTimeout or its default.
func (w *Warehouse) busyTimeout() time.Duration {
	if w.opts.BusyTimeout > 0 {
		return w.opts.BusyTimeout
	}
	return busyTimeout
}

// Path returns the database file path.
func (w *Warehouse) Path() string { return w.path }

// File is the warehouse's file (load.Destination): its path, beside
// which the worker keeps the results the file refused to record.
func (w *Warehouse) File() string { return w.path }

// Account is the account the Warehouse reads and writes (Options.Account).
func (w *Warehouse) Account() string { return w.account }

// DB returns the underlying handle, for tests and read-only diagnostics. Do
// not write through it.
func (w *Warehouse) DB() *sql.DB { return w.db }

// Open opens (creating if needed) and migrates the warehouse at path for
// writing. It holds one connection in WAL mode with synchronous=FULL by
// default and BEGIN IMMEDIATE transactions. Callers that write should hold
// AcquireLock(path) first so two processes never walk at once.
func Open(ctx context.Context, path string, opts load.Options) (_ *Warehouse, err error) {
	defer classify(&err)
	opts = opts.WithDefaults()
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("open warehouse: %w", err)
	}
	syncMode := strings.ToUpper(opts.Synchronous)
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open warehouse %s: %w", path, err)
	}
	if err := createFile(abs, opts.FileMode); err != nil {
		return nil, fmt.Errorf("open warehouse %s: %w", path, err)
	}
	if fi, err := os.Stat(abs); err == nil && fi.Mode().Perm()&0o007 != 0 {
		// New files get FileMode; an old one may have been made readable by
		// everyone by hand. Card data is redacted, but it is still account
		// data: say so at every start.
		log := opts.Logger
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		log.Warn("the warehouse is readable by every local user; chmod o-rwx it (and its -wal and -shm)",
			"path", abs, "mode", fmt.Sprintf("%04o", fi.Mode().Perm()))
	}
	w := newWarehouse(nil, abs, false, opts)
	w.syncMode = syncMode
	// Another writer (an account of the same file opening at the same
	// time, or another process) may be creating or migrating the file:
	// switching it to WAL and checking the mode can answer SQLITE_BUSY
	// without SQLite's busy handler, and a migration in progress outlasts
	// the busy handler's wait, so the open itself waits, as long as a
	// migration may take (migrationWait), at least as long as a write.
	deadline := time.Now().Add(max(w.busyTimeout(), migrationWait))
	for {
		err = w.connect(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("open warehouse %s: %w", path, err)
		case <-time.After(25 * time.Millisecond):
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open warehouse %s: %w", path, readOnlyDir(abs, err))
	}
	return w, nil
}

// OpenReadOnly opens the warehouse at path with mode=ro: no writes, no
// migration. It needs read access to the file and to its -wal/-shm (which a
// writer keeps in place, see the package documentation). It refuses a file
// that is not a migrated warehouse, or one older (ErrSchemaTooOld: a
// writer must upgrade it first) or newer than this binary.
func OpenReadOnly(ctx context.Context, path string) (_ *Warehouse, err error) {
	defer classify(&err)
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open warehouse read-only %s: %w", path, err)
	}
	// SQLite reports a file it may not read as "unable to open database
	// file"; opening it first keeps the cause (permission denied).
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("open warehouse read-only: %w", err)
	}
	f.Close()
	w, err := openReadOnly(ctx, abs, false)
	if err != nil && immutableIsSafe(abs) {
		// A read-write open by someone else while the daemon was stopped
		// removed -wal and -shm, and this user cannot create them. With no
		// writer running and no WAL content, the file alone is the whole
		// database: read it as immutable.
		if wi, ierr := openReadOnly(ctx, abs, true); ierr == nil {
			return wi, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open warehouse read-only %s: %w", path, err)
	}
	return w, nil
}

// OpenReadOnlyAccount is OpenReadOnly with every read scoped to account
// (see Options.Account): status and report of one account of the file.
func OpenReadOnlyAccount(ctx context.Context, path, account string) (_ *Warehouse, err error) {
	defer classify(&err)
	if err := load.CheckAccountName(account); err != nil {
		return nil, fmt.Errorf("open warehouse read-only: account %w", err)
	}
	w, err := OpenReadOnly(ctx, path)
	if w != nil {
		w.account = account
	}
	return w, err
}

// immutableIsSafe: no process holds the writer lock and there is no WAL
// content that an immutable open would miss.
func immutableIsSafe(path string) bool {
	if pid, err := LockHolder(path); err != nil || pid != 0 {
		return false
	}
	fi, err := os.Stat(path + "-wal")
	return errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0
}

func openReadOnly(ctx context.Context, abs string, immutable bool) (*Warehouse, error) {
	params := []string{
		"mode=ro",
		"_pragma=busy_timeout(" + strconv.Itoa(int(busyTimeout/time.Millisecond)) + ")",
		"_pragma=trusted_schema(0)",
		"_pragma=query_only(1)",
		"_time_format=sqlite",
	}
	if immutable {
		params = append(params, "immutable=1")
	}
	db, err := sql.Open("sqlite", dsn(abs, params))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	w := newWarehouse(db, abs, true, load.Options{})
	w.immutable = immutable
	version, appID, err := w.versions(ctx, db)
	if err == nil {
		err = checkVersions(version, appID, latestVersion())
		if err == nil && version == 0 {
			err = load.ErrNotMigrated
			var n int
			if qerr := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); qerr == nil && n > 0 {
				err = fmt.Errorf("%w: the file has %s and no user_version", load.ErrForeignDatabase, english.Count(n, "schema object"))
			}
		}
		if err == nil && version < latestVersion() {
			// The queries of this binary name columns a migration adds
			// (account, ...): fail with the remedy, not "no such column".
			err = &load.SchemaVersionError{Database: version, Binary: latestVersion()}
		}
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return w, nil
}

// Immutable reports whether a read-only warehouse had to be opened as
// immutable: its -wal and -shm were missing (see OpenReadOnly). A writer
// (`cardsync check` or the next run, as the service user) recreates them.
func (w *Warehouse) Immutable() bool { return w.immutable }

func newWarehouse(db *sql.DB, path string, ro bool, opts load.Options) *Warehouse {
	s := opts.Settings()
	return &Warehouse{db: db, path: path, readOnly: ro, now: s.Now, log: s.Logger, policy: s.Policy, set: s,
		maxRemovedFraction: s.MaxRemovedFraction, opts: opts, account: s.Account, batch: s.Batch}
}

// dsn builds a file: URI. SQLite decodes %HH escapes in the path, and the
// driver splits its own parameters at the first '?', so '%', '?' and '#'
// in the path are percent-encoded.
func dsn(path string, params []string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return "file:" + r.Replace(path) + "?" + strings.Join(params, "&")
}

// createFile creates an empty database file with mode (exactly, regardless
// of umask) unless it exists. SQLite then creates -wal and -shm with the
// database file's permissions.
func createFile(path string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("create database file: %w", err)
	}
	return f.Close()
}

// setupWriter verifies the pragmas took effect and keeps the WAL file in
// place when the connection closes.
func (w *Warehouse) setupWriter(ctx context.Context, syncMode string) error {
	var mode string
	if err := w.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal_mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal_mode is %q, want wal (is the file on a filesystem without shared memory?)", mode)
	}
	var fk int
	if err := w.db.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		return fmt.Errorf("foreign_keys not enabled (%d): %v", fk, err)
	}
	var sync int
	if err := w.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
		return fmt.Errorf("read synchronous: %w", err)
	}
	if want := map[string]int{"OFF": 0, "NORMAL": 1, "FULL": 2, "EXTRA": 3}[syncMode]; sync != want {
		return fmt.Errorf("synchronous is %d, want %d (%s)", sync, want, syncMode)
	}
	return w.persistWAL(ctx)
}

// persistWAL sets SQLITE_FCNTL_PERSIST_WAL on the connection: the last
// writer close keeps -wal (truncated) and -shm, so an analyst without write
// access to the directory can still open the database read-only while the
// worker is stopped. It also puts the database in WAL mode.
func (w *Warehouse) persistWAL(ctx context.Context) error {
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return err
	}
	return conn.Raw(func(dc any) error {
		fc, ok := dc.(sqlite.FileControl)
		if !ok {
			return errors.New("driver connection has no FileControl")
		}
		if _, err := fc.FileControlPersistWAL("main", 1); err != nil {
			return fmt.Errorf("set persistent WAL: %w", err)
		}
		return nil
	})
}

// Close closes the warehouse. A writer first attempts a short TRUNCATE WAL
// checkpoint (none with Options.WALCheckpoint "external"), so the file on disk
// is complete without its WAL.
func (w *Warehouse) Close() (err error) {
	defer classify(&err)
	w.closeOnce.Do(func() {
		if !w.readOnly {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if err := w.Optimize(ctx); err != nil {
				w.log.Warn("close: checkpoint", "err", err)
			}
			cancel()
		}
		w.page.close()
		w.closeErr = w.db.Close()
	})
	return w.closeErr
}

// Optimize runs after a run: a wal_checkpoint(TRUNCATE) attempt bounded by a
// short busy timeout (an analyst's open snapshot makes it give up rather than
// stall the worker; the WAL is then reclaimed next time), and PRAGMA
// optimize. During runs SQLite's PASSIVE autocheckpoint does the work. With
// Options.WALCheckpoint "external" it runs PRAGMA optimize only: the process
// that owns WAL checkpoints (Litestream) must see every WAL frame before the WAL
// restarts.
func (w *Warehouse) Optimize(ctx context.Context) (err error) {
	defer classify(&err)
	if w.readOnly {
		return load.ErrReadOnly
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("optimize: %w", err)
	}
	defer conn.Close()
	if w.externalWALCheckpoints() {
		if _, err := conn.ExecContext(ctx, "PRAGMA optimize"); err != nil && !isBusy(err) {
			return fmt.Errorf("optimize: %w", err)
		}
		return nil
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", optimizeBusyTimeout/time.Millisecond)); err != nil {
		return fmt.Errorf("optimize: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout = %d", w.busyTimeout()/time.Millisecond))
	var busy, logPages, ckpt int
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &ckpt); err != nil {
		if !isBusy(err) {
			return fmt.Errorf("optimize: WAL checkpoint: %w", err)
		}
		busy = 1
	}
	if busy != 0 {
		w.log.Debug("wal checkpoint(TRUNCATE) gave up: a reader holds a snapshot", "wal_pages", logPages, "checkpointed", ckpt)
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA optimize"); err != nil && !isBusy(err) {
		return fmt.Errorf("optimize: %w", err)
	}
	return nil
}

// externalWALCheckpoints reports whether another process owns the WAL's
// checkpoints (Options.WALCheckpoint "external").
func (w *Warehouse) externalWALCheckpoints() bool {
	return w.opts.WALCheckpoint == load.WALCheckpointExternal
}

func isBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == 5 || c == 6 // SQLITE_BUSY, SQLITE_LOCKED
	}
	return false
}

// SQLite connection bounds.
const (
	// busyTimeout bounds how long a statement waits for a lock held by
	// another connection (a checkpoint, an analyst's BEGIN IMMEDIATE).
	busyTimeout = 5 * time.Second
	// journalSizeLimit lets SQLite shrink the WAL back after it grew while an
	// analyst held a snapshot.
	journalSizeLimit = 64 << 20
	// optimizeBusyTimeout bounds the post-run TRUNCATE WAL checkpoint attempt.
	optimizeBusyTimeout = 200 * time.Millisecond
	// migrationWait bounds how long an open waits for another writer that
	// creates or migrates the file: a migration of every schema (copying
	// tables, running Go steps) takes longer than one write, the more so
	// on a loaded machine.
	migrationWait = 2 * time.Minute
)

// ItemRules are the rules this warehouse stores a page's items by (its
// policy, card id key and keep_fields): what a tool that rewrites stored
// rows applies to match what a sync writes.
func (w *Warehouse) ItemRules() load.ItemRules { return w.rules }
