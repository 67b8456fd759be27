package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cardsync/cardsync/load"
)

// Daemon runs the jobs of its accounts on a schedule until its context
// ends: `cardsync serve`. Every account has a schedule loop of its own (a
// single account is a list of one), so a slow, stuck or failing account
// never delays another, and an account's runs never overlap (a slot due
// while its run is in progress is skipped). The accounts share the
// daemon's Schedule, RunOnStart and RunTimeout. Scheduled backups are taken
// between runs, for any number of accounts: a backup due while runs are in
// progress is taken when they end, and a run due during a backup (or while
// one waits for the runs in progress) starts when it ends; neither is
// skipped for the other. SIGHUP (Hup) reloads the configuration, which
// each account uses from its next run on. Under systemd it reports
// READY=1, STATUS=, STOPPING=1 and feeds the watchdog only while every
// running account makes progress. A stop cancels every run and waits for
// each up to StopTimeout.
type Daemon struct {
	// Jobs are the jobs of the accounts, one each (see Job.Account), in
	// the configuration's order. Reload may replace them between runs.
	Jobs []*Job
	// Schedule says when runs are due, in the configured time zone.
	Schedule Schedule
	// RunOnStart runs every account once at start, before its first
	// scheduled run.
	RunOnStart bool
	// RunTimeout bounds one run; a run past it is cancelled and failed.
	RunTimeout time.Duration
	// Logger receives the daemon's own lines (runs log through Job.Logger).
	Logger *slog.Logger
	// Notify sends one sd_notify state ("READY=1"); nil sends nothing.
	Notify func(state string) error
	// Watchdog is how often WATCHDOG=1 is sent while the daemon makes
	// progress (half of systemd's WatchdogSec); 0 sends none.
	Watchdog time.Duration
	// Hup delivers reload requests (SIGHUP).
	Hup <-chan struct{}
	// Reload builds the configuration to use from the next run on; an error
	// keeps the current one. nil: reload requests are logged and ignored.
	Reload func(ctx context.Context) (Config, error)
	// StopTimeout bounds how long a stop waits for the runs in progress
	// (systemd's TimeoutStopSec is 30s in the shipped unit).
	StopTimeout time.Duration
	// Backups, when set with a Take and a Schedule, takes backups between
	// runs (see Backups); nil: none.
	Backups *Backups

	mu      sync.Mutex // guards the fields Reload replaces, and backups
	backups BackupStats
	// accounts are the per-account loops; reloaded is closed and replaced
	// by each reload, waking the loops waiting for a slot.
	accounts []*accountLoop
	reloaded chan struct{}
	// scheduleGen counts the reloads that replaced Schedule: a loop keeps
	// its next slot across a reload that left the schedule alone.
	scheduleGen int
	// named: the accounts are named in STATUS lines and errors (several,
	// or one of its own rather than load.DefaultAccount).
	named bool
	// gate keeps backups and runs apart.
	gate runGate
	// replicas is the daemon's part in a shared warehouse (PostgreSQL):
	// heartbeat and sticky leases; nil with SQLite.
	replicas *replicas
}

// Config is what a reload replaces.
type Config struct {
	// Jobs replaces Daemon.Jobs: the same accounts, in the same order
	// (adding or removing an account needs a restart); nil keeps them.
	Jobs []*Job
	// Schedule, when not nil, replaces the schedule: the next run follows
	// it from the reload on. nil keeps the schedule in use and the time of
	// the next run, so reloads (of any other key, however often) never move
	// or starve the runs.
	Schedule Schedule
	// RunTimeout, when positive, replaces Daemon.RunTimeout.
	RunTimeout time.Duration
	// Logger, when not nil, replaces Daemon.Logger.
	Logger *slog.Logger
	// Backups, when not nil, replaces the daemon's backup plan; a plan
	// without Take or Schedule turns scheduled backups off.
	Backups *Backups
	// Changes describes what changed, for the log line.
	Changes string
}

