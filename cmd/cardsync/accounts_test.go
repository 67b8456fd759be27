package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// accountsEnv is an environment whose config file has two [[accounts]],
// alpha and beta, each against a simulator of its own.
func accountsEnv(t *testing.T) (alpha, beta *sim.Server, e *env) {
	t.Helper()
	alpha, e = newEnv(t, sim.Options{Seed: 51, Cards: 45})
	beta = sim.New(sim.Options{Seed: 52, Cards: 70, Window: time.Second, Limit: 1000, AuthLimit: 100})
	ts := httptest.NewServer(beta)
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(sim.DefaultPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, a := range []struct{ name, url string }{{"alpha", e.vars["CARDSYNC_API_BASE_URL"]}, {"beta", ts.URL}} {
		fmt.Fprintf(&b, "[[accounts]]\nname = %q\nbase_url = %q\nemail = %q\npassword_file = %q\nrate_group = \"shared\"\n\n",
			a.name, a.url, sim.DefaultEmail, pw)
	}
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	delete(e.vars, "CARDSYNC_API_BASE_URL")
	e.vars["CARDSYNC_CONFIG"] = cfg
	return alpha, beta, e
}

// accountCards counts the current cards of account in the warehouse.
func accountCards(t *testing.T, e *env, account string) int {
	t.Helper()
	var n int
	if err := openDB(t, e.db).QueryRow(`SELECT count(*) FROM cards WHERE removed_at IS NULL AND account = ?`, account).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBackfillAccounts: backfill syncs every account into its own rows,
// -account one of them, an unknown name is a usage error listing the
// names, and a failing account fails the command without stopping the
// other.
func TestBackfillAccounts(t *testing.T) {
	_, beta, e := accountsEnv(t)
	code, out, errOut := e.run(t.Context(), "backfill")
	if code != 0 {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "account alpha: run ") || !strings.Contains(out, "account beta: run ") {
		t.Errorf("backfill output lacks a summary per account:\n%s", out)
	}
	if a, b := accountCards(t, e, "alpha"), accountCards(t, e, "beta"); a != 45 || b != 70 {
		t.Errorf("current cards: alpha %d, beta %d; want 45, 70", a, b)
	}

	code, _, errOut = e.run(t.Context(), "backfill", "-account", "gamma")
	if code != exitConfig || !strings.Contains(errOut, `-account "gamma": no such account; the configured accounts are: alpha, beta`) {
		t.Errorf("backfill -account gamma: exit %d, stderr:\n%s", code, errOut)
	}

	beta.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultStatus, Status: 401})
	code, out, _ = e.run(t.Context(), "backfill")
	if code != exitAuth || !strings.Contains(out, "account alpha: run ") || !strings.Contains(out, "account beta: failed (exit 3)") {
		t.Errorf("backfill with beta refused: exit %d, want %d, alpha synced and beta failed:\n%s", code, exitAuth, out)
	}
	code, out, errOut = e.run(t.Context(), "backfill", "-account", "alpha")
	if code != 0 || strings.Contains(out, "account beta") {
		t.Errorf("backfill -account alpha: exit %d\n%s\n%s", code, out, errOut)
	}
	runs := map[string]int{}
	rows, err := openDB(t, e.db).Query(`SELECT account, count(*) FROM sync_runs GROUP BY account`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var a string
		var n int
		if err := rows.Scan(&a, &n); err != nil {
			t.Fatal(err)
		}
		runs[a] = n
	}
	if runs["alpha"] != 3 || runs["beta"] != 2 || len(runs) != 2 {
		t.Errorf("runs per account %v, want alpha 3, beta 2", runs)
	}

	// status: one entry per account; unhealthy because beta's last run
	// failed; -account alpha alone is healthy.
	var doc struct {
		Healthy  bool `json:"healthy"`
		Accounts []struct {
			Account string `json:"account"`
			Healthy bool   `json:"healthy"`
			Cards   struct {
				Current int `json:"current"`
			} `json:"cards"`
		} `json:"accounts"`
	}
	code, out, _ = e.run(t.Context(), "status", "-json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("status -json: %v\n%s", err, out)
	}
	if code != exitFailure || doc.Healthy || len(doc.Accounts) != 2 || doc.Accounts[0].Account != "alpha" || !doc.Accounts[0].Healthy ||
		doc.Accounts[0].Cards.Current != 45 || doc.Accounts[1].Account != "beta" || doc.Accounts[1].Healthy || doc.Accounts[1].Cards.Current != 70 {
		t.Errorf("status -json: exit %d, %+v; want 1, alpha healthy with 45 cards, beta unhealthy with 70", code, doc)
	}
	code, out, _ = e.run(t.Context(), "status", "-account", "alpha")
	if code != 0 || !strings.HasPrefix(out, "healthy: 1 account") || !strings.Contains(out, "== account alpha ==") || strings.Contains(out, "beta") {
		t.Errorf("status -account alpha: exit %d\n%s", code, out)
	}
	code, out, _ = e.run(t.Context(), "status")
	if code != exitFailure || !strings.HasPrefix(out, "UNHEALTHY: account beta") {
		t.Errorf("status: exit %d\n%s", code, out)
	}
}

// TestCheckAccounts: check goes on past a failing account, prints each
// account's result, checks the warehouse, and exits with the code of the
// first failure in config order.
func TestCheckAccounts(t *testing.T) {
	alpha, _, e := accountsEnv(t)
	alpha.InjectFault(sim.Fault{Endpoint: sim.EndpointToken, Kind: sim.FaultStatus, Status: 401})
	code, out, errOut := e.run(t.Context(), "check")
	if code != exitAuth {
		t.Errorf("check: exit %d, want %d\n%s\n%s", code, exitAuth, out, errOut)
	}
	for _, want := range []string{"FAIL  account alpha: ", "ok    account beta: authenticated", "ok    account beta: account ", "does not exist yet"} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "account alpha: ") {
		t.Errorf("stderr does not name the failing account:\n%s", errOut)
	}
}
