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

// Observers tells each of its observers, in turn, what the daemon tells
// one: a finished run to every one, the other hooks (StartObserver,
// TickObserver, LeaseObserver) to those that listen for them; a nil entry
// is skipped. serve gives each account's Job one, with the account's
// metrics and the report refresh.
type Observers []Observer

// RunNotStarted implements StartObserver for those that listen.
func (o Observers) RunNotStarted(what string, err error) {
	for _, x := range o {
		if s, ok := x.(StartObserver); ok {
			s.RunNotStarted(what, err)
		}
	}
}

// RunFinished implements Observer.
func (o Observers) RunFinished(ctx context.Context, r Result) {
	for _, x := range o {
		if x != nil {
			x.RunFinished(ctx, r)
		}
	}
}

// Tick implements TickObserver for those that listen (the metrics read
// the account's facts from the warehouse again).
func (o Observers) Tick(ctx context.Context) {
	for _, x := range o {
		if t, ok := x.(TickObserver); ok {
			t.Tick(ctx)
		}
	}
}

// LeaseHeld implements LeaseObserver for those that listen.
func (o Observers) LeaseHeld(held bool) {
	for _, x := range o {
		if l, ok := x.(LeaseObserver); ok {
			l.LeaseHeld(held)
		}
	}
}

// LeaseLost implements LeaseObserver for those that listen.
func (o Observers) LeaseLost() {
	for _, x := range o {
		if l, ok := x.(LeaseObserver); ok {
			l.LeaseLost()
		}
	}
}

// RunSkipped implements LeaseObserver for those that listen.
func (o Observers) RunSkipped(reason string) {
	for _, x := range o {
		if l, ok := x.(LeaseObserver); ok {
			l.RunSkipped(reason)
		}
	}
}