// DefaultStopTimeout is Daemon.StopTimeout's default.
const DefaultStopTimeout = 20 * time.Second

// accountLoop is the state of one account's schedule loop, read by the
// watchdog.
type accountLoop struct {
	index   int
	running atomic.Bool
	// job is the job of the run in progress (or of the last one).
	job atomic.Pointer[Job]
	// lease is the account's run lock when it is a lease (nil: a file).
	lease *LeaseLock
	// busy is held by the loop from a run's claim to its end, so the
	// lease watcher never renews, takes or hands back a lease meanwhile.
	busy sync.Mutex
	// wake asks the loop to run at once (a lapsed lease taken over).
	wake chan struct{}
	// reported is the lease state last told to the observer.
	reported bool
	// freeSince is when the lease watcher first saw the account free;
	// keep marks an account it took beyond its share, never handed back
	// (freeSince is the watcher's alone; keep is read at a run's end too).
	freeSince time.Time
	keep      atomic.Bool
}

func (d *Daemon) logger() *slog.Logger {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.loggerLocked()
}

func (d *Daemon) loggerLocked() *slog.Logger {
	if d.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Logger
}

func (d *Daemon) notify(state string) {
	if d.Notify != nil {
		_ = d.Notify(state)
	}
}

// Run runs the daemon until ctx ends. It returns nil after a clean stop,
// and an error when a run in progress did not stop within StopTimeout.
func (d *Daemon) Run(ctx context.Context) error {
	if len(d.Jobs) == 0 || d.Schedule == nil {
		return errors.New("daemon: no job or schedule")
	}
	if err := d.checkJobs(nil); err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	stopTimeout := d.StopTimeout
	if stopTimeout <= 0 {
		stopTimeout = DefaultStopTimeout
	}
	d.start()
	// A replica that finds another live process serving with its holder
	// (it was paused past its heartbeat and one started since) stops:
	// the cause ends every loop, and Run returns it.
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	stopWatch, err := d.startReplicas(ctx, fail)
	if err != nil {
		return err
	}
	if d.Watchdog > 0 {
		go d.feedWatchdog(ctx)
	}
	d.notify("READY=1")
	var wg sync.WaitGroup
	errs := make([]error, len(d.accounts))
	for i, a := range d.accounts {
		wg.Go(func() { errs[i] = d.accountSchedule(ctx, a, stopTimeout) })
	}
	d.control(ctx)
	wg.Wait()
	stopWatch()
	var in *load.HolderInUseError
	if errors.As(context.Cause(ctx), &in) {
		errs = append(errs, &LoggedError{in})
	}
	return errors.Join(errs...)
}

// start sets up the accounts' loops.
func (d *Daemon) start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reloaded = make(chan struct{})
	d.named = len(d.Jobs) > 1 || d.Jobs[0].Account() != load.DefaultAccount
	d.accounts = make([]*accountLoop, len(d.Jobs))
	for i, j := range d.Jobs {
		d.accounts[i] = &accountLoop{index: i, wake: make(chan struct{}, 1)}
		d.accounts[i].job.Store(j)
		d.accounts[i].lease = j.Lease
	}
	d.replicas = newReplicas(d)
}

// control is the daemon's own loop: it handles reload requests and takes
// the backups, between runs, until ctx ends.
func (d *Daemon) control(ctx context.Context) {
	var nextBackup time.Time // the slot waited for; zero: compute from now
	for {
		if ctx.Err() != nil {
			d.stopping(ctx)
			return
		}
		backups := d.backupPlan()
		var wake <-chan time.Time
		stop := func() {}
		if backups != nil {
			if nextBackup.IsZero() {
				nextBackup = backups.Schedule.Next(time.Now())
			}
			t := time.NewTimer(time.Until(nextBackup))
			stop = func() { t.Stop() }
			wake = t.C
		}
		select {
		case <-ctx.Done():
			stop()
		case <-d.Hup:
			stop()
			d.reload(ctx)
			// A backup that fell due before the reload is still owed;
			// future slots follow the new plan.
			if nextBackup.After(time.Now()) {
				nextBackup = time.Time{}
			}
		case <-wake:
			if d.gate.startBackup(ctx) {
				d.backupOnce(ctx, backups)
				d.gate.endBackup()
			}
			nextBackup = time.Time{}
		}
	}
}

