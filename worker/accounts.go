package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Account is the account the job syncs (its warehouse's
// load.Options.Account).
func (j *Job) Account() string { return j.Warehouse.Account() }

// accountLoop is the state of one account's schedule loop, read by the
// watchdog.
type accountLoop struct {
	index   int
	running atomic.Bool
	// job is the job of the run in progress (or of the last one).
	job atomic.Pointer[Job]
}

// runAccounts is Run with Jobs: every account has a schedule loop of its
// own, so a slow, stuck or failing account never delays another, and an
// account's runs never overlap (a slot due while its run is in progress is
// skipped). The accounts' runs share the daemon's Schedule, RunOnStart and
// RunTimeout. The daemon's own loop handles reloads (applied to each
// account from its next run on) and backups, which are taken on their
// schedule while runs go on: a backup is a consistent copy of the file
// whatever the writers do, and waiting for every account to be idle would
// let one slow account hold backups back. A stop cancels every run and
// waits for each up to StopTimeout.
func (d *Daemon) runAccounts(ctx context.Context) error {
	if d.Schedule == nil {
		return errors.New("daemon: no schedule")
	}
	if err := d.checkJobs(nil); err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	stopTimeout := d.StopTimeout
	if stopTimeout <= 0 {
		stopTimeout = DefaultStopTimeout
	}
	d.mu.Lock()
	d.reloaded = make(chan struct{})
	d.accounts = make([]*accountLoop, len(d.Jobs))
	for i, j := range d.Jobs {
		d.accounts[i] = &accountLoop{index: i}
		d.accounts[i].job.Store(j)
	}
	d.mu.Unlock()
	if d.Watchdog > 0 {
		go d.feedWatchdog(ctx)
	}
	d.notify("READY=1")
	var wg sync.WaitGroup
	errs := make([]error, len(d.accounts))
	for i, a := range d.accounts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.accountSchedule(ctx, a, stopTimeout)
		}()
	}
	d.daemonLoop(ctx)
	wg.Wait()
	return errors.Join(errs...)
}

// daemonLoop handles reload requests and backups until ctx ends.
func (d *Daemon) daemonLoop(ctx context.Context) {
	var nextBackup time.Time
	for {
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
			d.stopping(ctx)
			return
		case <-d.Hup:
			stop()
			d.reload(ctx)
			if nextBackup.After(time.Now()) {
				nextBackup = time.Time{}
			}
		case <-wake:
			d.backupOnce(ctx, backups)
			nextBackup = time.Time{}
		}
	}
}

// accountConfig is the configuration of account i in use, with the
// generation of its schedule (see Daemon.scheduleGen).
func (d *Daemon) accountConfig(i int) (*Job, Schedule, int, time.Duration, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.Jobs[i], d.Schedule, d.scheduleGen, d.RunTimeout, d.reloaded
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
				next = sched.Next(time.Now())
			}
			job.logger().Debug("waiting for the next scheduled run", "next_run", next.UTC().Format(time.RFC3339))
			timer := time.NewTimer(time.Until(next))
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil
			case <-reloaded:
				timer.Stop()
				continue
			case <-timer.C:
			}
		}
		runNow, next = false, time.Time{}
		if err := d.accountRun(ctx, a, job, runTimeout, stopTimeout); err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// accountRun runs job once and waits for it, or, when ctx ends, cancels it
// and waits at most stopTimeout (as runOnce does).
func (d *Daemon) accountRun(ctx context.Context, a *accountLoop, job *Job, runTimeout, stopTimeout time.Duration) error {
	if ctx.Err() != nil {
		return nil
	}
	log := job.logger()
	prefix := "STATUS=account " + job.Account() + ": "
	d.notify(prefix + "syncing")
	a.job.Store(job)
	r := startRun(ctx, job, log, runTimeout, &a.running)
	defer r.cancel()
	select {
	case <-r.done:
		d.notify(prefix + r.status())
		return nil
	case <-ctx.Done():
		if err := r.stop(log, stopTimeout); err != nil {
			return fmt.Errorf("account %s: %w", job.Account(), err)
		}
		return nil
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
