package dialect

import (
	"context"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
)

// What a warehouse file (SQLite) alone has: its backups, restore and
// checks, for the commands that work on a file (backup, restore, check,
// demo, serve's scheduled backups). A PostgreSQL warehouse has none of
// them: pg_dump and pg_restore back it up and restore it, and the
// commands refuse a URL before they get here. Each is package sqlite's.

// ErrBackupBusy is returned by Backup when another backup is writing to
// the same directory.
var ErrBackupBusy = sqlite.ErrBackupBusy

// BeforeRestoreSuffix follows the warehouse's name in the name of the file
// Restore keeps the replaced warehouse in.
const BeforeRestoreSuffix = sqlite.BeforeRestoreSuffix

// RestoreResult is what Restore did: where the replaced warehouse is kept
// and what it held against the file restored.
type RestoreResult = sqlite.RestoreResult

// RestoreRefusedError is Restore's refusal (without force) to discard
// history or to replace another warehouse; nothing was changed.
type RestoreRefusedError = sqlite.RestoreRefusedError

// DefaultBackupDir is the backup directory of the warehouse file at path
// when none is configured: backups/ beside it.
func DefaultBackupDir(path string) string { return sqlite.DefaultBackupDir(path) }

// ListBackups returns the backups of the warehouse file at path in dir,
// newest first, by their names.
func ListBackups(dir, path string) ([]string, error) { return sqlite.ListBackups(dir, path) }

// NewestOwnBackup returns the newest backup in dir that carries the
// identity of the warehouse file at path ("" when there is none).
func NewestOwnBackup(ctx context.Context, dir, path string) (string, error) {
	return sqlite.NewestOwnBackup(ctx, dir, path)
}

// RestoreOptions are Restore's choices: Force, and Wait (how long to wait
// for a run in progress to end) with Waiting (told while it waits).
type RestoreOptions = sqlite.RestoreOptions

// LockWaitError is Restore's error when a sync still held the warehouse
// after opts.Wait (errors.Is load.ErrLocked).
type LockWaitError = sqlite.LockWaitError

// Restore replaces the warehouse file at path with the backup file,
// keeping the replaced one beside it; without opts.Force it refuses (a
// *RestoreRefusedError) to discard history or replace another warehouse.
func Restore(ctx context.Context, path, file string, opts RestoreOptions) (RestoreResult, error) {
	return sqlite.Restore(ctx, path, file, opts)
}

// CheckWritable proves, writing nothing, that this process could sync the
// warehouse file at path: the writer lock (load.ErrLocked when a sync
// holds it) and a write transaction rolled back.
func CheckWritable(ctx context.Context, path string) error { return sqlite.CheckWritable(ctx, path) }

// AcquireLock takes the whole file's writer lock of the warehouse at path
// without waiting (an error wrapping load.ErrLocked when another process
// holds it); Close releases it.
func AcquireLock(path string) (load.RunLock, error) {
	l, err := sqlite.AcquireLock(path)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// ForeignRuns counts the runs of the warehouse file at path that trigger
// did not start, reading a file of any schema version read-only.
func ForeignRuns(ctx context.Context, path, trigger string) (int, error) {
	return sqlite.ForeignRuns(ctx, path, trigger)
}

// BackupRulesVersion reads the rules version of the backup at path,
// read-only (1 for a backup older than the rules version's record).
func BackupRulesVersion(ctx context.Context, path string) (int, error) {
	return sqlite.BackupRulesVersion(ctx, path)
}

// RescanBackup applies the current rules to the backup at path in place,
// keeping its name, mode and identity (changed false: it was current).
func RescanBackup(ctx context.Context, path string, opts load.Options, ro load.RescanOptions) (load.RescanResult, bool, error) {
	return sqlite.RescanBackup(ctx, path, opts, ro)
}
