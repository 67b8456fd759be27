package metrics

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// perAccount are the families with an account label; the others describe
// the warehouse file or the configuration and have none.
var perAccount = []string{
	"cardsync_runs_total", "cardsync_run_duration_seconds", "cardsync_last_run_timestamp_seconds",
	"cardsync_last_success_timestamp_seconds", "cardsync_runs_failed_in_a_row", "cardsync_cards",
	"cardsync_cards_synced_total", "cardsync_removals_held", "cardsync_requests_total", "cardsync_retries_total",
	"cardsync_rate_limited_total", "cardsync_auth_requests_total", "cardsync_account_snapshot_timestamp_seconds",
	"cardsync_run_start_failures_total", "cardsync_lease_held", "cardsync_runs_skipped_total", "cardsync_leases_lost_total",
}

// TestAccountsExistAtZero: every per-account series exists at 0 for each
// configured account, and only for those; the file's series carry no
// account.
func TestAccountsExistAtZero(t *testing.T) {
	m := New(Options{Accounts: []string{"alpha", "beta", "alpha"}})
	fams := families(t, m)
	for _, name := range listed {
		mf := fams[name]
		if mf == nil {
			t.Fatalf("%s missing", name)
		}
		want := map[string]bool{}
		if slices.Contains(perAccount, name) {
			want = map[string]bool{"alpha": true, "beta": true}
		}
		seen := map[string]int{}
		for _, mt := range mf.GetMetric() {
			account := ""
			for _, l := range mt.GetLabel() {
				if l.GetName() == "account" {
					account = l.GetValue()
				}
			}
			seen[account]++
			if account != "" && !want[account] {
				t.Errorf("%s has a series of account %q", name, account)
			}
			if v := mt.GetCounter().GetValue() + mt.GetGauge().GetValue() + float64(mt.GetHistogram().GetSampleCount()); account != "" && v != 0 {
				t.Errorf("%s{account=%q} = %v, want 0", name, account, v)
			}
		}
		for a := range want {
			if seen[a] == 0 {
				t.Errorf("%s has no series of account %s", name, a)
			}
		}
		if len(want) == 0 && len(seen) != 1 {
			t.Errorf("%s: series by account %v, want none labelled", name, seen)
		}
		if len(want) > 0 && seen["alpha"] != seen["beta"] {
			t.Errorf("%s: %d series of alpha, %d of beta; want as many", name, seen["alpha"], seen["beta"])
		}
	}
	if got, want := len(fams["cardsync_runs_total"].GetMetric()), 2*len(Triggers)*len(Statuses); got != want {
		t.Errorf("cardsync_runs_total has %d series, want %d (two accounts)", got, want)
	}
}

