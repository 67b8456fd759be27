package worker

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
)

// takes records when a backup plan's Take was called and whether any
// account's run was in progress then.
type takes struct {
	mu      sync.Mutex
	at      []time.Time
	overlap int
}

func (k *takes) record(d *Daemon, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.at = append(k.at, now)
	for _, a := range d.accounts {
		if a.running.Load() {
			k.overlap++
		}
	}
}

func (k *takes) times() []time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]time.Time(nil), k.at...)
}

// TestDaemonBackups: with runs every 15 minutes and backups every 10, an
// hour gives every run (none skipped for a backup, the ones sharing a slot
// with a backup included) and every backup, never one during a run; the
// real sqlite.Backup names them by the daemon's clock and keeps the newest 3.
func TestDaemonBackups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		tr := &simTransport{srv: sim.New(sim.Options{Seed: 1, Cards: 30, Window: time.Second, Limit: 1000, AuthLimit: 100})}
		job := bubbleJob(t, tr, log)
		dir := filepath.Join(t.TempDir(), "backups")
		var k takes
		d := &Daemon{Jobs: []*Job{job}, Schedule: every(15 * time.Minute), RunOnStart: true, RunTimeout: time.Hour, Logger: log, Notify: rec.notify}
		plan := WarehouseBackups(every(10*time.Minute), job.Warehouse.Path(), dir, 3)
		take := plan.Take
		plan.Take = func(ctx context.Context, now time.Time) (sqlite.BackupResult, error) {
			k.record(d, now)
			return take(ctx, now)
		}
		var lastOK time.Time
		plan.OnSuccess = func(_ string, at time.Time) { lastOK = at }
		d.Backups = plan
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- d.Run(ctx) }()
		time.Sleep(time.Hour + time.Minute)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if n := len(runs(t, job)); n != 5 {
			t.Errorf("%d runs in an hour, want 5 (start-up + 4 scheduled)", n)
		}
		at := k.times()
		if len(at) != 6 || k.overlap != 0 {
			t.Errorf("%d backups (%d during a run) in an hour, want 6 and none during a run", len(at), k.overlap)
		}
		for i, a := range at {
			if off := a.Sub(start); off < time.Duration(i+1)*10*time.Minute || off > time.Duration(i+1)*10*time.Minute+time.Minute {
				t.Errorf("backup %d at +%v, want on its 10-minute slot (after the run sharing it)", i, off)
			}
		}
		files, err := sqlite.ListBackups(dir, job.Warehouse.Path())
		if err != nil {
			t.Fatal(err)
		}
		want := sqlite.BackupStem(job.Warehouse.Path()) + "-" + at[len(at)-1].UTC().Format("20060102T150405Z") + ".db"
		if len(files) != 3 || filepath.Base(files[0]) != want {
			t.Errorf("backup directory %v, want 3 files, the newest %s", files, want)
		}
		st := d.BackupStats()
		if st.Succeeded != 6 || st.Failed != 0 || st.LastPath != files[0] || st.LastBytes == 0 || !st.LastSuccess.Equal(at[len(at)-1]) {
			t.Errorf("BackupStats %+v", st)
		}
		if !lastOK.Equal(at[len(at)-1]) {
			t.Errorf("OnSuccess last told %v, want %v", lastOK, at[len(at)-1])
		}
		if n := strings.Count(rec.text(), `"msg":"backup written"`); n != 6 {
			t.Errorf("%d \"backup written\" lines, want 6", n)
		}
	})
}

