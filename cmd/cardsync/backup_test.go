package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/metrics"
	"github.com/cardsync/cardsync/sim"
)

// TestBackupAndRestoreCommands: backup prints the path it wrote (default
// directory beside the warehouse, -to elsewhere); restore brings it back
// and a backfill then gives the simulator's truth; the exit codes of
// refusals.
func TestBackupAndRestoreCommands(t *testing.T) {
	srv, e := newEnv(t, sim.Options{Seed: 5, Cards: 45})
	if code, _, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, errOut)
	}
	code, out, errOut := e.run(t.Context(), "backup")
	path := strings.TrimSpace(out)
	if code != 0 || filepath.Dir(path) != filepath.Join(filepath.Dir(e.db), "backups") || !strings.HasPrefix(filepath.Base(path), "warehouse-") {
		t.Fatalf("backup: exit %d, printed %q\n%s", code, out, errOut)
	}
	to := t.TempDir()
	if code, out, errOut := e.run(t.Context(), "backup", "-to", to, "-keep", "1"); code != 0 || filepath.Dir(strings.TrimSpace(out)) != to {
		t.Fatalf("backup -to: exit %d, printed %q\n%s", code, out, errOut)
	}

	for range 3 {
		srv.UpdateCard(srv.Cards()[0].ID)
	}
	srv.AddCard()
	srv.RemoveCard(srv.Cards()[1].ID)
	if code, _, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, errOut)
	}
	// The warehouse holds a run the backup lacks: refused, then forced.
	if code, out, errOut := e.run(t.Context(), "restore", path); code != exitWarehouse ||
		!strings.Contains(errOut, "refused, nothing changed") || !strings.Contains(errOut, "a restore would discard 1 run,") {
		t.Fatalf("restore over newer history: exit %d, want %d\n%s\n%s", code, exitWarehouse, out, errOut)
	}
	// Flags may follow FILE.
	if code, out, errOut := e.run(t.Context(), "restore", path, "-log-level", "info", "-force"); code != 0 || !strings.Contains(out, sqlite.BeforeRestoreSuffix+"-") {
		t.Fatalf("restore -force: exit %d\n%s\n%s", code, out, errOut)
	}
	if kept, err := sqlite.ListBeforeRestore(e.db); err != nil || len(kept) != 1 {
		t.Errorf("kept %v (%v), want the replaced warehouse", kept, err)
	}
	db := openDB(t, e.db)
	var runs int
	if err := db.QueryRow("SELECT count(*) FROM sync_runs").Scan(&runs); err != nil || runs != 1 {
		t.Errorf("restored warehouse has %d runs (%v), want the backup's 1", runs, err)
	}
	db.Close()
	// Two walks: a removal is confirmed by the second walk that misses it.
	for range 2 {
		if code, _, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
			t.Fatalf("backfill after restore: exit %d\n%s", code, errOut)
		}
	}
	assertMatchesTruth(t, srv, e.db)

	bad := filepath.Join(t.TempDir(), "bad.db")
	if err := os.WriteFile(bad, []byte(strings.Repeat("x", 8192)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := e.run(t.Context(), "restore", bad); code != exitWarehouse || !strings.Contains(errOut, "backup check failed") {
		t.Errorf("restore of a file that is not a database: exit %d, want %d\n%s", code, exitWarehouse, errOut)
	}
	lock, err := sqlite.AcquireLock(e.db)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := e.run(t.Context(), "restore", path); code != exitLocked || !strings.Contains(errOut, "sync in progress") {
		t.Errorf("restore during a sync: exit %d, want %d\n%s", code, exitLocked, errOut)
	}
	lock.Close()
	if code, _, _ := e.run(t.Context(), "restore"); code != exitConfig {
		t.Errorf("restore without FILE: exit %d, want %d", code, exitConfig)
	}
	if code, _, _ := e.run(t.Context(), "backup", "-keep", "-2"); code != exitConfig {
		t.Errorf("backup -keep -2: exit %d, want %d", code, exitConfig)
	}
	e.vars["CARDSYNC_WAREHOUSE_PATH"] = filepath.Join(t.TempDir(), "missing.db")
	if code, _, _ := e.run(t.Context(), "backup"); code != exitWarehouse {
		t.Errorf("backup of a missing warehouse: exit %d, want %d", code, exitWarehouse)
	}
}

// TestBackupKeysAndServePlan: `cardsync backup` takes [backup] dir and keep
// when no flag says otherwise; serve's plan from [backup] cron writes into
// that directory and tells the metrics, and a restarted daemon's metric
// starts from the newest backup already there. Since when backups run on
// their schedule is that newest backup at start-up (else the start), and
// the reload that turns them on or changes their cron.
func TestBackupKeysAndServePlan(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 6, Cards: 20})
	if code, _, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, errOut)
	}
	dir := t.TempDir()
	e.vars["CARDSYNC_BACKUP_DIR"] = dir
	e.vars["CARDSYNC_BACKUP_KEEP"] = "2"
	for range 3 {
		if code, out, errOut := e.run(t.Context(), "backup"); code != 0 || filepath.Dir(strings.TrimSpace(out)) != dir {
			t.Fatalf("backup: exit %d, printed %q, want a file in %s\n%s", code, out, dir, errOut)
		}
	}
	if list, err := sqlite.ListBackups(dir, e.db); err != nil || len(list) != 2 {
		t.Fatalf("backups in [backup] dir: %v (%v), want the newest 2", list, err)
	}

	e.vars["CARDSYNC_BACKUP_CRON"] = "@every 1h"
	cfg, err := config.Load("", e.environ())
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Settings(false, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	met := metrics.New(metrics.Options{})
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	backupMetrics(t.Context(), s, nil, s.DBPath, met, start)
	seeded := backupGauge(t, met)
	if seeded == 0 {
		t.Errorf("backup metric not seeded from the existing backups")
	}
	if got := gaugeValue(t, met, "cardsync_backups_configured_timestamp_seconds"); got != seeded {
		t.Errorf("start-up with backups on disk: cardsync_backups_configured_timestamp_seconds = %v, want the newest backup's %v (a restart does not reset the count)", got, seeded)
	}
	empty := s
	empty.BackupDir = t.TempDir()
	none := metrics.New(metrics.Options{})
	backupMetrics(t.Context(), empty, nil, empty.DBPath, none, start)
	if got := gaugeValue(t, none, "cardsync_backups_configured_timestamp_seconds"); got != float64(start.Unix()) {
		t.Errorf("start-up with no backup on disk: cardsync_backups_configured_timestamp_seconds = %v, want the start %d", got, start.Unix())
	}
	if got := gaugeValue(t, met, "cardsync_backups_configured"); got != 1 {
		t.Errorf("cardsync_backups_configured = %v with [backup] cron, want 1", got)
	}
	if got := gaugeValue(t, met, "cardsync_backup_interval_seconds"); got != 3600 {
		t.Errorf("cardsync_backup_interval_seconds = %v for @every 1h, want 3600", got)
	}
	plan := backups(s, s.DBPath, met)
	if plan.Schedule == nil || plan.Take == nil || plan.OnSuccess == nil || plan.OnFailure == nil {
		t.Fatalf("plan %+v: want a schedule, a Take, an OnSuccess and an OnFailure", plan)
	}
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	res, err := plan.Take(t.Context(), at)
	path := res.Path
	if err != nil || filepath.Dir(path) != dir || filepath.Base(path) != "warehouse-20300102T030405Z.db" {
		t.Fatalf("Take: %q, %v; want warehouse-20300102T030405Z.db in %s", path, err, dir)
	}
	plan.OnSuccess(path, at)
	if got := backupGauge(t, met); got != float64(at.Unix()) {
		t.Errorf("backup metric %v, want %d", got, at.Unix())
	}
	failed := at.Add(time.Hour)
	plan.OnFailure(errors.New("disk full"), failed)
	if got := metricValue(t, met, "cardsync_backups_total", "failed"); got != 1 {
		t.Errorf("cardsync_backups_total{result=failed} = %v, want 1", got)
	}
	if got := metricValue(t, met, "cardsync_backups_total", "succeeded"); got != 1 {
		t.Errorf("cardsync_backups_total{result=succeeded} = %v, want 1", got)
	}
	if got := gaugeValue(t, met, "cardsync_backup_last_failure_timestamp_seconds"); got != float64(failed.Unix()) {
		t.Errorf("cardsync_backup_last_failure_timestamp_seconds = %v, want %d", got, failed.Unix())
	}
	// A reload that keeps backups on keeps the last success and failure,
	// and since when.
	backupMetrics(t.Context(), s, &s, s.DBPath, met, at.Add(2*time.Hour))
	if got := backupGauge(t, met); got != float64(at.Unix()) {
		t.Errorf("after a reload keeping backups: backup metric %v, want %d", got, at.Unix())
	}
	if got := gaugeValue(t, met, "cardsync_backups_configured_timestamp_seconds"); got != seeded {
		t.Errorf("after a reload keeping the schedule: cardsync_backups_configured_timestamp_seconds = %v, want %v", got, seeded)
	}

	backupReloads(t, e, s, met, at, start)
}