// TestRunsMoveOnlyTheirAccount drives two accounts of one warehouse file,
// each against its own simulator: one account's runs, requests and
// failures move its series only, and each account's gauges come from its
// own rows.
func TestRunsMoveOnlyTheirAccount(t *testing.T) {
	m := New(Options{Accounts: []string{"alpha", "beta"}})
	path := filepath.Join(t.TempDir(), "w.db")
	alpha := newAccountJob(t, m, path, "alpha", sim.Options{Seed: 5, Cards: 40})
	beta := newAccountJob(t, m, path, "beta", sim.Options{Seed: 6, Cards: 25})

	if _, err := alpha.job.Run(t.Context(), worker.TriggerSchedule, worker.Options{}); err != nil {
		t.Fatalf("alpha's run: %v", err)
	}
	fams := families(t, m)
	checks := []struct {
		name, labels string
		want         float64
	}{
		{"cardsync_runs_total", "account=alpha,status=succeeded,trigger=schedule", 1},
		{"cardsync_runs_total", "account=beta,status=succeeded,trigger=schedule", 0},
		{"cardsync_cards", "account=alpha,state=live", 40},
		{"cardsync_cards", "account=beta,state=live", 0},
		{"cardsync_cards_synced_total", "account=alpha,change=new", 40},
		{"cardsync_cards_synced_total", "account=beta,change=new", 0},
		{"cardsync_auth_requests_total", "account=alpha", 1},
		{"cardsync_auth_requests_total", "account=beta", 0},
		{"cardsync_requests_total", "account=beta,code=2xx,endpoint=cards", 0},
		{"cardsync_run_duration_seconds", "account=alpha", 1},
		{"cardsync_run_duration_seconds", "account=beta", 0},
		{"cardsync_last_success_timestamp_seconds", "account=beta", 0},
		{"cardsync_account_snapshot_timestamp_seconds", "account=beta", 0},
	}
	for _, c := range checks {
		if got := mustValue(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("after alpha's run: %s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := mustValue(t, fams, "cardsync_last_success_timestamp_seconds", "account=alpha"); got == 0 {
		t.Error("alpha's last success is 0 after its successful run")
	}

	// beta fails; alpha's series stay as they were.
	beta.sim.InjectFault(sim.Fault{Endpoint: "cards", Kind: sim.FaultStatus, Status: 400})
	if _, err := beta.job.Run(t.Context(), worker.TriggerSchedule, worker.Options{}); err == nil {
		t.Fatal("beta's run succeeded against an API answering 400")
	}
	beta.job.Observer.(worker.StartObserver).RunNotStarted("take the warehouse lock", errors.New("busy"))
	fams = families(t, m)
	checks = []struct {
		name, labels string
		want         float64
	}{
		{"cardsync_runs_total", "account=beta,status=failed,trigger=schedule", 1},
		{"cardsync_runs_total", "account=alpha,status=failed,trigger=schedule", 0},
		{"cardsync_runs_failed_in_a_row", "account=beta", 1},
		{"cardsync_runs_failed_in_a_row", "account=alpha", 0},
		{"cardsync_run_start_failures_total", "account=beta", 1},
		{"cardsync_run_start_failures_total", "account=alpha", 0},
		{"cardsync_requests_total", "account=alpha,code=4xx,endpoint=cards", 0},
		{"cardsync_cards", "account=alpha,state=live", 40},
		{"cardsync_cards", "account=beta,state=live", 0},
		{"cardsync_last_success_timestamp_seconds", "account=beta", 0},
	}
	for _, c := range checks {
		if got := mustValue(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("after beta's failure: %s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := mustValue(t, fams, "cardsync_requests_total", "account=beta,code=4xx,endpoint=cards"); got < 1 {
		t.Errorf("beta's cards 4xx = %v, want at least 1", got)
	}
	if got := mustValue(t, fams, "cardsync_warehouse_bytes", ""); got <= 0 {
		t.Errorf("warehouse bytes = %v, want > 0 (one series for the file)", got)
	}

	// beta recovers: its own cards, nothing of alpha's.
	beta.sim.ClearFaults()
	if _, err := beta.job.Run(t.Context(), worker.TriggerSchedule, worker.Options{}); err != nil {
		t.Fatalf("beta's second run: %v", err)
	}
	fams = families(t, m)
	for _, c := range []struct {
		name, labels string
		want         float64
	}{
		{"cardsync_cards", "account=alpha,state=live", 40},
		{"cardsync_cards", "account=beta,state=live", 25},
		{"cardsync_runs_failed_in_a_row", "account=beta", 0},
		{"cardsync_runs_total", "account=alpha,status=succeeded,trigger=schedule", 1},
		{"cardsync_runs_total", "account=beta,status=succeeded,trigger=schedule", 1},
	} {
		if got := mustValue(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("after beta's success: %s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// TestHealthzJudgesEveryAccount: /healthz is 200 only while every account
// is healthy, and a 503 names the account that is not.
func TestHealthzJudgesEveryAccount(t *testing.T) {
	clk := sim.NewClock()
	m := New(Options{Now: clk.Now, HealthyWithin: 30 * time.Minute, Accounts: []string{"alpha", "beta"}})
	h := m.Handler()
	steps := []struct {
		name    string
		advance time.Duration
		account string // whose run ends now; "" none
		status  string
		want    int
		has     []string
		hasNot  []string
	}{
		{"just started", 0, "", "", 200,
			[]string{"starting: account alpha starting: no successful run yet", " | account beta starting: no successful run yet"}, nil},
		{"alpha succeeds", 10 * time.Minute, "alpha", load.StatusSucceeded, 200,
			[]string{"starting: account beta starting: no successful run yet", "| account alpha ok: the last successful run ended 0s ago"}, nil},
		{"beta fails", time.Minute, "beta", load.StatusFailed, 200,
			[]string{"account beta starting:", "the last run ended failed 0s ago"}, nil},
		{"grace over, beta never succeeded", 20 * time.Minute, "", "", 503,
			[]string{"unhealthy: account beta unhealthy: no successful run in the 31m0s since start-up (healthy_within 30m0s); the last run ended failed 20m0s ago",
				"| account alpha ok: the last successful run ended 21m0s ago", "see `cardsync status -account beta`"},
			[]string{"account alpha unhealthy"}},
		{"beta succeeds", time.Minute, "beta", load.StatusSucceeded, 200,
			[]string{"ok: account alpha ok:", "| account beta ok: the last successful run ended 0s ago"}, []string{"unhealthy"}},
		{"alpha's success too old", 8*time.Minute + time.Second, "", "", 503,
			[]string{"unhealthy: account alpha unhealthy: the last successful run ended 30m1s ago", "| account beta ok:", "`cardsync status -account alpha`"},
			[]string{"account beta unhealthy"}},
		{"both too old", 30 * time.Minute, "", "", 503,
			[]string{"unhealthy: account alpha unhealthy:", " | account beta unhealthy:", "see `cardsync status` and"}, nil},
	}
	for _, s := range steps {
		clk.Advance(s.advance)
		if s.account != "" {
			m.RunFinished(s.account, worker.Result{Trigger: worker.TriggerSchedule, Status: s.status})
		}
		code, body := get(t, h, "/healthz")
		if code != s.want {
			t.Errorf("%s: /healthz = %d %q, want %d", s.name, code, body, s.want)
		}
		for _, want := range s.has {
			if !strings.Contains(body, want) {
				t.Errorf("%s: /healthz body %q lacks %q", s.name, body, want)
			}
		}
		for _, not := range s.hasNot {
			if strings.Contains(body, not) {
				t.Errorf("%s: /healthz body %q has %q", s.name, body, not)
			}
		}
		if strings.Count(body, "\n") != 1 {
			t.Errorf("%s: /healthz body is not one line: %q", s.name, body)
		}
	}
}

// TestRefreshSeedsTheSummarysAccount: a warehouse summary moves the series
// and the health of the account it summarises only.
func TestRefreshSeedsTheSummarysAccount(t *testing.T) {
	clk := sim.NewClock()
	m := New(Options{Now: clk.Now, HealthyWithin: 45 * time.Minute, Accounts: []string{"alpha", "beta"}})
	success := clk.Now().Add(-10 * time.Minute)
	wh := &fakeWarehouse{s: load.Summary{Account: "beta", CurrentCards: 7, RemovalsHeld: 2, LastSuccessAt: &success, DatabaseBytes: 4096,
		Runs: []load.Run{{ID: 2, Status: load.StatusSucceeded, FinishedAt: &success}}}}
	if err := m.Refresh(t.Context(), wh); err != nil {
		t.Fatal(err)
	}
	fams := families(t, m)
	for _, c := range []struct {
		name, labels string
		want         float64
	}{
		{"cardsync_cards", "account=beta,state=live", 7},
		{"cardsync_cards", "account=alpha,state=live", 0},
		{"cardsync_removals_held", "account=beta", 2},
		{"cardsync_removals_held", "account=alpha", 0},
		{"cardsync_last_success_timestamp_seconds", "account=beta", float64(success.Unix())},
		{"cardsync_last_success_timestamp_seconds", "account=alpha", 0},
		{"cardsync_warehouse_bytes", "", 4096},
	} {
		if got := mustValue(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	clk.Advance(46 * time.Minute)
	if ok, reason := m.Health(); ok || !strings.Contains(reason, "account alpha unhealthy: no successful run") ||
		!strings.Contains(reason, "account beta unhealthy: the last successful run ended 56m0s ago") {
		t.Errorf("Health() = %v, %q; want both unhealthy, beta's success seeded", ok, reason)
	}
}

// TestOneNamedAccountSaysItsName: a single [[accounts]] entry is named in
// /healthz; only the [api] table's account keeps the plain line.
func TestOneNamedAccountSaysItsName(t *testing.T) {
	m := New(Options{Accounts: []string{"acme"}})
	if ok, reason := m.Health(); !ok || !strings.HasPrefix(reason, "starting: account acme starting: no successful run yet") {
		t.Errorf("Health() = %v, %q", ok, reason)
	}
	if _, reason := New(Options{}).Health(); !strings.HasPrefix(reason, "starting: no successful run yet") {
		t.Errorf("the default account's Health() = %q, want the plain line", reason)
	}
}

// TestHealthzNamesTheStatusCommand: the command an unhealthy /healthz
// points to is complete: the daemon's -config, and -account for the one
// account that is unhealthy.
func TestHealthzNamesTheStatusCommand(t *testing.T) {
	clk := sim.NewClock()
	m := New(Options{Now: clk.Now, HealthyWithin: 30 * time.Minute, Accounts: []string{"alpha", "beta"},
		Commands: worker.CommandLine{Config: "/etc/cardsync/config.toml"}})
	clk.Advance(10 * time.Minute)
	m.RunFinished("alpha", worker.Result{Trigger: worker.TriggerSchedule, Status: load.StatusSucceeded})
	clk.Advance(21 * time.Minute)
	code, body := get(t, m.Handler(), "/healthz")
	if want := "see `cardsync status -config /etc/cardsync/config.toml -account beta`"; code != 503 || !strings.Contains(body, want) {
		t.Errorf("/healthz = %d %q, want 503 naming %q", code, body, want)
	}
}