// TestDaemonBackupWaitsForTheRun: a backup due while a run is in progress
// is taken when the run ends, not during it.
func TestDaemonBackupWaitsForTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := slog.New(slog.DiscardHandler)
		block := make(chan struct{})
		tr := &simTransport{srv: sim.New(sim.Options{Seed: 1, Cards: 30, Window: time.Second, Limit: 1000, AuthLimit: 100}), block: block}
		var k takes
		d := &Daemon{Jobs: []*Job{bubbleJob(t, tr, log)}, Schedule: every(time.Hour), RunOnStart: true, RunTimeout: time.Hour, Logger: log}
		d.Backups = &Backups{Schedule: every(10 * time.Minute), Take: func(ctx context.Context, now time.Time) (load.BackupResult, error) {
			k.record(d, now)
			return sqlite.BackupResult{Path: "backup.db"}, nil
		}}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- d.Run(ctx) }()
		time.Sleep(25 * time.Minute) // the start-up run hangs on its first page
		synctest.Wait()
		if n := len(k.times()); n != 0 {
			t.Fatalf("%d backups while the run hung", n)
		}
		close(block)
		synctest.Wait()
		at := k.times()
		if len(at) != 1 || k.overlap != 0 || at[0].Sub(start) < 25*time.Minute || at[0].Sub(start) > 26*time.Minute {
			t.Errorf("backups at %v (%d during a run), want one right after the run ended at +25m", at, k.overlap)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if n := len(k.times()); n != 2 {
			t.Errorf("%d backups by +35m, want 2 (the one the run delayed, then the +30m slot)", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestDaemonBackupFailures: a failing or panicking backup is logged at
// error level and counted; runs go on; a reload can turn backups off.
func TestDaemonBackupFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		tr := &simTransport{srv: sim.New(sim.Options{Seed: 1, Cards: 30, Window: time.Second, Limit: 1000, AuthLimit: 100})}
		calls := 0
		var failedAt []time.Time
		hup := make(chan struct{}, 1)
		d := &Daemon{Jobs: []*Job{bubbleJob(t, tr, log)}, Schedule: every(15 * time.Minute), RunTimeout: time.Hour, Logger: log, Hup: hup,
			Backups: &Backups{Schedule: every(10 * time.Minute), Take: func(ctx context.Context, now time.Time) (load.BackupResult, error) {
				calls++
				if calls == 2 {
					panic("disk on fire")
				}
				return sqlite.BackupResult{}, errors.New("backup: create the backup directory: permission denied")
			}, OnFailure: func(_ error, at time.Time) { failedAt = append(failedAt, at) }},
			Reload: func(context.Context) (Config, error) { return Config{Backups: &Backups{}, Changes: "backup.cron"}, nil },
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		time.Sleep(31 * time.Minute)
		synctest.Wait()
		st := d.BackupStats()
		if st.Failed != 3 || st.Succeeded != 0 || !strings.Contains(st.LastError, "permission denied") {
			t.Errorf("BackupStats %+v, want 3 failures", st)
		}
		// OnFailure is told each failure (the panic included) with its
		// start, the time a last-failure metric shows.
		if len(failedAt) != 3 || !failedAt[2].Equal(st.LastFailure) {
			t.Errorf("OnFailure told %v, want 3 failures, the last at %v", failedAt, st.LastFailure)
		}
		if n := strings.Count(rec.text(), `"level":"ERROR","msg":"backup failed; the daemon goes on and takes the next one on schedule"`); n != 3 {
			t.Errorf("%d error lines for 3 failed backups:\n%s", n, rec.text())
		}
		if n := len(runs(t, d.Jobs[0])); n != 2 {
			t.Errorf("%d runs by +31m with failing backups, want 2", n)
		}
		hup <- struct{}{}
		synctest.Wait()
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		if calls != 3 {
			t.Errorf("%d backups after a reload turned them off, want still 3", calls)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestRunCheckpointModes: after a whole run (its end checkpoints the WAL),
// the WAL is empty in auto mode and untouched in external mode, where a
// replicator such as Litestream owns WAL checkpoints.
func TestRunCheckpointModes(t *testing.T) {
	for _, tt := range []struct {
		mode  string
		empty bool
	}{{load.WALCheckpointAuto, true}, {load.WALCheckpointExternal, false}} {
		t.Run(tt.mode, func(t *testing.T) {
			f := newFixture(t, sim.Options{Seed: 4, Cards: 60})
			path := filepath.Join(t.TempDir(), "w.db")
			lock, err := sqlite.OpenLock(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { lock.Close() })
			wh, err := sqlite.Open(t.Context(), path, load.Options{WALCheckpoint: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { wh.Close() })
			job := &Job{Client: f.job.Client, Warehouse: wh, Lock: lock, Version: "test"}
			if _, err := job.Run(t.Context(), TriggerBackfill, Options{}); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path + "-wal")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("WAL after a run in %s mode: %d bytes", tt.mode, fi.Size())
			// PRAGMA optimize may add a page after the WAL checkpoint; a
			// 60-card run leaves far more than that.
			if empty := fi.Size() < 64<<10; empty != tt.empty {
				t.Errorf("WAL %d bytes after a run in %s mode: emptied %v, want %v", fi.Size(), tt.mode, empty, tt.empty)
			}
		})
	}
}
