package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
)

// CredentialsAdvice is what to check when the API refuses the credentials:
// the same words wherever cardsync says so (a run's log, check).
const CredentialsAdvice = "check api.email, the password and that the user is an Administrator"

// LoggedError is returned by Run for a failure Run has already logged at
// error level with its cause: a caller that also prints errors can skip it
// and still branch on the error it wraps.
type LoggedError struct{ Err error }

// Error implements error.
func (e *LoggedError) Error() string { return e.Err.Error() }

// Unwrap returns the logged error.
func (e *LoggedError) Unwrap() error { return e.Err }

// Logged reports whether err was already logged by Run.
func Logged(err error) bool {
	var le *LoggedError
	return errors.As(err, &le)
}

// startFailures counts runs that failed before their sync_runs row existed
// (lock, warehouse refusing the first writes), for the daemon's health.
type startFailures struct{ n atomic.Int64 }

// StartFailures returns how many runs of this Job could not start: the
// warehouse lock could not be taken for another reason than a running sync,
// or the warehouse refused the run's first writes. Each was logged at error
// level with its cause.
func (j *Job) StartFailures() int64 { return j.starts.n.Load() }

// Run performs one sync: lock, stale-run recovery, the run row, a start
// line, authentication, the account snapshot, the card walk from the
// checkpoint, removal bookkeeping after a complete walk (a card is marked
// removed when two consecutive consistent walks miss it), the run's result
// and an end line. Every line it and the client log carries the run's id. A
// failure before the run row exists is logged at error level and counted
// (StartFailures); another sync holding the lock is logged at warn.
func (j *Job) Run(ctx context.Context, trigger string, opts Options) (res Result, err error) {
	log := j.logger().With("trigger", trigger)
	start := j.now()
	if j.Lock == nil {
		return res, fmt.Errorf("%w: no writer lock", ErrWarehouse)
	}
	if !j.Lock.Held() {
		if err := j.lock(ctx, log); err != nil {
			return res, err
		}
		defer j.Lock.Release()
	}
	// A lease lapses unless renewed: keep it while the run goes on, and
	// stop the run (ctx's cause wraps ErrLeaseLost) once it may have
	// lapsed.
	if k, ok := j.Lock.(interface {
		Keep(context.Context) (context.Context, func())
	}); ok {
		var stop func()
		ctx, stop = k.Keep(ctx)
		defer stop()
	}
	if err := j.checkFile(ctx, log); err != nil {
		return res, err
	}
	if err := j.recordPending(ctx, log); err != nil {
		return res, j.startFailed(log, "record the result of an earlier run", err)
	}
	if err := j.abandonStale(ctx, log, &res); err != nil {
		return res, err
	}
	// The run's duration (sync_runs.duration_ms) is measured on the
	// monotonic clock, whatever j.Now says: from its row to its result.
	rowAt := time.Now()
	runID, err := j.Warehouse.StartRun(ctx, trigger, j.Version)
	if err != nil {
		return res, j.startFailed(log, "record the run", err)
	}
	res.RunID, res.Trigger = runID, trigger
	log = log.With("run_id", runID)
	client := j.Client.WithLogger(log)
	if c, ok := j.Lock.(interface{ Check() error }); ok {
		// The lease is checked again right before each request leaves.
		client = client.WithGate(c.Check)
	}
	delta := &statsDelta{c: j.Client, last: j.Client.Stats()}
	defer func() { err = j.end(ctx, log, runID, runTimes{start, rowAt}, delta, &res, err) }()

	first, err := j.begin(ctx, log, opts, &res)
	if err != nil {
		return res, err
	}
	if err := client.Authenticate(ctx); err != nil {
		return res, err
	}
	if err := j.snapshotAccount(ctx, client, log, runID, &res); err != nil {
		return res, err
	}
	j.markProgress()
	if err := j.walk(ctx, client, log, runID, first, delta, &res); err != nil {
		return res, err
	}
	// finishWalk updates res: call it before res is read (in one return
	// statement the spec leaves that order to the compiler).
	err = j.finishWalk(ctx, log, runID, opts, &res)
	return res, err
}

// lock takes the warehouse lock for a run. Another sync or replica holding
// it is logged (a replica's lease at debug: replicas sharing a database
// meet it every tick), told to the observer (LeaseObserver.RunSkipped) and
// returned as logged; any other failure is a start failure.
func (j *Job) lock(ctx context.Context, log *slog.Logger) error {
	err := acquire(ctx, j.Lock)
	if err == nil {
		return nil
	}
	o, _ := j.Observer.(LeaseObserver)
	var held *load.LeaseHeldError
	switch {
	case errors.As(err, &held):
		// Replicas sharing a database meet this every tick: it is
		// how they split the accounts.
		log.Debug("run skipped: another replica holds the account's lease", "holder", held.Holder,
			"expires_at", held.ExpiresAt.UTC().Format(time.RFC3339))
		if o != nil {
			o.RunSkipped(SkipLeaseHeld)
		}
		return &LoggedError{err}
	case errors.Is(err, load.ErrLocked):
		log.Warn("run skipped: another sync holds the warehouse", "err", err)
		if o != nil {
			o.RunSkipped(SkipLocked)
		}
		return &LoggedError{err}
	}
	return j.startFailed(log, "take the warehouse lock", err)
}