func (d *Daemon) stopping(ctx context.Context) {
	d.logger().Info("stopping", "cause", context.Cause(ctx))
	d.notify("STOPPING=1")
}

// accountConfig is the configuration of account i in use, with the
// generation of its schedule (see Daemon.scheduleGen).
func (d *Daemon) accountConfig(i int) (*Job, Schedule, int, time.Duration, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.Jobs[i], d.Schedule, d.scheduleGen, d.RunTimeout, d.reloaded
}

// FirstRun is when the daemon started at now runs first: at once with
// RunOnStart, else at NextRun from now (the start-up log line's next_run).
func (d *Daemon) FirstRun(now time.Time) time.Time {
	if d.RunOnStart {
		return now
	}
	return NextRun(d.Schedule, now)
}

// accountSchedule is one account's loop: wait for its slot, run, repeat. A
// reload that replaced the schedule moves the slot to the new schedule's
// next one; any other reload keeps it.
func (d *Daemon) accountSchedule(ctx context.Context, a *accountLoop, stopTimeout time.Duration) error {
	runNow := d.RunOnStart
	var next time.Time // the slot waited for; zero: compute from now
	gen := -1
	for {
		job, sched, g, runTimeout, reloaded := d.accountConfig(a.index)
		if g != gen {
			next, gen = time.Time{}, g
		}
		if !runNow {
			if next.IsZero() {
				// From now: the daemon's start, a reload's new schedule, or
				// the end of the run just done.
				next = NextRun(sched, time.Now())
			}
			d.notify(d.statusPrefix(job) + "idle; next run " + next.UTC().Format(time.RFC3339))
			job.logger().Debug("waiting for the next scheduled run", "next_run", next.UTC().Format(time.RFC3339))
			timer := time.NewTimer(time.Until(next))
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil
			case <-reloaded:
				timer.Stop()
				continue
			case <-a.wake:
				// A lapsed lease taken over: run at once.
				timer.Stop()
			case <-timer.C:
			}
		}
		runNow, next = false, time.Time{}
		if err := d.tick(ctx, a, job, runTimeout, stopTimeout); err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// tick is a scheduled run of a's account: run when this replica holds (or
// takes) its lease, else skipped and the observer told why; then the
// observer is told of the tick either way.
func (d *Daemon) tick(ctx context.Context, a *accountLoop, job *Job, runTimeout, stopTimeout time.Duration) error {
	var err error
	a.busy.Lock()
	if ok, reason := d.replicas.claim(ctx, a, job); ok {
		err = d.accountRun(ctx, a, job, runTimeout, stopTimeout)
		d.replicas.settle(ctx, a)
	} else if o, ok := job.Observer.(LeaseObserver); ok {
		o.RunSkipped(reason)
	}
	a.busy.Unlock()
	if d.replicas != nil {
		d.replicas.report(a)
	}
	if t, ok := job.Observer.(TickObserver); ok && ctx.Err() == nil {
		t.Tick(ctx)
	}
	return err
}

// accountRun runs job once, once no backup is in progress, and waits for
// it; when ctx ends, the run is cancelled (it commits the page in hand and
// is recorded interrupted) and waited for at most stopTimeout.
func (d *Daemon) accountRun(ctx context.Context, a *accountLoop, job *Job, runTimeout, stopTimeout time.Duration) error {
	if !d.gate.startRun(ctx) {
		return nil
	}
	defer d.gate.endRun()
	log := job.logger()
	prefix := d.statusPrefix(job)
	d.notify(prefix + "syncing")
	a.job.Store(job)
	r := startRun(ctx, job, log, runTimeout, &a.running)
	defer r.cancel()
	select {
	case <-r.done:
		d.notify(prefix + r.status())
		return nil
	case <-ctx.Done():
		// The control loop says "stopping"; the caller "stopped cleanly".
		if err := r.stop(log, stopTimeout); err != nil {
			if d.named {
				return fmt.Errorf("account %s: %w", job.Account(), err)
			}
			return err
		}
		return nil
	}
}

// statusPrefix starts the STATUS= lines of job's account: "STATUS=account
// NAME: " when the accounts are named, "STATUS=" for the one default
// account.
func (d *Daemon) statusPrefix(job *Job) string {
	if !d.named {
		return "STATUS="
	}
	return "STATUS=account " + job.Account() + ": "
}

// reload asks for a new configuration and applies it; a failed reload
// keeps the current configuration and says why. The runs in progress keep
// the configuration they started with.
func (d *Daemon) reload(ctx context.Context) {
	log := d.logger()
	if d.Reload == nil {
		log.Warn("reload requested but not supported; restart to apply a new configuration")
		return
	}
	cfg, err := d.Reload(ctx)
	if err == nil {
		err = d.checkJobs(cfg.Jobs)
	}
	if err != nil {
		log.Error("reload failed; the current configuration stays in use", "err", err)
		d.notify("STATUS=reload failed: " + err.Error())
		return
	}
	d.mu.Lock()
	if cfg.Schedule != nil {
		d.Schedule = cfg.Schedule
		d.scheduleGen++
	}
	if cfg.RunTimeout > 0 {
		d.RunTimeout = cfg.RunTimeout
	}
	if cfg.Logger != nil {
		d.Logger = cfg.Logger
	}
	if cfg.Backups != nil {
		d.Backups = cfg.Backups
	}
	if cfg.Jobs != nil {
		d.Jobs = cfg.Jobs
	}
	close(d.reloaded)
	d.reloaded = make(chan struct{})
	log = d.loggerLocked()
	d.mu.Unlock()
	log.Info("configuration reloaded", "changes", cfg.Changes, "schedule_kept", cfg.Schedule == nil)
}

// feedWatchdog sends WATCHDOG=1 every d.Watchdog while the daemon makes
// progress: every account's run in progress is within the time its
// current request or last commit may take (idle accounts always are). A
// run stuck past that stops the pings, and systemd restarts the service.
func (d *Daemon) feedWatchdog(ctx context.Context) {
	t := time.NewTicker(d.Watchdog)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			job := d.stuckAccount(now)
			if job == nil {
				d.notify("WATCHDOG=1")
				continue
			}
			d.logger().Error("the run in progress has made no progress in the time its requests may take; not feeding the watchdog",
				"account", job.Account(), "progress_deadline", job.ProgressDeadline().UTC().Format(time.RFC3339))
		}
	}
}

// stuckAccount returns the job of an account whose run in progress is past
// its progress deadline, nil when every running account progresses.
func (d *Daemon) stuckAccount(now time.Time) *Job {
	for _, a := range d.accounts {
		if j := a.job.Load(); a.running.Load() && !now.Before(j.ProgressDeadline()) {
			return j
		}
	}
	return nil
}

// checkJobs checks that jobs (a reload's; nil: d.Jobs itself) name the
// accounts of d.Jobs, each once, in the same order.
func (d *Daemon) checkJobs(jobs []*Job) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	names := func(js []*Job) []string {
		var n []string
		for _, j := range js {
			n = append(n, j.Account())
		}
		return n
	}
	have := names(d.Jobs)
	for i, n := range have {
		if slices.Contains(have[:i], n) {
			return fmt.Errorf("account %q has two jobs", n)
		}
	}
	if jobs == nil {
		return nil
	}
	if want := names(jobs); !slices.Equal(want, have) {
		return fmt.Errorf("the accounts changed from %v to %v: adding, removing or renaming an account needs a restart", have, want)
	}
	return nil
}
