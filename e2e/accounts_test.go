//go:build e2e

package e2e

import (
	"database/sql"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// accountRun is one sync_runs row of an account.
type accountRun struct {
	id                int64
	status            string
	started, finished string
}

// accountRuns lists the runs of account, oldest first.
func accountRuns(t *testing.T, path, account string) []accountRun {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT run_id, status, started_at, coalesce(finished_at, '') FROM sync_runs WHERE account = ? ORDER BY run_id`, account)
	if err != nil {
		return nil // not created yet
	}
	defer rows.Close()
	var out []accountRun
	for rows.Next() {
		var r accountRun
		if err := rows.Scan(&r.id, &r.status, &r.started, &r.finished); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// succeeded returns the runs that succeeded.
func succeeded(rs []accountRun) []accountRun {
	var out []accountRun
	for _, r := range rs {
		if r.status == "succeeded" {
			out = append(out, r)
		}
	}
	return out
}

// TestManyAccountsOneDaemon: one `cardsync serve` syncs two [[accounts]]
// of one warehouse from two simulators with different data. beta's
// upstream hangs every card page past the client's timeout, so each of its
// runs lasts until max_wait gives up; alpha keeps its schedule meanwhile:
// three of alpha's runs start and end inside beta's first run. Once beta's
// upstream recovers, both accounts' rows equal their simulator.
func TestManyAccountsOneDaemon(t *testing.T) {
	alpha := newUpstream(t, sim.Options{Seed: 71, Cards: 180, ExtraFields: true})
	beta := newUpstream(t, sim.Options{Seed: 72, Cards: 130})
	beta.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultLatency, Latency: time.Minute})
	d := newDeployment(t, nil)
	d.useAccounts(t, account{"alpha", alpha.URL}, account{"beta", beta.URL})
	d.env["CARDSYNC_API_MAX_WAIT"] = "30s" // each of beta's runs lasts at least this
	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 2s"
	d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
	serve := d.startBG("serve")

	pollUntil(t, 90*time.Second, "three successful runs of alpha", func() bool {
		return len(succeeded(accountRuns(t, d.db, "alpha"))) >= 3
	}, serve)
	ar := succeeded(accountRuns(t, d.db, "alpha"))
	br := accountRuns(t, d.db, "beta")
	if len(br) == 0 {
		t.Fatal("beta has no run while alpha ran three times")
	}
	// Times are whole UTC seconds in one format: text order is time order.
	first := br[0]
	if first.started > ar[1].started || (first.finished != "" && first.finished < ar[2].finished) {
		t.Errorf("beta's first run (%s to %q) does not span alpha's runs %d to %d (%s to %s): alpha waited for beta",
			first.started, first.finished, ar[1].id, ar[2].id, ar[1].started, ar[2].finished)
	}

	beta.ClearFaults()
	pollUntil(t, 90*time.Second, "a successful run of beta", func() bool {
		return len(succeeded(accountRuns(t, d.db, "beta"))) >= 1
	}, serve)
	_ = serve.cmd.Process.Signal(syscall.SIGTERM)
	if code := serve.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, lastLines(serve.stderr.String()))
	}
	assertAccountTruth(t, alpha, d.db, "alpha")
	assertAccountTruth(t, beta, d.db, "beta")
	db := openRO(t, d.db)
	if n := queryInt(t, db, `SELECT count(*) FROM cards WHERE account NOT IN ('alpha', 'beta')`); n != 0 {
		t.Errorf("%d cards outside the configured accounts", n)
	}
	var integrity string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Errorf("integrity_check = %q, %v", integrity, err)
	}
	for _, want := range []string{`"account":"alpha"`, `"account":"beta"`} {
		if !strings.Contains(serve.stderr.String(), want) {
			t.Errorf("serve's log has no line with %s", want)
		}
	}
}
