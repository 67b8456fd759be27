package worker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Daemon runs a Job on a schedule until its context ends: `cardsync serve`.
// Runs happen one at a time in the daemon's loop, so they never overlap; a
// run due while another runs is skipped. SIGHUP (Hup) reloads the
// configuration between runs. Under systemd it reports READY=1, STATUS=,
// STOPPING=1 and feeds the watchdog only while it makes progress.
type Daemon struct {
	// Job is what each run does. Reload may replace it between runs.
	Job *Job
	// Schedule says when runs are due, in the configured time zone.
	Schedule Schedule
	// RunOnStart runs once at start, before the first scheduled run.
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
	// StopTimeout bounds how long a stop waits for the run in progress
	// (systemd's TimeoutStopSec is 30s in the shipped unit).
	StopTimeout time.Duration
	// Backups, when set with a Take and a Schedule, takes backups between
	// runs (see Backups); nil: none.
	Backups *Backups
	// Jobs, when not empty, are the jobs of several accounts (one each, see
	// Job.Account), synced concurrently in place of Job: see Accounts.
	Jobs []*Job

	running atomic.Bool
	mu      sync.Mutex // guards the fields Reload replaces, and backups
	backups BackupStats
	// accounts are the per-account loops (with Jobs); reloaded is closed
	// and replaced by each reload, waking the loops waiting for a slot.
	accounts []*accountLoop
	reloaded chan struct{}
	// scheduleGen counts the reloads that replaced Schedule: a loop keeps
	// its next slot across a reload that left the schedule alone.
	scheduleGen int
}

// Config is what a reload replaces.
type Config struct {
	Job *Job
	// Jobs replaces Daemon.Jobs: the same accounts, in the same order
	// (adding or removing an account needs a restart).
	Jobs []*Job
	// Schedule, when not nil, replaces the schedule: the next run follows
	// it from the reload on. nil keeps the schedule in use and the time of
	// the next run, so reloads (of any other key, however often) never move
	// or starve the runs.
	Schedule   Schedule
	RunTimeout time.Duration
	Logger     *slog.Logger
	// Backups, when not nil, replaces the daemon's backup plan; a plan
	// without Take or Schedule turns scheduled backups off.
	Backups *Backups
	// Changes describes what changed, for the log line.
	Changes string
}

// DefaultStopTimeout is Daemon.StopTimeout's default.
const DefaultStopTimeout = 20 * time.Second

func (d *Daemon) logger() *slog.Logger {
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

// current returns the configuration in use.
func (d *Daemon) current() (*Job, Schedule, time.Duration, *slog.Logger) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.Job, d.Schedule, d.RunTimeout, d.logger()
}

// Run runs the daemon until ctx ends. It returns nil after a clean stop,
// and an error when the run in progress did not stop within StopTimeout.
func (d *Daemon) Run(ctx context.Context) error {
	if len(d.Jobs) > 0 {
		return d.runAccounts(ctx)
	}
	if d.Job == nil || d.Schedule == nil {
		return errors.New("daemon: no job or schedule")
	}
	stopTimeout := d.StopTimeout
	if stopTimeout <= 0 {
		stopTimeout = DefaultStopTimeout
	}
	if d.Watchdog > 0 {
		go d.feedWatchdog(ctx)
	}
	d.notify("READY=1")
	pendingReload := false
	// nextRun and nextBackup are the slots waited for; zero: compute from
	// now. A backup due during a run is taken when the run ends; a run due
	// during a backup starts when the backup ends: neither is skipped for
	// the other.
	var nextRun, nextBackup time.Time
	if b := d.backupPlan(); b != nil {
		nextBackup = b.Schedule.Next(time.Now())
	}
	if d.RunOnStart {
		if stopped, err := d.runOnce(ctx, stopTimeout, &pendingReload); err != nil || stopped {
			return err // stopped during the run: said once, in runOnce
		}
	}
	for {
		if pendingReload {
			pendingReload = false
			// A new schedule starts from the reload; an unchanged one keeps
			// its phase. A backup that fell due meanwhile (during the run
			// that held the reload) is still owed; future backup slots
			// follow the new plan.
			if d.reload(ctx) {
				nextRun = time.Time{}
			}
			if nextBackup.After(time.Now()) {
				nextBackup = time.Time{}
			}
		}
		_, sched, _, log := d.current()
		backups := d.backupPlan()
		now := time.Now()
		if nextRun.IsZero() {
			nextRun = sched.Next(now)
		}
		wake, backupDue := nextRun, false
		if backups != nil {
			if nextBackup.IsZero() {
				nextBackup = backups.Schedule.Next(now)
			}
			if nextBackup.Before(nextRun) {
				wake, backupDue = nextBackup, true
			}
		}
		d.notify("STATUS=idle; next run " + nextRun.UTC().Format(time.RFC3339))
		log.Debug("waiting for the next scheduled run", "next_run", nextRun.UTC().Format(time.RFC3339))
		timer := time.NewTimer(wake.Sub(now))
		select {
		case <-ctx.Done():
			timer.Stop()
			d.stopping(ctx)
			return nil
		case <-d.Hup:
			timer.Stop()
			pendingReload = true
		case <-timer.C:
			if backupDue {
				d.backupOnce(ctx, backups)
				nextBackup = time.Time{}
				if ctx.Err() != nil {
					d.stopping(ctx)
					return nil
				}
				continue
			}
			nextRun = time.Time{}
			if stopped, err := d.runOnce(ctx, stopTimeout, &pendingReload); err != nil || stopped {
				return err // stopped during the run: said once, in runOnce
			}
		}
	}
}

