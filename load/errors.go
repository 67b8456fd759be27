package load

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadData is wrapped when the data handed to the warehouse cannot be
// stored as it is (an amount with more decimals than cents, JSON nested too
// deep or invalid): the upstream sent something to refuse, not a local
// storage failure.
var ErrBadData = errors.New("data refused")

// ErrLocked is wrapped by *LockedError: another process holds the writer lock.
var ErrLocked = errors.New("sync in progress")

// LockedError reports the process that holds the writer lock.
type LockedError struct {
	PID  int    // holder's process id, 0 when unknown
	Path string // the lock file
}

// Error implements error.
func (e *LockedError) Error() string {
	if e.PID <= 0 {
		return "sync in progress (pid unknown, lock " + e.Path + ")"
	}
	return fmt.Sprintf("sync in progress (pid %d)", e.PID)
}

// Unwrap makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Unwrap() error { return ErrLocked }

// ErrSchemaTooNew is wrapped by *SchemaVersionError when the database was
// migrated by a newer binary.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

// ErrSchemaTooOld is wrapped by *SchemaVersionError when a read-only open
// finds a database that this binary would migrate first: a writer (the
// next sync) must upgrade it before this binary can read it.
var ErrSchemaTooOld = errors.New("database schema is older than this binary")

// ErrNotMigrated is returned by OpenReadOnly for a database that has no
// warehouse schema yet: the first sync creates it. (The command that runs
// one is named where the invocation is known, by the command line.)
var ErrNotMigrated = errors.New("database has no warehouse schema yet (the first sync creates it)")

// ErrCorrupt is wrapped when the warehouse file is damaged or is no
// database at all (SQLite's "database disk image is malformed", "file is
// not a database"): only a backup, or a new warehouse, helps.
var ErrCorrupt = errors.New("the warehouse file is damaged or not a database")

// SchemaForkError is a PostgreSQL warehouse's schema that holds no
// warehouse while other schemas of the database do: a sync refuses to
// start a new one in the default schema (one chosen explicitly it
// initialises), and a read-only open (ReadOnly: it wraps ErrNotMigrated
// too) says where the warehouse is.
type SchemaForkError struct {
	// Schema is the warehouse's schema, empty; Others hold warehouses.
	Schema string
	Others []string
	// ReadOnly: the refusal of a read-only open.
	ReadOnly bool
}

// Error implements error.
func (e *SchemaForkError) Error() string {
	where := strings.Join(e.Others, ", ")
	if e.ReadOnly {
		return fmt.Sprintf("%v: schema %s holds no warehouse, schema %s does: set [warehouse] schema (CARDSYNC_WAREHOUSE_SCHEMA) to read it", ErrNotMigrated, e.Schema, where)
	}
	return fmt.Sprintf("schema %s holds no warehouse, but schema %s of the same database does: set [warehouse] schema = %q (CARDSYNC_WAREHOUSE_SCHEMA) to use it; to start a new warehouse in %s instead, set [warehouse] schema = %q explicitly",
		e.Schema, where, e.Others[0], e.Schema, e.Schema)
}

// Unwrap makes errors.Is(err, ErrNotMigrated) true for a read-only open's
// refusal.
func (e *SchemaForkError) Unwrap() error {
	if e.ReadOnly {
		return ErrNotMigrated
	}
	return nil
}

// PrivilegeError is a database role's lack of a privilege a sync needs.
// It wraps ErrNotWritable; Grant is the statement that gives the
// privilege, for the object's owner or a superuser to run.
type PrivilegeError struct {
	// Role is the role cardsync signs in as.
	Role string
	// Warehouse names the database (its URL without a password).
	Warehouse string
	// Action is what the role cannot do, before Warehouse: "create the
	// warehouse's tables in schema public of".
	Action string
	// Lacks is the privilege missing, with its object: "CREATE on schema
	// public".
	Lacks string
	// Grant is the statement that gives it: "GRANT USAGE, CREATE ON
	// SCHEMA public TO cardsync".
	Grant string
}

// Error implements error.
func (e *PrivilegeError) Error() string {
	return fmt.Sprintf("role %s cannot %s %s: it lacks %s", e.Role, e.Action, e.Warehouse, e.Lacks)
}

// Unwrap makes errors.Is(err, ErrNotWritable) true.
func (e *PrivilegeError) Unwrap() error { return ErrNotWritable }

// ErrForeignDatabase is returned when the file is an SQLite database that
// belongs to another application.
var ErrForeignDatabase = errors.New("not a cardsync warehouse")

// ErrReadOnly is returned by write methods of a warehouse opened with
// OpenReadOnly.
var ErrReadOnly = errors.New("warehouse opened read-only")

// ErrRunNotRunning is returned when a run that is no longer `running` (it
// finished, or was marked abandoned) is heartbeated or finished again.
var ErrRunNotRunning = errors.New("run is not running")

// SchemaVersionError reports a database whose user_version is beyond the
// migrations this binary carries, or (for a read-only open, which cannot
// migrate) behind them.
type SchemaVersionError struct {
	Database int // PRAGMA user_version of the file
	Binary   int // highest migration this binary knows
}

// Error implements error.
func (e *SchemaVersionError) Error() string {
	if e.Database < e.Binary {
		return fmt.Sprintf("database schema version %d is older than this binary's %d and a read-only open cannot upgrade it: "+
			"the next sync upgrades it (the service's next run, or a backfill)", e.Database, e.Binary)
	}
	return fmt.Sprintf("database schema version %d is newer than this binary's %d: upgrade cardsync", e.Database, e.Binary)
}

// Unwrap makes errors.Is(err, ErrSchemaTooNew) true, or ErrSchemaTooOld
// for an older database.
func (e *SchemaVersionError) Unwrap() error {
	if e.Database < e.Binary {
		return ErrSchemaTooOld
	}
	return ErrSchemaTooNew
}

// ErrWarehouse is wrapped by every error load returns from its exported
// functions and methods, except a *LockedError and the pure validation
// rules (CheckFileMode, CheckSynchronous, CheckMaxRemovedFraction,
// CheckWALCheckpoint, Options.Validate: configuration errors, not warehouse
// ones): callers branch on it (the
// command exits 6) without wrapping load's errors by hand. Errors that say
// more (ErrBadData, ErrSchemaTooNew, ...) are still found with errors.Is.
var ErrWarehouse = errors.New("warehouse error")
