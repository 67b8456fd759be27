package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/sqlite"
)

// Store is the warehouse a worker writes (one account of its file,
// load.Options.Account), with that account's run lock
// (sqlite.OpenAccountLock: a second writer of the same account is refused,
// other accounts of the file sync at the same time). The lock
// is opened (and, for a one-shot command, taken) before the warehouse is
// opened, so a process that must give way to a running sync exits without
// touching the file. This is the one place that order lives.
//
// With PostgreSQL (OpenTarget with a URL) the run lock is the account's
// lease (LeaseLock), taken once the warehouse is open, since the lease
// lives in it.
type Store struct {
	Lock      RunLock
	Warehouse load.Destination
}

// Target says where a store writes: the SQLite file at Path, or, when URL
// is set, the PostgreSQL database of URL.
type Target struct {
	Path string
	// URL is the PostgreSQL URL (postgres://…), without a password.
	URL string
	// Password is the PostgreSQL password (from a file or credential).
	Password string
	// Holder names this process in sync_leases (hostname:pid).
	Holder string
	// LeaseTTL is how long a lease lasts without renewal.
	LeaseTTL time.Duration
}

// OpenTarget opens the store of t: OpenStore for a file, or the
// PostgreSQL warehouse of t.URL with the account's lease as its run lock
// (taken now when hold is true: a refusal wraps load.ErrLocked). Writes
// are refused until the lease is taken (postgres.Options.RequireLease).
func OpenTarget(ctx context.Context, t Target, opts load.Options, hold bool) (*Store, error) {
	if t.URL == "" {
		return OpenStore(ctx, t.Path, opts, hold)
	}
	// A replica paused inside a write transaction holds its lease row: its
	// session ends after half a TTL idle, so the lease can move on.
	wh, err := postgres.Open(ctx, t.URL, postgres.Options{Common: opts, Password: t.Password, RequireLease: true,
		IdleInTransaction: min(postgres.DefaultIdleInTransaction, t.LeaseTTL/2)})
	if err != nil {
		return nil, err
	}
	lock := NewLeaseLock(wh, t.Holder, t.LeaseTTL)
	if hold {
		if err := lock.AcquireContext(ctx); err != nil {
			wh.Close()
			return nil, err
		}
	}
	return &Store{Lock: lock, Warehouse: wh}, nil
}

// OpenStore opens the writer lock of the warehouse at path, takes it when
// hold is true (backfill, demo: a refusal is load.ErrLocked), then opens
// the warehouse with opts. serve passes hold false: each run takes and
// releases the lock, while the lock's descriptor and the warehouse stay
// open for the daemon's life (closing the descriptor would drop SQLite's
// own locks; an open warehouse keeps its WAL for analysts). Every error
// but ErrLocked wraps ErrWarehouse.
func OpenStore(ctx context.Context, path string, opts load.Options, hold bool) (*Store, error) {
	lock, err := sqlite.OpenAccountLock(path, cmp.Or(opts.FileMode, load.DefaultFileMode), cmp.Or(opts.Account, load.DefaultAccount))
	if err != nil {
		return nil, err
	}
	if hold {
		if err := lock.Acquire(); err != nil {
			lock.Close()
			return nil, err
		}
	}
	wh, err := sqlite.Open(ctx, path, opts)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &Store{Lock: lock, Warehouse: wh}, nil
}

// Close closes the warehouse, then the lock (releasing it if held). A
// lease is released first, while the warehouse it lives in is open.
func (s *Store) Close() error {
	if _, ok := s.Lock.(*LeaseLock); ok {
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
}

// Job returns a Job that syncs through client into the store.
func (s *Store) Job(client *extract.Client, log *slog.Logger, o JobOptions) *Job {
	return &Job{
		Client:         client,
		Warehouse:      s.Warehouse,
		Lock:           s.Lock,
		Logger:         log,
		Version:        o.Version,
		AuditRetention: o.AuditRetention,
		FieldRetention: o.FieldRetention,
		Progress:       o.Progress,
		Status:         o.Status,
		Observer:       o.Observer,
	}
}
