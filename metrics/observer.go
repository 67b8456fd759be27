package metrics

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cardsync/cardsync/worker"
)

// RunObserver returns the observer of account's runs (one of
// Options.Accounts), reading the account's facts from w (nil: it reads
// nothing). It is a worker.Observer: it counts each run that ended
// (RunFinished) and then refreshes the account's gauges and /healthz from w
// (Refresh). It is also:
//
//   - a worker.StartObserver: it counts the runs that could not start;
//   - a worker.TickObserver: at every schedule tick, whether or not this
//     process ran the account, it refreshes them from w, so that with
//     replicas sharing a warehouse the last success and the failures in a
//     row are the account's (by any replica), not this replica's (a tick
//     right after a run that refreshed them reads nothing more);
//   - a worker.LeaseObserver: it sets cardsync_lease_held and counts
//     cardsync_runs_skipped_total and cardsync_leases_lost_total.
//
// A failed read of w changes nothing (the gauges and /healthz keep the last
// facts read, and /healthz says since when it cannot read them); it is
// logged at warn when reads start failing, at debug while they go on
// failing, and at info when they work again.
func (m *Metrics) RunObserver(account string, w Warehouse) worker.Observer {
	m.ensure(account)
	return &runObserver{
		m: m, account: account, w: w,
		leaseHeld:  m.leaseHeld.WithLabelValues(account),
		leasesLost: m.leasesLost.WithLabelValues(account),
		skipped:    m.skipped.MustCurryWith(prometheus.Labels{"account": account}),
	}
}

// runObserver is one account's observer; see RunObserver.
type runObserver struct {
	m       *Metrics
	account string
	w       Warehouse

	leaseHeld  prometheus.Gauge
	leasesLost prometheus.Counter
	skipped    *prometheus.CounterVec // reason

	mu sync.Mutex
	// fresh is set by a run's successful refresh and cleared by the next
	// Tick, which then need not read the warehouse again.
	fresh bool
	// failingSince is when reads of w started failing (zero: the last
	// one worked).
	failingSince time.Time
}

var (
	_ worker.StartObserver = (*runObserver)(nil)
	_ worker.TickObserver  = (*runObserver)(nil)
	_ worker.LeaseObserver = (*runObserver)(nil)
)

// RunNotStarted implements worker.StartObserver.
func (o *runObserver) RunNotStarted(string, error) {
	o.m.notStarted.WithLabelValues(o.account).Inc()
}

// RunFinished implements worker.Observer.
func (o *runObserver) RunFinished(ctx context.Context, r worker.Result) {
	o.m.RunFinished(o.account, r)
	if o.refresh(ctx, "after the run") {
		o.mu.Lock()
		o.fresh = true
		o.mu.Unlock()
	}
}

// Tick implements worker.TickObserver: the account's facts are read again
// from the warehouse (every replica's runs), unless the run of this tick
// has just read them.
func (o *runObserver) Tick(ctx context.Context) {
	o.mu.Lock()
	fresh := o.fresh
	o.fresh = false
	o.mu.Unlock()
	if !fresh {
		o.refresh(ctx, "at the schedule tick")
	}
}

// refresh reads the account's facts from the warehouse into the gauges and
// /healthz; it reports whether it did. when says in the log when it read.
func (o *runObserver) refresh(ctx context.Context, when string) bool {
	if o.w == nil {
		return false
	}
	err := o.m.Refresh(ctx, o.w)
	now := o.m.opts.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	log := o.m.opts.Logger
	if err != nil {
		first := o.failingSince.IsZero()
		if first {
			o.failingSince = now
			o.m.setUnread(o.account, now)
		}
		msg := "metrics: cannot read the account's facts from the warehouse " + when + "; /healthz and the gauges keep the last ones read"
		if first && ctx.Err() == nil {
			log.Warn(msg, "account", o.account, "err", err)
		} else {
			log.Debug(msg, "account", o.account, "since", o.failingSince, "err", err)
		}
		return false
	}
	if !o.failingSince.IsZero() {
		log.Info("metrics: the warehouse can be read again", "account", o.account,
			"after", now.Sub(o.failingSince).Round(time.Second).String())
		o.failingSince = time.Time{}
		o.m.setUnread(o.account, time.Time{})
	}
	return true
}

// LeaseHeld implements worker.LeaseObserver.
func (o *runObserver) LeaseHeld(held bool) { o.leaseHeld.Set(boolGauge(held)) }

// LeaseLost implements worker.LeaseObserver.
func (o *runObserver) LeaseLost() { o.leasesLost.Inc() }

// RunSkipped implements worker.LeaseObserver: a reason that is not one of
// SkipReasons counts as other.
func (o *runObserver) RunSkipped(reason string) {
	if !slices.Contains(SkipReasons, reason) {
		reason = "other"
	}
	o.skipped.WithLabelValues(reason).Inc()
}