func (d *Daemon) stopping(ctx context.Context) {
	d.logger().Info("stopping", "cause", context.Cause(ctx))
	d.notify("STOPPING=1")
}

// runOnce runs the job once and waits for it; a reload request meanwhile
// is kept for after the run. stopped reports that ctx had ended (runOnce
// then said STOPPING=1): a cancellation it did not see is the idle wait's. When ctx ends, the run is cancelled (it
// commits the page in hand and is recorded interrupted) and waited for at
// most stopTimeout.
func (d *Daemon) runOnce(ctx context.Context, stopTimeout time.Duration, pendingReload *bool) (stopped bool, err error) {
	job, _, runTimeout, log := d.current()
	if ctx.Err() != nil {
		d.stopping(ctx)
		return true, nil
	}
	d.notify("STATUS=syncing")
	r := startRun(ctx, job, log, runTimeout, &d.running)
	defer r.cancel()
	for {
		select {
		case <-r.done:
			d.notify("STATUS=" + r.status())
			if ctx.Err() != nil {
				// Stopped as the run ended.
				d.stopping(ctx)
				return true, nil
			}
			return false, nil
		case <-d.Hup:
			*pendingReload = true
			log.Info("reload requested; it is applied when the run in progress ends")
		case <-ctx.Done():
			d.stopping(ctx)
			// The caller says "stopped cleanly" once Run returns.
			return true, r.stop(log, stopTimeout)
		}
	}
}

// reload asks for a new configuration and applies it; a failed reload
// keeps the current configuration and says why. It reports whether the
// schedule was replaced.
func (d *Daemon) reload(ctx context.Context) (scheduleChanged bool) {
	log := d.logger()
	if d.Reload == nil {
		log.Warn("reload requested but not supported; restart to apply a new configuration")
		return false
	}
	cfg, err := d.Reload(ctx)
	if err == nil {
		err = d.checkJobs(cfg.Jobs)
	}
	if err != nil {
		log.Error("reload failed; the current configuration stays in use", "err", err)
		d.notify("STATUS=reload failed: " + err.Error())
		return false
	}
	d.mu.Lock()
	if cfg.Job != nil {
		d.Job = cfg.Job
	}
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
	if d.reloaded != nil {
		close(d.reloaded)
		d.reloaded = make(chan struct{})
	}
	d.mu.Unlock()
	d.logger().Info("configuration reloaded", "changes", cfg.Changes, "schedule_kept", cfg.Schedule == nil)
	return cfg.Schedule != nil
}

// feedWatchdog sends WATCHDOG=1 every d.Watchdog while the daemon makes
// progress: idle between runs, or in a run that is within the time its
// current request or last commit may take (with Jobs: every account's run
// in progress is). A run stuck past that stops the
// pings, and systemd restarts the service.
func (d *Daemon) feedWatchdog(ctx context.Context) {
	t := time.NewTicker(d.Watchdog)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			job, _, _, log := d.current()
			if len(d.accounts) > 0 {
				job = d.stuckAccount(now)
			} else if !d.running.Load() || now.Before(job.ProgressDeadline()) {
				job = nil
			}
			if job == nil {
				d.notify("WATCHDOG=1")
				continue
			}
			log.Error("the run in progress has made no progress in the time its requests may take; not feeding the watchdog",
				"account", job.Account(), "progress_deadline", job.ProgressDeadline().UTC().Format(time.RFC3339))
		}
	}
}
