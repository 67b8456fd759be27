package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// TestBackfillTextfileWithAccounts: with several accounts, the textfile
// holds every selected account's series under its account label, and one
// account's failure shows under its name only.
func TestBackfillTextfileWithAccounts(t *testing.T) {
	_, beta, e := accountsEnv(t)
	path := filepath.Join(t.TempDir(), "cardsync.prom")
	if code, out, stderr := e.run(t.Context(), "backfill", "-metrics-textfile", path); code != 0 {
		t.Fatalf("backfill exit %d:\n%s\n%s", code, out, stderr)
	}
	fams := readTextfile(t, path)
	label := func(account string, kv ...string) map[string]string {
		l := map[string]string{"account": account}
		for i := 0; i+1 < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		return l
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"cardsync_runs_total", label("alpha", "trigger", "backfill", "status", "succeeded"), 1},
		{"cardsync_runs_total", label("beta", "trigger", "backfill", "status", "succeeded"), 1},
		{"cardsync_cards", label("alpha", "state", "live"), 45},
		{"cardsync_cards", label("beta", "state", "live"), 70},
		{"cardsync_cards_synced_total", label("alpha", "change", "new"), 45},
		{"cardsync_cards_synced_total", label("beta", "change", "new"), 70},
		{"cardsync_auth_requests_total", label("alpha"), 1},
		{"cardsync_auth_requests_total", label("beta"), 1},
	}
	for _, c := range checks {
		if got, ok := sample(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	for _, a := range []string{"alpha", "beta"} {
		if got, _ := sample(fams, "cardsync_last_success_timestamp_seconds", label(a)); got < float64(time.Now().Add(-time.Minute).Unix()) {
			t.Errorf("%s's last success %v, want about now", a, got)
		}
	}
	if _, ok := sample(fams, "cardsync_cards", label("default", "state", "live")); ok {
		t.Error("the textfile has series of an account default that the config does not name")
	}
	if n := len(fams["cardsync_warehouse_bytes"].GetMetric()); n != 1 {
		t.Errorf("cardsync_warehouse_bytes has %d series, want 1 (one file)", n)
	}

	// beta fails: its failure is beta's; alpha's run succeeded.
	beta.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultStatus, Status: 400})
	if code, _, _ := e.run(t.Context(), "backfill", "-metrics-textfile", path); code == 0 {
		t.Fatal("backfill with beta answering 400 exited 0")
	}
	fams = readTextfile(t, path)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"cardsync_runs_total", label("beta", "trigger", "backfill", "status", "failed"), 1},
		{"cardsync_runs_total", label("alpha", "trigger", "backfill", "status", "failed"), 0},
		{"cardsync_runs_total", label("alpha", "trigger", "backfill", "status", "succeeded"), 1},
		{"cardsync_runs_failed_in_a_row", label("beta"), 1},
		{"cardsync_runs_failed_in_a_row", label("alpha"), 0},
		{"cardsync_cards", label("beta", "state", "live"), 70},
	} {
		if got, ok := sample(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("after beta failed: %s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}

	// -account alpha: alpha's series only.
	alphaOnly := filepath.Join(t.TempDir(), "alpha.prom")
	if code, _, stderr := e.run(t.Context(), "backfill", "-account", "alpha", "-metrics-textfile", alphaOnly); code != 0 {
		t.Fatalf("backfill -account alpha exit %d: %s", code, stderr)
	}
	fams = readTextfile(t, alphaOnly)
	if got, ok := sample(fams, "cardsync_runs_total", label("alpha", "trigger", "backfill", "status", "succeeded")); !ok || got != 1 {
		t.Errorf("alpha's succeeded backfills = %v (present %v), want 1", got, ok)
	}
	for name, mf := range fams {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "account" && l.GetValue() != "alpha" {
					t.Errorf("backfill -account alpha wrote %s{account=%q}", name, l.GetValue())
				}
			}
		}
	}
}

// TestServeMetricsWithAccounts: serve labels each account's series with its
// name, seeds and refreshes each account's gauges from its own rows, and
// /healthz judges every account.
func TestServeMetricsWithAccounts(t *testing.T) {
	_, beta, e := accountsEnv(t)
	addr := freePort(t)
	e.vars["CARDSYNC_METRICS_LISTEN"] = addr
	e.vars["CARDSYNC_SCHEDULE_CRON"] = "@every 1h"
	// beta's runs fail; alpha's succeed.
	beta.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultStatus, Status: 400})
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	e.vars["NOTIFY_SOCKET"] = sock
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		buf := make([]byte, 4096)
		ended := map[string]bool{}
		for len(ended) < 2 {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			for _, a := range []string{"alpha", "beta"} {
				if strings.HasPrefix(string(buf[:n]), "STATUS=account "+a+": last run ") {
					ended[a] = true
				}
			}
		}
	}()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	var stderr string
	go func() {
		var code int
		code, _, stderr = e.run(ctx, "serve")
		done <- code
	}()
	select {
	case <-ran:
	case code := <-done:
		t.Fatalf("serve exited %d before its first runs ended: %s", code, stderr)
	case <-time.After(20 * time.Second):
		t.Fatal("the runs at start-up did not end in 20s")
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/metrics")
	for _, want := range []string{
		`cardsync_runs_total{account="alpha",status="succeeded",trigger="schedule"} 1`,
		`cardsync_runs_total{account="alpha",status="failed",trigger="schedule"} 0`,
		`cardsync_runs_total{account="beta",status="succeeded",trigger="schedule"} 0`,
		`cardsync_runs_total{account="beta",status="failed",trigger="schedule"} 1`,
		`cardsync_cards{account="alpha",state="live"} 45`,
		`cardsync_cards{account="beta",state="live"} 0`,
		`cardsync_runs_failed_in_a_row{account="alpha"} 0`,
		`cardsync_runs_failed_in_a_row{account="beta"} 1`,
		`cardsync_auth_requests_total{account="alpha"} 1`,
		`cardsync_auth_requests_total{account="beta"} 1`,
		`cardsync_last_success_timestamp_seconds{account="beta"} 0`,
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	if strings.Contains(body, `account="default"`) {
		t.Error("/metrics has series of an account default that the config does not name")
	}
	// Within healthy_within of start-up, beta (no success yet) is starting.
	if code, body := get("/healthz"); code != 200 || !strings.HasPrefix(body, "starting: account beta starting: no successful run yet") ||
		!strings.Contains(body, "| account alpha ok: ") {
		t.Errorf("/healthz = %d %q, want 200 naming beta starting and alpha ok", code, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d: %s", code, stderr)
	}
}