// backupReloads checks the backup metrics across reloads of s: a weekly
// cron, backups turned off, then on again.
func backupReloads(t *testing.T, e *env, s config.Settings, met *metrics.Metrics, at, start time.Time) {
	// A reload to a weekly cron: the interval follows.
	e.vars["CARDSYNC_BACKUP_CRON"] = "30 2 * * 0"
	cfg, _ := config.Load("", e.environ())
	weekly, err := cfg.Settings(false, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	changed := at.Add(3 * time.Hour)
	backupMetrics(t.Context(), weekly, &s, weekly.DBPath, met, changed)
	if got := gaugeValue(t, met, "cardsync_backup_interval_seconds"); got != 7*86400 {
		t.Errorf("cardsync_backup_interval_seconds = %v for a weekly cron, want %d", got, 7*86400)
	}
	if got := gaugeValue(t, met, "cardsync_backups_configured_timestamp_seconds"); got != float64(changed.Unix()) {
		t.Errorf("after a reload changing the cron: cardsync_backups_configured_timestamp_seconds = %v, want the reload's %d", got, changed.Unix())
	}

	// A reload turning backups off: every backup gauge reads 0.
	delete(e.vars, "CARDSYNC_BACKUP_CRON")
	cfg, _ = config.Load("", e.environ())
	s, _ = cfg.Settings(false, func(string) string { return "" })
	if plan := backups(s, s.DBPath, met); plan.Schedule != nil || plan.Take != nil {
		t.Errorf("without [backup] cron the plan is %+v, want an empty plan (no backups)", plan)
	}
	backupMetrics(t.Context(), s, &weekly, s.DBPath, met, changed.Add(time.Hour))
	for _, name := range []string{"cardsync_backup_last_success_timestamp_seconds", "cardsync_backup_last_failure_timestamp_seconds",
		"cardsync_backup_interval_seconds", "cardsync_backups_configured", "cardsync_backups_configured_timestamp_seconds"} {
		if got := gaugeValue(t, met, name); got != 0 {
			t.Errorf("without [backup] cron %s = %v, want 0 (no backup alert but CardsyncBackupsNotConfigured)", name, got)
		}
	}
	fresh := metrics.New(metrics.Options{})
	backupMetrics(t.Context(), s, nil, s.DBPath, fresh, start)
	if got := backupGauge(t, fresh); got != 0 {
		t.Errorf("without [backup] cron the start-up seed set %v from old backups, want 0", got)
	}
	// Turned on by a reload: the last success seeded from the directory
	// again, and since when is the reload (the old backups do not count
	// as the new schedule's).
	turnedOn := start.Add(10 * 24 * time.Hour)
	backupMetrics(t.Context(), weekly, &s, weekly.DBPath, fresh, turnedOn)
	if got := backupGauge(t, fresh); got == 0 {
		t.Errorf("backups turned on by a reload: the metric was not seeded from the existing backups")
	}
	if got := gaugeValue(t, fresh, "cardsync_backups_configured_timestamp_seconds"); got != float64(turnedOn.Unix()) {
		t.Errorf("backups turned on by a reload: cardsync_backups_configured_timestamp_seconds = %v, want the reload's %d", got, turnedOn.Unix())
	}
}

// gaugeValue reads the value of an unlabelled gauge.
func gaugeValue(t *testing.T, met *metrics.Metrics, family string) float64 {
	t.Helper()
	families, err := met.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == family {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s", family)
	return 0
}

// backupGauge reads cardsync_backup_last_success_timestamp_seconds.
func backupGauge(t *testing.T, met *metrics.Metrics) float64 {
	t.Helper()
	families, err := met.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "cardsync_backup_last_success_timestamp_seconds" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no cardsync_backup_last_success_timestamp_seconds")
	return 0
}

// metricValue reads the value of a counter family's series whose one label
// is value.
func metricValue(t *testing.T, met *metrics.Metrics, family, value string) float64 {
	t.Helper()
	families, err := met.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == value {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no %s{%s}", family, value)
	return 0
}

// TestWarehouseKind: the metrics name a PostgreSQL warehouse so that
// CardsyncBackupsNotConfigured (SQLite only) skips it.
func TestWarehouseKind(t *testing.T) {
	if got := warehouseKind(config.Settings{PostgresSettings: config.PostgresSettings{WarehouseURL: "postgres://db/cardsync"}}); got != metrics.WarehousePostgres {
		t.Errorf("kind of a [warehouse] url: %q", got)
	}
	if got := warehouseKind(config.Settings{DBPath: "warehouse.db"}); got != metrics.WarehouseSQLite {
		t.Errorf("kind of a [warehouse] path: %q", got)
	}
}