// checkFile checks the warehouse file before a run. The path must still
// name the file open here, and it must be writable: a warehouse deleted,
// replaced or made read-only under a running daemon is repaired now,
// loudly, instead of failing silently.
func (j *Job) checkFile(ctx context.Context, log *slog.Logger) error {
	w := j.Warehouse
	fc, ok := w.(load.FileChecker)
	if !ok {
		if err := w.Writable(ctx); err != nil {
			return j.startFailed(log, "check the warehouse", err)
		}
		return nil
	}
	ev, msg, err := fc.Verify(ctx)
	if err != nil {
		return j.startFailed(log, "check the warehouse file", err)
	}
	switch {
	case ev == load.FileReopened:
		log.Warn(msg)
	case ev.Changed():
		log.Error(msg)
		if err := j.Lock.Reopen(); err != nil {
			return j.startFailed(log, "lock the warehouse file now at "+w.Path(), err)
		}
	}
	return nil
}

// abandonStale marks abandoned the runs left running. Holding the lock
// means no other process is walking: every row still marked running
// belongs to a process that died.
func (j *Job) abandonStale(ctx context.Context, log *slog.Logger, res *Result) error {
	stale, err := j.Warehouse.AbandonStaleRuns(ctx, 0)
	if err != nil {
		return j.startFailed(log, "mark stale runs", err)
	}
	if len(stale) > 0 {
		ids := make([]int64, len(stale))
		for i, r := range stale {
			ids[i] = r.ID
			res.Abandoned = append(res.Abandoned, r.Trigger)
		}
		log.Warn("runs left running by a process that died marked abandoned; the walk resumes from their checkpoint", "run_ids", ids)
	}
	return nil
}

// begin finds the page the walk starts from (the checkpoint's, unless a
// restart resets it) and logs the run's start line.
func (j *Job) begin(ctx context.Context, log *slog.Logger, opts Options, res *Result) (int, error) {
	w := j.Warehouse
	if opts.Restart {
		if err := w.ResetCheckpoint(ctx, Stream); err != nil {
			return 0, err
		}
	}
	cp, err := w.Checkpoint(ctx, Stream)
	if err != nil {
		return 0, err
	}
	first := 1
	if cp.InProgress && cp.NextPage > 1 {
		first = cp.NextPage
		res.Resumed = true
	}
	res.StartPage = first
	startAttrs := []any{"first_page", first, "version", j.Version}
	if l, ok := j.Lock.(*LeaseLock); ok {
		startAttrs = append(startAttrs, "holder", l.Holder())
	}
	if res.Resumed {
		startAttrs = append(startAttrs, "resumes_walk_of_run", cp.RunID, "total_pages", cp.TotalPages)
	}
	if opts.Restart {
		startAttrs = append(startAttrs, "restart", true)
	}
	if opts.ConfirmRemovals {
		startAttrs = append(startAttrs, "confirm_removals", true)
	}
	log.Info("run started", startAttrs...)
	j.markProgress()
	return first, nil
}

// startFailed logs a failure that came before the run row existed, counts
// it, and returns it marked as logged.
func (j *Job) startFailed(log *slog.Logger, what string, err error) error {
	j.starts.n.Add(1)
	log.Error("run could not start: "+what+" failed", "err", err)
	if o, ok := j.Observer.(StartObserver); ok {
		o.RunNotStarted(what, err)
	}
	return &LoggedError{err}
}

// runTimes are when a run started: start by j.now (before the lock),
// row on the monotonic clock (before its sync_runs row).
type runTimes struct{ start, row time.Time }

