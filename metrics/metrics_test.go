package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// listed are the families issue 14 names, plus those the alerts use.
var listed = []string{
	"cardsync_runs_total", "cardsync_run_duration_seconds", "cardsync_last_run_timestamp_seconds",
	"cardsync_last_success_timestamp_seconds", "cardsync_cards", "cardsync_cards_synced_total",
	"cardsync_removals_held", "cardsync_requests_total", "cardsync_retries_total", "cardsync_rate_limited_total",
	"cardsync_auth_requests_total", "cardsync_account_snapshot_timestamp_seconds", "cardsync_warehouse_bytes",
	"cardsync_backup_last_success_timestamp_seconds", "cardsync_runs_failed_in_a_row", "cardsync_healthy_within_seconds",
	"cardsync_backups_total", "cardsync_run_start_failures_total",
	"cardsync_lease_held", "cardsync_runs_skipped_total", "cardsync_leases_lost_total",
	"cardsync_backup_last_failure_timestamp_seconds", "cardsync_backup_interval_seconds", "cardsync_backups_configured",
	"cardsync_backups_configured_timestamp_seconds",
}

func TestFreshMetricsExistAtZero(t *testing.T) {
	m := New(Options{HealthyWithin: time.Hour})
	fams := families(t, m)
	for _, name := range listed {
		mf := fams[name]
		if mf == nil {
			t.Errorf("%s missing", name)
			continue
		}
		for _, mt := range mf.GetMetric() {
			v := mt.GetCounter().GetValue() + mt.GetGauge().GetValue() + float64(mt.GetHistogram().GetSampleCount())
			if name == "cardsync_healthy_within_seconds" {
				if v != 3600 {
					t.Errorf("%s = %v, want 3600", name, v)
				}
				continue
			}
			if v != 0 {
				t.Errorf("%s%v = %v, want 0", name, mt.GetLabel(), v)
			}
		}
	}
	// Every label combination exists before anything happened.
	for _, tr := range Triggers {
		for _, st := range Statuses {
			mustValue(t, fams, "cardsync_runs_total", "account=default,status="+st+",trigger="+tr)
		}
	}
	for _, c := range Changes {
		mustValue(t, fams, "cardsync_cards_synced_total", "account=default,change="+c)
	}
	for _, s := range []string{"live", "removed"} {
		mustValue(t, fams, "cardsync_cards", "account=default,state="+s)
	}
	for _, e := range []string{"token", "account", "cards"} {
		for _, c := range []string{"2xx", "3xx", "401", "4xx", "429", "5xx", "network", "other"} {
			mustValue(t, fams, "cardsync_requests_total", "account=default,code="+c+",endpoint="+e)
		}
	}
	if got := len(fams["cardsync_runs_total"].GetMetric()); got != len(Triggers)*len(Statuses) {
		t.Errorf("cardsync_runs_total has %d series, want %d", got, len(Triggers)*len(Statuses))
	}
	// The Go and process collectors come with /metrics.
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if fams[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
}

// TestBackupSeries: the backup series exist from start-up (backups not
// configured: every one 0); SetBackupSchedule sets the interval, configured
// and since when (a zero time keeps the one before), a failure its start
// time, and turning backups off reads 0 on every backup gauge, so no backup
// alert outlives them.
func TestBackupSeries(t *testing.T) {
	m := New(Options{})
	fams := families(t, m)
	for _, name := range backupFamilies[:5] {
		if got := mustValue(t, fams, name, ""); got != 0 {
			t.Errorf("fresh %s = %v, want 0", name, got)
		}
	}
	if got := mustValue(t, fams, "cardsync_warehouse_info", "kind=sqlite"); got != 1 {
		t.Errorf("cardsync_warehouse_info{kind=sqlite} = %v, want 1", got)
	}
	if pg := families(t, New(Options{Warehouse: WarehousePostgres})); mustValue(t, pg, "cardsync_warehouse_info", "kind=postgres") != 1 {
		t.Error("cardsync_warehouse_info{kind=postgres} is not 1")
	}

	since := time.Unix(1_699_000_000, 0)
	m.SetBackupSchedule(7*24*time.Hour, since)
	ok, bad := time.Unix(1_700_000_000, 0), time.Unix(1_700_086_400, 0)
	m.BackupSucceeded(ok)
	m.BackupFailed(bad)
	fams = families(t, m)
	for name, want := range map[string]float64{
		"cardsync_backups_configured":                    1,
		"cardsync_backup_interval_seconds":               604800,
		"cardsync_backups_configured_timestamp_seconds":  1_699_000_000,
		"cardsync_backup_last_success_timestamp_seconds": 1_700_000_000,
		"cardsync_backup_last_failure_timestamp_seconds": 1_700_086_400,
	} {
		if got := mustValue(t, fams, name, ""); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := mustValue(t, fams, "cardsync_backups_total", "result=failed"); got != 1 {
		t.Errorf("cardsync_backups_total{result=failed} = %v, want 1", got)
	}
	// The next success clears CardsyncBackupFailing (failure < success).
	m.BackupSucceeded(bad.Add(time.Hour))
	fams = families(t, m)
	if s, f := mustValue(t, fams, "cardsync_backup_last_success_timestamp_seconds", ""), mustValue(t, fams, "cardsync_backup_last_failure_timestamp_seconds", ""); f >= s {
		t.Errorf("after a success the last failure %v is not older than the last success %v", f, s)
	}
	// A reload keeping the schedule (zero since) keeps since when; a new
	// schedule moves it.
	m.SetBackupSchedule(24*time.Hour, time.Time{})
	if got := mustValue(t, families(t, m), "cardsync_backups_configured_timestamp_seconds", ""); got != 1_699_000_000 {
		t.Errorf("schedule kept: cardsync_backups_configured_timestamp_seconds = %v, want 1699000000", got)
	}
	m.SetBackupSchedule(24*time.Hour, bad.Add(2*time.Hour))
	if got := mustValue(t, families(t, m), "cardsync_backups_configured_timestamp_seconds", ""); got != float64(bad.Add(2*time.Hour).Unix()) {
		t.Errorf("schedule changed: cardsync_backups_configured_timestamp_seconds = %v, want %d", got, bad.Add(2*time.Hour).Unix())
	}
	m.SetBackupSchedule(0, time.Time{})
	fams = families(t, m)
	for _, name := range backupFamilies[:5] {
		if got := mustValue(t, fams, name, ""); got != 0 {
			t.Errorf("backups turned off: %s = %v, want 0", name, got)
		}
	}
}

// TestMetricsFollowRuns drives a real worker.Job against the simulator
// through new, changed, removed and rejected cards and a 429.
func TestMetricsFollowRuns(t *testing.T) {
	j := newSimJob(t, sim.Options{Seed: 3, Cards: 40, OddData: true})
	start := time.Now()
	res1, err := j.job.Run(t.Context(), worker.TriggerBackfill, worker.Options{})
	if err != nil {
		t.Fatalf("run 1: %v", err)
	}
	fams := families(t, j.m)
	if got := mustValue(t, fams, "cardsync_cards_synced_total", "account=default,change=new"); got != float64(res1.New) || got < 40 {
		t.Errorf("new after run 1 = %v, want %d (at least 40)", got, res1.New)
	}
	if got := mustValue(t, fams, "cardsync_cards_synced_total", "account=default,change=rejected"); got == 0 || got != float64(res1.Rejected) {
		t.Errorf("rejected after run 1 = %v, want %d > 0", got, res1.Rejected)
	}
	if got := mustValue(t, fams, "cardsync_cards", "account=default,state=live"); got != float64(res1.New) {
		t.Errorf("live cards = %v, want %d", got, res1.New)
	}
	for _, name := range []string{"cardsync_last_run_timestamp_seconds", "cardsync_last_success_timestamp_seconds", "cardsync_account_snapshot_timestamp_seconds"} {
		if got := mustValue(t, fams, name, "account=default"); got < float64(start.Unix()-1) || got > float64(time.Now().Unix()+1) {
			t.Errorf("%s = %v, want about now (%d)", name, got, start.Unix())
		}
	}
	if got := mustValue(t, fams, "cardsync_warehouse_bytes", ""); got <= 0 {
		t.Errorf("warehouse bytes = %v, want > 0", got)
	}
	if got := mustValue(t, fams, "cardsync_auth_requests_total", "account=default"); got != 1 {
		t.Errorf("auth requests = %v, want 1", got)
	}
	if got := mustValue(t, fams, "cardsync_requests_total", "account=default,code=2xx,endpoint=token"); got != 1 {
		t.Errorf("token 2xx = %v, want 1", got)
	}

	// Upstream changes: one card changed, one removed, one added, and a
	// 429 on page 2.
	var plain []sim.Card
	for _, c := range j.sim.Cards() {
		if c.Odd == "" {
			plain = append(plain, c)
		}
	}
	j.sim.UpdateCard(plain[0].ID)
	j.sim.RemoveCard(plain[1].ID)
	j.sim.AddCard()
	j.sim.InjectFault(sim.Fault{Endpoint: "cards", Pages: []int{2}, Kind: sim.FaultRateLimit, Times: 1})
	res2, err := j.job.Run(t.Context(), worker.TriggerSchedule, worker.Options{})
	if err != nil {
		t.Fatalf("run 2: %v", err)
	}
	// The removal is confirmed by the next consistent walk.
	res3, err := j.job.Run(t.Context(), worker.TriggerSchedule, worker.Options{})
	if err != nil {
		t.Fatalf("run 3: %v", err)
	}
	fams = families(t, j.m)
	checks := []struct {
		name, labels string
		want         float64
	}{
		{"cardsync_runs_total", "account=default,status=succeeded,trigger=backfill", 1},
		{"cardsync_runs_total", "account=default,status=succeeded,trigger=schedule", 2},
		{"cardsync_runs_total", "account=default,status=failed,trigger=schedule", 0},
		{"cardsync_run_duration_seconds", "account=default", 3},
		{"cardsync_cards_synced_total", "account=default,change=new", float64(res1.New + 1)},
		{"cardsync_cards_synced_total", "account=default,change=changed", 1},
		{"cardsync_cards_synced_total", "account=default,change=removed", 1},
		{"cardsync_cards_synced_total", "account=default,change=unchanged", float64(res2.Unchanged + res3.Unchanged)},
		{"cardsync_cards_synced_total", "account=default,change=rejected", float64(res1.Rejected + res2.Rejected + res3.Rejected)},
		{"cardsync_cards", "account=default,state=live", float64(res1.New)},
		{"cardsync_cards", "account=default,state=removed", 1},
		{"cardsync_rate_limited_total", "account=default", 1},
		{"cardsync_requests_total", "account=default,code=429,endpoint=cards", 1},
		{"cardsync_removals_held", "account=default", 0},
		{"cardsync_runs_failed_in_a_row", "account=default", 0},
	}
	for _, c := range checks {
		if got := mustValue(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := mustValue(t, fams, "cardsync_retries_total", "account=default"); got < 1 {
		t.Errorf("retries = %v, want at least 1", got)
	}
	// The requests by class add up to the client's own count.
	var total float64
	for _, mt := range fams["cardsync_requests_total"].GetMetric() {
		total += mt.GetCounter().GetValue()
	}
	if want := res1.Requests + res2.Requests + res3.Requests; total != float64(want) {
		t.Errorf("requests by class sum to %v, the runs counted %d", total, want)
	}
	if ok, reason := j.m.Health(); !ok {
		t.Errorf("unhealthy after a success: %s", reason)
	}

	failedRunMetrics(t, j)
}

// failedRunMetrics fails j's next run (the API refuses everything past its
// retries) and checks the series of a failure.
func failedRunMetrics(t *testing.T, j *simJob) {
	t.Helper()
	// A failed run: the API refuses everything past its retries.
	j.sim.InjectFault(sim.Fault{Endpoint: "account", Kind: sim.FaultStatus, Status: 400})
	j.sim.InjectFault(sim.Fault{Endpoint: "cards", Kind: sim.FaultStatus, Status: 400})
	if _, err := j.job.Run(t.Context(), worker.TriggerSchedule, worker.Options{}); err == nil {
		t.Fatal("run 4 succeeded against an API answering 400")
	}
	fams := families(t, j.m)
	if got := mustValue(t, fams, "cardsync_runs_total", "account=default,status=failed,trigger=schedule"); got != 1 {
		t.Errorf("failed schedule runs = %v, want 1", got)
	}
	if got := mustValue(t, fams, "cardsync_runs_failed_in_a_row", "account=default"); got != 1 {
		t.Errorf("failed in a row = %v, want 1", got)
	}
	if got := mustValue(t, fams, "cardsync_requests_total", "account=default,code=4xx,endpoint=cards"); got < 1 {
		t.Errorf("cards 4xx = %v, want at least 1", got)
	}
}

// fakeWarehouse is a Summary source for seeding tests.
type fakeWarehouse struct {
	s   load.Summary
	err error
}

func (f *fakeWarehouse) Summary(_ context.Context) (load.Summary, error) { return f.s, f.err }

func TestRefreshSeedsFromTheWarehouse(t *testing.T) {
	success := time.Date(2026, 3, 1, 11, 50, 0, 0, time.UTC)
	failed := success.Add(5 * time.Minute)
	snap := success.Add(-time.Minute)
	wh := &fakeWarehouse{s: load.Summary{
		Runs: []load.Run{
			{ID: 9, Status: load.StatusRunning, StartedAt: failed.Add(time.Minute)},
			{ID: 8, Status: load.StatusFailed, FinishedAt: &failed},
			{ID: 7, Status: load.StatusSucceeded, FinishedAt: &success},
		},
		CurrentCards: 120, RemovedCards: 4, RemovalsHeld: 11, FailuresInARow: 1,
		LastSuccessAt: &success, LastSnapshotAt: &snap, DatabaseBytes: 4096, WALBytes: 1024, CardsFlatStale: true,
	}}
	clk := sim.NewClock()
	m := New(Options{Now: clk.Now, HealthyWithin: 45 * time.Minute})
	if got := mustValue(t, families(t, m), "cardsync_cards_flat_stale", ""); got != 0 {
		t.Errorf("cardsync_cards_flat_stale = %v before a refresh, want 0", got)
	}
	if err := m.Refresh(t.Context(), wh); err != nil {
		t.Fatal(err)
	}
	fams := families(t, m)
	checks := []struct {
		name, labels string
		want         float64
	}{
		{"cardsync_last_success_timestamp_seconds", "account=default", float64(success.Unix())},
		{"cardsync_last_run_timestamp_seconds", "account=default", float64(failed.Unix())},
		{"cardsync_account_snapshot_timestamp_seconds", "account=default", float64(snap.Unix())},
		{"cardsync_cards", "account=default,state=live", 120},
		{"cardsync_cards", "account=default,state=removed", 4},
		{"cardsync_removals_held", "account=default", 11},
		{"cardsync_runs_failed_in_a_row", "account=default", 1},
		{"cardsync_warehouse_bytes", "", 5120},
		{"cardsync_cards_flat_stale", "", 1},
		{"cardsync_runs_total", "account=default,status=succeeded,trigger=schedule", 0}, // counters start at 0 in each process
	}
	for _, c := range checks {
		if got := mustValue(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	ok, reason := m.Health()
	if !ok || !strings.Contains(reason, "10m0s ago") || !strings.Contains(reason, "failed") {
		t.Errorf("Health() = %v, %q; want healthy, last success 10m0s ago, last run failed", ok, reason)
	}
	wh.err = errors.New("disk on fire")
	if err := m.Refresh(t.Context(), wh); err == nil {
		t.Error("Refresh hid the warehouse's error")
	}
}

// TestRunStartFailuresCounted: the run observer also hears runs that could
// not start, which no sync_runs row (and so no runs_total) records.
func TestRunStartFailuresCounted(t *testing.T) {
	m := New(Options{HealthyWithin: time.Hour})
	obs, ok := m.RunObserver(load.DefaultAccount, nil).(worker.StartObserver)
	if !ok {
		t.Fatal("the run observer is not a worker.StartObserver")
	}
	obs.RunNotStarted("take the warehouse lock", errors.New("read-only file system"))
	obs.RunNotStarted("check the warehouse file", errors.New("gone"))
	if v, _ := value(t, families(t, m), "cardsync_run_start_failures_total", "account=default"); v != 2 {
		t.Errorf("cardsync_run_start_failures_total = %v, want 2", v)
	}
}

// TestMetricsCountReturned: a card removed by two walks that the API lists
// again unchanged is counted by a real worker.Job as returned, not changed:
// in its Result and in cardsync_cards_synced_total.
func TestMetricsCountReturned(t *testing.T) {
	j := newSimJob(t, sim.Options{Seed: 5, Cards: 30})
	run := func(n int) worker.Result {
		t.Helper()
		res, err := j.job.Run(t.Context(), worker.TriggerSchedule, worker.Options{})
		if err != nil {
			t.Fatalf("run %d: %v", n, err)
		}
		return res
	}
	run(1)
	gone := j.sim.Cards()[4]
	j.sim.RemoveCard(gone.ID)
	run(2)
	if res := run(3); res.Removed != 1 {
		t.Fatalf("run 3 removed %d, want 1", res.Removed)
	}
	j.sim.RestoreCard(gone)
	if res := run(4); res.Returned != 1 || res.Changed != 0 || res.Removed != 0 {
		t.Errorf("run 4: returned %d, changed %d, removed %d; want 1, 0, 0", res.Returned, res.Changed, res.Removed)
	}
	fams := families(t, j.m)
	for change, want := range map[string]float64{"returned": 1, "changed": 0, "removed": 1} {
		if got := mustValue(t, fams, "cardsync_cards_synced_total", "account=default,change="+change); got != want {
			t.Errorf("cardsync_cards_synced_total{change=%q} = %v, want %v", change, got, want)
		}
	}
	if got := mustValue(t, fams, "cardsync_cards", "account=default,state=removed"); got != 0 {
		t.Errorf("removed cards after the return = %v, want 0", got)
	}
}
