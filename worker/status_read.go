package worker

import (
	"context"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
)

// Summarizer is what status reads of an open warehouse: *load.Warehouse
// and *postgres.Warehouse are ones.
type Summarizer interface {
	Summary(ctx context.Context) (load.Summary, error)
}

// PostgresStatusFacts reads the status facts of the account wh is opened
// for: its summary and its lease.
func PostgresStatusFacts(ctx context.Context, wh *postgres.Warehouse, account string) (StatusFacts, error) {
	sum, err := wh.Summary(ctx)
	if err != nil {
		return StatusFacts{}, err
	}
	lease, err := AccountLease(ctx, wh, account)
	if err != nil {
		return StatusFacts{}, err
	}
	return StatusFacts{Summary: sum, Postgres: true, Lease: lease}, nil
}

// AccountLease returns account's lease from the PostgreSQL warehouse (nil
// when no replica ever took it).
func AccountLease(ctx context.Context, wh *postgres.Warehouse, account string) (*LeaseStatus, error) {
	leases, err := wh.Leases(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range leases {
		if l.Account == account {
			return &LeaseStatus{Holder: l.Holder, FencingToken: l.FencingToken, ExpiresAt: rfc(l.ExpiresAt), Expired: l.Expired}, nil
		}
	}
	return nil, nil
}

// SQLiteStatusFacts reads the status facts of account of the SQLite file
// at path, which wh is opened on: its summary, the process holding its run
// lock and the warehouses restore kept beside the file. sole says the
// account is the [api] table's only one.
func SQLiteStatusFacts(ctx context.Context, wh Summarizer, path, account string, sole bool) (StatusFacts, error) {
	sum, err := wh.Summary(ctx)
	if err != nil {
		return StatusFacts{}, err
	}
	kept, err := load.ListBeforeRestore(path)
	if err != nil {
		return StatusFacts{}, err
	}
	return StatusFacts{Summary: sum, LockHolder: FileWriter(path, account, sole), BeforeRestore: kept}, nil
}

// FileWriter is the PID of the process syncing account of the SQLite file
// at path (0: none, -1: one whose PID is unknown). The account's run lock
// says so; a holder whose PID is unknown, or the sole account of an older
// cardsync (its lock is on the whole file), is found by the file's lock.
// A lock that cannot be read counts as none.
func FileWriter(path, account string, sole bool) int {
	holder, _ := load.AccountLockHolder(path, account)
	if holder < 0 || holder == 0 && sole {
		holder, _ = load.LockHolder(path)
	}
	return holder
}