// end records how the run ended (with retries), prunes the audit,
// runs the WAL checkpoint and logs the end line. It returns the run's error,
// marked as logged.
func (j *Job) end(ctx context.Context, log *slog.Logger, runID int64, at runTimes, delta *statsDelta, res *Result, err error) error {
	res.Duration = j.now().Sub(at.start)
	tail := delta.take()
	res.Requests += tail.Requests
	res.Retries += tail.Retries
	res.RateLimited += tail.RateLimited
	res.AuthRequests += tail.AuthRequests
	status, msg, err := endStatus(ctx, err)
	res.Status = status
	rr := load.RunResult{
		Status: status,
		// The client already scrubbed upstream text where it came in;
		// this pass catches anything else (and pieces of secrets).
		Error:        j.Client.Scrub(msg),
		Requests:     tail.Requests,
		Retries:      tail.Retries,
		RateLimited:  tail.RateLimited,
		AuthRequests: tail.AuthRequests,
		Duration:     time.Since(at.row),
	}
	if res.WalkComplete {
		c := res.WalkConsistent
		rr.WalkConsistent = &c
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	if ferr := j.record(fctx, log, runID, rr); ferr != nil && err == nil {
		err = ferr
		res.Status = load.StatusFailed
	}
	j.prune(fctx, log, err == nil && res.WalkComplete)
	if o, ok := j.Warehouse.(load.Optimizer); ok {
		if oerr := o.Optimize(fctx); oerr != nil {
			log.Debug("wal checkpoint after run", "err", oerr)
		}
	}
	if j.Observer != nil {
		j.Observer.RunFinished(fctx, *res)
	}
	return logEnd(log, res, err)
}

// endStatus says how a run that returned err ended: its status, the
// message sync_runs keeps, and its error, marked as interrupted or as a
// lost lease when ctx's end was why.
func endStatus(ctx context.Context, err error) (status, msg string, _ error) {
	switch {
	case err == nil:
		return load.StatusSucceeded, "", nil
	case errors.Is(context.Cause(ctx), ErrLeaseLost):
		// The lease may have lapsed: not an operator's interruption, and
		// the replica that takes over resumes from the checkpoint.
		msg = context.Cause(ctx).Error() + ": " + err.Error()
		if !errors.Is(err, ErrLeaseLost) {
			err = fmt.Errorf("%w: %w", context.Cause(ctx), err)
		}
		return load.StatusFailed, msg, err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// A run deadline (serve's run_timeout) is a failure, not an
		// interruption: a run that always times out must show as failing.
		return load.StatusFailed, context.Cause(ctx).Error() + ": " + err.Error(), err
	case ctx.Err() != nil:
		msg = "interrupted: " + context.Cause(ctx).Error()
		if !errors.Is(err, ErrInterrupted) {
			err = fmt.Errorf("%w: %w", ErrInterrupted, err)
		}
		return load.StatusInterrupted, msg, err
	default:
		return load.StatusFailed, err.Error(), err
	}
}

// prune deletes the page audit past warehouse.audit_retention and, after
// a complete walk that succeeded (it stamped every field the account's
// cards hold), the card fields not seen within warehouse.field_retention.
// A failure is logged: the run's result stands.
func (j *Job) prune(ctx context.Context, log *slog.Logger, fields bool) {
	w := j.Warehouse
	if j.AuditRetention > 0 {
		if n, perr := w.PruneAudit(ctx, j.now().Add(-j.AuditRetention)); perr != nil {
			log.Warn("prune page audit", "err", perr)
		} else if n > 0 {
			log.Debug("pruned page audit rows", "rows", n, "older_than", j.AuditRetention)
		}
	}
	if fields {
		retention := j.FieldRetention
		if retention <= 0 {
			retention = load.DefaultFieldRetention
		}
		if n, perr := w.PruneFields(ctx, j.now().Add(-retention)); perr != nil {
			log.Warn("prune card fields", "err", perr)
		} else if n > 0 {
			log.Info("pruned card fields not seen within warehouse.field_retention; their cards_flat columns are gone, their values stay in the cards' data",
				"fields", n, "older_than", retention)
		}
	}
}

// logEnd logs the run's end line, at a level and with words that fit how
// it ended, and returns its error marked as logged.
func logEnd(log *slog.Logger, res *Result, err error) error {
	attrs := []any{"status", res.Status, "pages", res.Pages, "cards", res.Cards,
		"new", res.New, "changed", res.Changed, "returned", res.Returned, "unchanged", res.Unchanged, "removed", res.Removed,
		"rejected", res.Rejected, "requests", res.Requests, "retries", res.Retries, "rate_limited", res.RateLimited,
		"auth_requests", res.AuthRequests, "duration", res.Duration.Round(time.Millisecond)}
	if res.WalkComplete {
		attrs = append(attrs, "walk_consistent", res.WalkConsistent, "pending_removals", res.PendingRemovals, "removals_held", res.RemovalsHeld)
	}
	switch {
	case err == nil:
		log.Info("run finished", attrs...)
		return nil
	case res.Status == load.StatusInterrupted:
		log.Warn("run interrupted; the next run resumes from the checkpoint", attrs...)
	case errors.Is(err, ErrLeaseLost):
		log.Error("run stopped: this replica lost the account's lease (paused or cut off past [cluster] lease_ttl, or another replica took it over); a commit it refused wrote nothing, and the holder of the lease resumes from the checkpoint",
			append(attrs, "err", err)...)
	case errors.Is(err, extract.ErrUnauthenticated):
		log.Error("run failed: the API refused the credentials; "+CredentialsAdvice, append(attrs, "err", err)...)
	default:
		log.Error("run failed; the next run resumes from the checkpoint", append(attrs, "err", err)...)
	}
	return &LoggedError{err}
}

// acquire takes lock for a run, with ctx when the lock can use one (a
// lease's statement).
func acquire(ctx context.Context, lock RunLock) error {
	if c, ok := lock.(interface{ AcquireContext(context.Context) error }); ok {
		return c.AcquireContext(ctx)
	}
	return lock.Acquire()
}
