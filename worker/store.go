package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cardsync/cardsync/load/dialect"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
)

// Store is the warehouse a worker writes (one account of its file,
// load.Options.Account), with that account's run lock
// (a file's account lock: a second writer of the same account is refused,
// other accounts of the file sync at the same time). The lock
// is opened (and, for a one-shot command, taken) before the warehouse is
// opened, so a process that must give way to a running sync exits without
// touching the file. This is the one place that order lives.
//
// With PostgreSQL (OpenTarget with a URL) the run lock is the account's
// lease (Lease), taken once the warehouse is open, since the lease lives
// in the warehouse's cluster (load.Cluster, which dialect.Open returns
// beside it).
type Store struct {
	// Lock is the account's run lock: the file's account lock, or Lease.
	Lock      load.RunLock
	Warehouse load.Destination
	// Lease is the account's lease on a shared warehouse (nil: a file):
	// the daemon keeps it between runs and shares the accounts through
	// its cluster with the other replicas.
	Lease *LeaseLock
}

// Target says where a store writes: the SQLite file at Path, or, when URL
// is set, the PostgreSQL database of URL.
type Target struct {
	Path string
	// URL is the PostgreSQL URL (postgres://…), without a password.
	URL string
	// Password is the PostgreSQL password (from a file or credential).
	Password string
	// Schema is the PostgreSQL schema ("": public).
	Schema string
	// Holder names this process in sync_leases ([cluster] holder).
	Holder string
	// LeaseTTL is how long a lease lasts without renewal.
	LeaseTTL time.Duration
	// Pools, when set, shares one PostgreSQL connection pool among the
	// stores opened on the same database (dialect.NewPools); nil: each
	// store has a pool of its own.
	Pools *dialect.Pools
}

// OpenTarget opens the store of t (dialect.Open picks the warehouse): a
// file's account lock, taken now when hold is true, then the warehouse;
// or the PostgreSQL warehouse of t.URL with the account's lease as its
// run lock (taken now when hold is true: a refusal wraps load.ErrLocked).
// Writes to a server are refused until the lease is taken.
func OpenTarget(ctx context.Context, t Target, opts load.Options, hold bool) (*Store, error) {
	wh, fileLock, cluster, err := dialect.Open(ctx, dialect.Target{Path: t.Path, URL: t.URL, Password: t.Password, Schema: t.Schema, LeaseTTL: t.LeaseTTL, Pools: t.Pools}, opts, hold)
	if err != nil {
		return nil, err
	}
	if cluster == nil {
		return &Store{Lock: fileLock, Warehouse: wh}, nil
	}
	lease := NewLeaseLock(cluster, t.Holder, t.LeaseTTL)
	if hold {
		if err := lease.Hold(ctx); err != nil {
			wh.Close()
			return nil, err
		}
	}
	return &Store{Lock: lease, Warehouse: wh, Lease: lease}, nil
}

// OpenStore opens the store of the warehouse file at path (OpenTarget):
// its account's writer lock, taken when hold is true (backfill, demo: a
// refusal is load.ErrLocked), then the warehouse with opts. serve passes
// hold false: each run takes and releases the lock, while the lock's
// descriptor and the warehouse stay open for the daemon's life (closing
// the descriptor would drop SQLite's own locks; an open warehouse keeps
// its WAL for analysts). Every error but ErrLocked wraps ErrWarehouse.
func OpenStore(ctx context.Context, path string, opts load.Options, hold bool) (*Store, error) {
	return OpenTarget(ctx, Target{Path: path}, opts, hold)
}

// Close closes the warehouse, then the lock (releasing it if held). A
// lease is released first, while the warehouse it lives in is open.
func (s *Store) Close() error {
	if s.Lease != nil {
		return errors.Join(s.Lock.Close(), s.Warehouse.Close())
	}
	return errors.Join(s.Warehouse.Close(), s.Lock.Close())
}

// JobOptions are the parts of a Job that are not the store or the client.
type JobOptions struct {
	Version        string
	AuditRetention time.Duration
	// FieldRetention is Job.FieldRetention.
	FieldRetention time.Duration
	Progress       func(Progress)
	Status         func(string)
	// Observer, if set, hears how each run ended (metrics).
	Observer Observer
	// FetchAhead is Job.FetchAhead.
	FetchAhead int
	// Commands is Job.Commands.
	Commands CommandLine
}

// Job returns a Job that syncs through client into the store.
func (s *Store) Job(client *extract.Client, log *slog.Logger, o JobOptions) *Job {
	return &Job{
		Client:         client,
		Warehouse:      s.Warehouse,
		Lock:           s.Lock,
		Lease:          s.Lease,
		Logger:         log,
		Version:        o.Version,
		AuditRetention: o.AuditRetention,
		FieldRetention: o.FieldRetention,
		Progress:       o.Progress,
		Status:         o.Status,
		Observer:       o.Observer,
		FetchAhead:     o.FetchAhead,
		Commands:       o.Commands,
	}
}
