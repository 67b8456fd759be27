// Package dialect is the one place a warehouse's dialect is chosen: Open
// picks SQLite (a file, package load/sqlite) or PostgreSQL (a server,
// package load/postgres) from the target and returns the warehouse as a
// load.Destination, with a file's run lock (load.RunLock) or a server's
// load.Cluster (leases, replicas) beside it; OpenReadOnly returns a
// load.Reader. The worker, the report and the metrics import no dialect,
// and hold what these return without probing it. It holds no rule: each
// dialect's rules are its own (a server's idle-in-transaction bound from
// the lease TTL is load/postgres's).
//
// Open puts a file's account lock before the SQLite warehouse, or opens the
// PostgreSQL warehouse of a URL with writes refused until its lease is
// taken. OpenReadOnly serves status, check, report and serve's report
// refresh: no DDL, no write, an older schema refused. SchemaVersion is the
// version this binary migrates to. What only a file has (file.go, one-line
// wrappers of load/sqlite): Backup, DefaultBackupDir, ListBackups, Restore,
// CheckCreatable, CheckWritable, AcquireLock, ForeignRuns. It holds no SQL
// of its own.
package dialect

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/sqlite"
)

// Target says where a warehouse is: the SQLite file at Path, or, when URL
// is set, the PostgreSQL database of URL.
type Target struct {
	Path string
	// URL is the PostgreSQL URL (postgres://…), without a password.
	URL string
	// Password is the PostgreSQL password (from a file or credential).
	Password string
	// Schema is the PostgreSQL schema ("": public; postgres.Options.Schema).
	Schema string
	// LeaseTTL is how long an account's lease lasts without renewal
	// (PostgreSQL; postgres.Options.LeaseTTL).
	LeaseTTL time.Duration
	// Pools, when set, shares one connection pool among the accounts
	// opened on the same database (postgres.Options.Pools).
	Pools *Pools
}

// Pools is postgres.Pools: one pool per PostgreSQL database shared by the
// accounts a process opens on it (NewPools).
type Pools = postgres.Pools

// NewPools is postgres.NewPools: pools of at most maxConns connections.
func NewPools(maxConns int32) *Pools { return postgres.NewPools(maxConns) }

// Open opens the warehouse of t for writing, scoped to opts.Account.
//
// A file's account lock is opened (and taken when hold is true: a refusal
// wraps load.ErrLocked) before the warehouse, so a process that must give
// way to a running sync exits without touching the file; the lock is
// returned with the warehouse, and the cluster is nil. A server has no
// lock here (nil): it returns the warehouse's load.Cluster, over which the
// worker takes the account's lease, and every write is refused until that
// lease is taken. Every error but ErrLocked wraps load.ErrWarehouse.
func Open(ctx context.Context, t Target, opts load.Options, hold bool) (load.Destination, load.RunLock, load.Cluster, error) {
	if t.URL != "" {
		wh, err := postgres.Open(ctx, t.URL, postgres.Options{Common: opts, Password: t.Password, Schema: t.Schema, RequireLease: true,
			LeaseTTL: t.LeaseTTL, Pools: t.Pools})
		if err != nil {
			return nil, nil, nil, err
		}
		return wh, nil, wh, nil
	}
	lock, err := sqlite.OpenAccountLock(t.Path, cmp.Or(opts.FileMode, load.DefaultFileMode), cmp.Or(opts.Account, load.DefaultAccount))
	if err != nil {
		return nil, nil, nil, err
	}
	if hold {
		if err := lock.Acquire(); err != nil {
			lock.Close()
			return nil, nil, nil, err
		}
	}
	wh, err := sqlite.Open(ctx, t.Path, opts)
	if err != nil {
		lock.Close()
		return nil, nil, nil, fmt.Errorf("open %s: %w", t.Path, err)
	}
	return wh, lock, nil, nil
}

// Backup writes a backup of the warehouse file at path into dir
// (sqlite.DefaultBackupDir when empty), keeping the newest keep of its
// backups (load.DefaultBackupKeep when 0): the scheduled backups of a
// file. A PostgreSQL warehouse is backed up with pg_dump.
func Backup(ctx context.Context, path, dir string, keep int, now time.Time) (load.BackupResult, error) {
	return sqlite.Backup(ctx, path, dir, keep, now)
}
