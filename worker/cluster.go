package worker

import "context"

// TickObserver is an Observer also told of every schedule tick of its
// account, whether or not this process ran the account at that tick (a
// replica that did not hold the account's lease, a run skipped). It is
// called after the tick's run, if any, ended, so the observer can refresh
// what it says about the account from the shared warehouse: the last
// success by any replica, the failures in a row.
type TickObserver interface {
	Tick(ctx context.Context)
}

// LeaseObserver is an Observer also told what happens to its account's
// lease on a shared (PostgreSQL) warehouse.
type LeaseObserver interface {
	// LeaseHeld says whether this replica holds the account's lease now
	// (taken, kept between runs, released or lost).
	LeaseHeld(held bool)
	// LeaseLost is told once each time a lease this replica held was
	// lost (a renewal refused, a commit fenced off, the TTL passed).
	LeaseLost()
	// RunSkipped is told of a scheduled run this replica did not start,
	// with a bounded reason: SkipLeaseHeld, SkipLocked, SkipOverShare.
	RunSkipped(reason string)
}

// The reasons LeaseObserver.RunSkipped is told, the values of the
// reason label of cardsync_runs_skipped_total.
const (
	// SkipLeaseHeld: another replica holds the account's lease.
	SkipLeaseHeld = "lease_held"
	// SkipLocked: another process holds the account's run lock (a file).
	SkipLocked = "locked"
	// SkipOverShare: this replica already holds its share of the
	// accounts and another live replica has room.
	SkipOverShare = "over_share"
)
