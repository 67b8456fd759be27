package metrics

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/worker"
)

// RunObserver returns the observer of account's runs (one of
// Options.Accounts), reading the account's facts from w (nil: it reads
// nothing). It is a worker.Observer: it counts each run that ended
// (RunFinished; a run the warehouse does not record as it ended, fenced off
// when its lease was lost, is left to the replica that marks it abandoned)
// and refreshes the account's gauges and /healthz from w (as Refresh): the
// warehouse's facts win over this replica's view of its run. It is also:
//
//   - a worker.StartObserver: it counts the runs that could not start;
//   - a worker.TickObserver: at every schedule tick, whether or not this
//     process ran the account, it refreshes them from w, so that with
//     replicas sharing a warehouse the last success and the failures in a
//     row are the account's (by any replica), not this replica's;
//   - a worker.LeaseObserver: it sets cardsync_lease_held and counts
//     cardsync_runs_skipped_total and cardsync_leases_lost_total; a lease
//     taken while reads of w fail reads the facts again at once.
//
// A tick costs one small read when w also lists runs (every
// load.Destination does): the account's last load.SummaryRuns runs (their
// ids, statuses and ends), and the whole summary, whose counts grow with
// the account's cards, only when they changed since the summary last read
// (a run started, ended or was marked abandoned, by any replica).
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

// runLister is the cheap read a tick makes first: every load.Destination
// has it.
type runLister interface {
	Runs(ctx context.Context, n int) ([]load.Run, error)
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
	// seen are the runs the last summary read listed (nil: none read yet).
	seen []runMark
	// failingSince is when reads of w started failing (zero: the last
	// one worked).
	failingSince time.Time
}

// runMark is what of a run tells a tick that the summary changed.
type runMark struct {
	id       int64
	status   string
	finished int64 // unix nanoseconds; 0: running
}

// marks are runs' marks.
func marks(runs []load.Run) []runMark {
	out := make([]runMark, len(runs))
	for i, r := range runs {
		out[i] = runMark{id: r.ID, status: r.Status}
		if r.FinishedAt != nil {
			out[i].finished = r.FinishedAt.UnixNano()
		}
	}
	return out
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

// RunFinished implements worker.Observer: the run is counted under its
// status only when the warehouse records it so (or cannot be read, or does
// not list it). A run whose lease was lost is not: the warehouse still has
// it running (its result refused) or already abandoned, and the run that
// marks it abandoned counts it so, as sync_runs.status says. Then the
// warehouse's facts set the gauges and /healthz.
func (o *runObserver) RunFinished(ctx context.Context, r worker.Result) {
	if o.w == nil {
		o.m.RunFinished(o.account, r)
		return
	}
	s, err := o.w.Summary(ctx)
	o.m.runFinished(o.account, r, err != nil || recordedAs(s.Runs, r))
	if err != nil {
		o.failed(ctx, "after the run", fmt.Errorf("metrics refresh: %w", err))
		return
	}
	o.applied(s)
}

// recordedAs reports whether runs record r's run with r's status, or do
// not list it.
func recordedAs(runs []load.Run, r worker.Result) bool {
	for _, w := range runs {
		if w.ID == r.RunID {
			return w.Status == r.Status
		}
	}
	return true
}

// Tick implements worker.TickObserver: the account's facts are read again
// from the warehouse (every replica's runs) if its runs changed.
func (o *runObserver) Tick(ctx context.Context) { o.read(ctx, "at the schedule tick", false) }

// read refreshes the account's gauges and /healthz from the warehouse: the
// whole summary when full, when the warehouse cannot list runs, or when its
// runs changed since the summary last read. when says in the log when.
func (o *runObserver) read(ctx context.Context, when string, full bool) {
	if o.w == nil {
		return
	}
	o.mu.Lock()
	seen := o.seen
	o.mu.Unlock()
	l, ok := o.w.(runLister)
	if !full && ok && seen != nil {
		runs, err := l.Runs(ctx, load.SummaryRuns)
		if err != nil {
			o.failed(ctx, when, err)
			return
		}
		if slices.Equal(marks(runs), seen) {
			o.worked()
			return
		}
	}
	s, err := o.w.Summary(ctx)
	if err != nil {
		o.failed(ctx, when, fmt.Errorf("metrics refresh: %w", err))
		return
	}
	o.applied(s)
}

// applied sets the gauges and /healthz from the summary s just read.
func (o *runObserver) applied(s load.Summary) {
	o.m.apply(s)
	o.mu.Lock()
	o.seen = marks(s.Runs)
	o.mu.Unlock()
	o.worked()
}

// failed notes a failed read: a warning when reads start failing, then
// debug lines (also while ctx ends: the daemon stops).
func (o *runObserver) failed(ctx context.Context, when string, err error) {
	now := o.m.opts.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	first := o.failingSince.IsZero()
	if first {
		o.failingSince = now
		o.m.setUnread(o.account, now)
	}
	msg := "metrics: cannot read the account's facts from the warehouse " + when + "; /healthz and the gauges keep the last ones read"
	if first && ctx.Err() == nil {
		o.m.opts.Logger.Warn(msg, "account", o.account, "err", err)
	} else {
		o.m.opts.Logger.Debug(msg, "account", o.account, "since", o.failingSince, "err", err)
	}
}

// worked notes a read that worked, saying so when reads failed before.
func (o *runObserver) worked() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failingSince.IsZero() {
		return
	}
	o.m.opts.Logger.Info("metrics: the warehouse can be read again", "account", o.account,
		"after", o.m.opts.Now().Sub(o.failingSince).Round(time.Second).String())
	o.failingSince = time.Time{}
	o.m.setUnread(o.account, time.Time{})
}

// leaseReadTimeout bounds the read LeaseHeld makes.
const leaseReadTimeout = 5 * time.Second

// LeaseHeld implements worker.LeaseObserver. A lease taken while reads of
// the warehouse were failing says the warehouse answers again: the facts
// are read at once (bounded by leaseReadTimeout), not at the next tick.
func (o *runObserver) LeaseHeld(held bool) {
	o.leaseHeld.Set(boolGauge(held))
	o.mu.Lock()
	failing := !o.failingSince.IsZero()
	o.mu.Unlock()
	if !held || !failing {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaseReadTimeout)
	defer cancel()
	o.read(ctx, "after the lease was taken", false)
}

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
