package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
)

// Backups is a daemon's backup plan: Take writes one backup and says what
// it wrote and which backups its pruning left alone (logged at info). The
// daemon calls it on Schedule, between runs, for any number of accounts: a
// backup never overlaps any account's run, so never its commits (a run due
// meanwhile starts as soon as the backup ends; a backup due during runs is
// taken when the runs in progress end). A failed
// backup is logged at error level and counted (Daemon.BackupStats), never
// fatal. Each backup is bounded by the daemon's RunTimeout and cancelled by
// its stop.
type Backups struct {
	Schedule Schedule
	Take     func(ctx context.Context, now time.Time) (load.BackupResult, error)
	// OnSuccess, if set, is told about each backup written (its path and
	// when it started), e.g. for a last-success metric.
	OnSuccess func(path string, at time.Time)
	// OnFailure, if set, is told about each backup that failed and when
	// it started (a stop during a backup is not a failure), e.g. for a
	// last-failure metric.
	OnFailure func(err error, at time.Time)
}

// WarehouseBackups is the plan `cardsync serve` uses: dialect.Backup of the
// warehouse at warehousePath into dir (the file's default backup directory when empty),
// keeping the newest keep (load.DefaultBackupKeep when 0) of this
// warehouse's backups, on schedule.
func WarehouseBackups(schedule Schedule, warehousePath, dir string, keep int) *Backups {
	return &Backups{
		Schedule: schedule,
		Take: func(ctx context.Context, now time.Time) (load.BackupResult, error) {
			return dialect.Backup(ctx, warehousePath, dir, keep, now)
		},
	}
}

// BackupStats is what a daemon's scheduled backups did since it started.
type BackupStats struct {
	// Succeeded and Failed count backups; a stop during a backup counts
	// as neither.
	Succeeded, Failed int64
	// LastSuccess is when the last successful backup started (zero: none
	// yet), LastPath the file it wrote and LastBytes its size.
	LastSuccess time.Time
	LastPath    string
	LastBytes   int64
	// LastFailure and LastError describe the last failed backup.
	LastFailure time.Time
	LastError   string
}

// BackupStats returns what the daemon's scheduled backups did so far.
func (d *Daemon) BackupStats() BackupStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.backups
}

// backupPlan returns the backup plan in use, nil when backups are off.
func (d *Daemon) backupPlan() *Backups {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.Backups == nil || d.Backups.Take == nil || d.Backups.Schedule == nil {
		return nil
	}
	return d.Backups
}

// backupOnce takes one backup, between runs, and logs and counts how it
// went.
func (d *Daemon) backupOnce(ctx context.Context, b *Backups) {
	d.mu.Lock()
	timeout, log := d.RunTimeout, d.loggerLocked()
	d.mu.Unlock()
	d.notify("STATUS=taking a backup")
	start := time.Now()
	bctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		bctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("backup exceeded [schedule] run_timeout %s", timeout))
	}
	defer cancel()
	res, err := func() (res load.BackupResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("backup panicked: %v", p)
				log.Error("backup panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			}
		}()
		return b.Take(bctx, start)
	}()
	elapsed := time.Since(start)
	path := res.Path
	for _, s := range res.Skipped {
		log.Info("backup left alone by pruning", "path", s.Path, "reason", s.Reason)
	}
	if err != nil && ctx.Err() != nil {
		log.Info("backup interrupted by the stop; its temporary file was removed", "err", err)
		return
	}
	if err != nil && (path == "" || !errors.Is(err, load.ErrBackupPrune)) {
		d.mu.Lock()
		d.backups.Failed++
		d.backups.LastFailure = start
		d.backups.LastError = err.Error()
		d.mu.Unlock()
		log.Error("backup failed; the daemon goes on and takes the next one on schedule", "err", err, "duration", elapsed)
		if b.OnFailure != nil {
			b.OnFailure(err, start)
		}
		return
	}
	var size int64
	if fi, serr := os.Stat(path); serr == nil {
		size = fi.Size()
	}
	d.mu.Lock()
	d.backups.Succeeded++
	d.backups.LastSuccess = start
	d.backups.LastPath = path
	d.backups.LastBytes = size
	d.mu.Unlock()
	if b.OnSuccess != nil {
		b.OnSuccess(path, start)
	}
	if err != nil {
		log.Warn("backup written, but older backups could not all be pruned", "path", path, "bytes", size, "duration", elapsed, "err", err)
		return
	}
	log.Info("backup written", "path", path, "bytes", size, "duration", elapsed)
}

// runGate keeps scheduled backups and runs apart, whatever the number of
// accounts: a backup starts once no run is in progress, and no run starts
// while a backup waits for that or is being taken (so runs falling due
// meanwhile cannot hold a backup back; each starts when the backup ends).
type runGate struct {
	mu     sync.Mutex
	runs   int  // runs in progress
	backup bool // a backup waits or is being taken
	// changed is closed (and dropped) when runs or backup change.
	changed chan struct{}
}

// wait returns a channel closed at the next change; g.mu is held.
func (g *runGate) wait() <-chan struct{} {
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	return g.changed
}

// broadcast wakes the waiters; g.mu is held.
func (g *runGate) broadcast() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// startRun waits until no backup is waiting or in progress and counts a
// run in; false: ctx ended first (nothing counted).
func (g *runGate) startRun(ctx context.Context) bool {
	return g.waitUntil(ctx, func() bool {
		if g.backup {
			return false
		}
		g.runs++
		return true
	})
}

// waitUntil waits until ready, called with g.mu held, says so (it may
// count what it found); false: ctx ended first.
func (g *runGate) waitUntil(ctx context.Context, ready func() bool) bool {
	for {
		g.mu.Lock()
		if ready() {
			g.mu.Unlock()
			return true
		}
		ch := g.wait()
		g.mu.Unlock()
		select {
		case <-ctx.Done():
			return false
		case <-ch:
		}
	}
}

// endRun counts a run out.
func (g *runGate) endRun() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.runs--
	g.broadcast()
}

// startBackup holds new runs back and waits for the runs in progress to
// end; false: ctx ended first (and runs may start again).
func (g *runGate) startBackup(ctx context.Context) bool {
	g.mu.Lock()
	g.backup = true
	g.mu.Unlock()
	if !g.waitUntil(ctx, func() bool { return g.runs == 0 }) {
		g.endBackup()
		return false
	}
	return true
}

// endBackup lets runs start again.
func (g *runGate) endBackup() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.backup = false
	g.broadcast()
}
