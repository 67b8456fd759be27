//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/internal/testbinary"
	"github.com/cardsync/cardsync/sim"
)

// requireTool returns the path of a program the test needs, or skips; with
// CARDSYNC_REQUIRE_TOOLS set (CI) a missing program fails the test.
func requireTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CARDSYNC_REQUIRE_TOOLS") != "" {
			t.Fatalf("%s not found and CARDSYNC_REQUIRE_TOOLS is set (apt-get install %s)", name, pkg)
		}
		t.Skipf("%s not installed (apt-get install %s)", name, pkg)
	}
	return p
}

// freeAddr returns a loopback host:port nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// promAPI queries a Prometheus server's HTTP API.
type promAPI struct{ base string }

// get decodes the data of an API answer into out; false when the server
// did not answer (yet) or answered an error.
func (p promAPI) get(path string, q url.Values, out any) bool {
	resp, err := http.Get(p.base + path + "?" + q.Encode())
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &env) != nil || env.Status != "success" {
		return false
	}
	return json.Unmarshal(env.Data, out) == nil
}

// vector runs an instant query and returns each series' labels and value.
func (p promAPI) vector(query string) []promSample {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if !p.get("/api/v1/query", url.Values{"query": {query}}, &data) {
		return nil
	}
	var out []promSample
	for _, r := range data.Result {
		s, _ := r.Value[1].(string)
		var v float64
		fmt.Sscan(s, &v)
		out = append(out, promSample{r.Metric, v})
	}
	return out
}

type promSample struct {
	labels map[string]string
	value  float64
}

// alerts returns the firing alerts' names.
func (p promAPI) firing() []string {
	var data struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	if !p.get("/api/v1/alerts", nil, &data) {
		return nil
	}
	var out []string
	for _, a := range data.Alerts {
		if a.State == "firing" {
			out = append(out, a.Labels["alertname"])
		}
	}
	return out
}

// waitFor polls cond (a real external process: Prometheus scrapes and
// evaluates on its own clock) until it holds or the deadline passes.
func waitFor(t *testing.T, deadline time.Time, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestPrometheusScrapesServeAndFiresAnAlert runs the Debian prometheus
// binary against `cardsync serve` with the shipped rules: the series are
// there through a successful run, and failing runs fire CardsyncRunsFailing.
func TestPrometheusScrapesServeAndFiresAnAlert(t *testing.T) {
	prom := requireTool(t, "prometheus", "prometheus")
	deadline := time.Now().Add(50 * time.Second)
	up := newUpstream(t, sim.Options{Seed: 41, Cards: 30})
	d := newDeployment(t, up)
	metricsAddr := freeAddr(t)
	d.env["CARDSYNC_METRICS_LISTEN"] = metricsAddr
	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 2s"
	d.env["CARDSYNC_API_MAX_WAIT"] = "1s"

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	defer startServe(t, ctx, d)()

	// Prometheus with the shipped rules, unchanged.
	api := startScraper(t, ctx, prom, metricsAddr, true)

	// A successful run, scraped.
	waitFor(t, deadline, "a successful run in Prometheus", func() bool {
		v := api.vector(`cardsync_runs_total{job="cardsync",trigger="schedule",status="succeeded"} >= 1`)
		return len(v) == 1
	})
	if v := api.vector(`up{job="cardsync"}`); len(v) != 1 || v[0].value != 1 {
		t.Errorf("up{job=\"cardsync\"} = %v, want 1", v)
	}
	names := map[string]bool{}
	for _, s := range api.vector(`group by (__name__) ({job="cardsync",__name__=~"cardsync_.+"})`) {
		names[s.labels["__name__"]] = true
	}
	for _, want := range []string{
		"cardsync_runs_total", "cardsync_run_duration_seconds_bucket", "cardsync_last_run_timestamp_seconds",
		"cardsync_last_success_timestamp_seconds", "cardsync_cards", "cardsync_cards_synced_total", "cardsync_removals_held",
		"cardsync_requests_total", "cardsync_retries_total", "cardsync_rate_limited_total", "cardsync_auth_requests_total",
		"cardsync_account_snapshot_timestamp_seconds", "cardsync_warehouse_bytes", "cardsync_backup_last_success_timestamp_seconds",
	} {
		if !names[want] {
			t.Errorf("Prometheus has no %s", want)
		}
	}
	if v := api.vector(`cardsync_cards{account="default",state="live"}`); len(v) != 1 || v[0].value != 30 {
		t.Errorf("cardsync_cards{account=\"default\",state=\"live\"} = %v, want 30", v)
	}

	// Then failing runs: the API refuses every card page.
	up.InjectFault(sim.Fault{Endpoint: "cards", Kind: sim.FaultStatus, Status: 400})
	waitFor(t, deadline, "failed runs in Prometheus", func() bool {
		return len(api.vector(`cardsync_runs_total{trigger="schedule",status="failed"} >= 1`)) == 1
	})
	waitFor(t, deadline, "CardsyncRunsFailing firing", func() bool {
		for _, a := range api.firing() {
			if a == "CardsyncRunsFailing" {
				return true
			}
		}
		return false
	})
	t.Logf("firing: %v", api.firing())
}

// startScraper starts the Debian prometheus binary scraping target as job
// cardsync every second (with the shipped alert rules, unchanged, when
// withRules), stopped when the test ends, and returns its API.
func startScraper(t *testing.T, ctx context.Context, prom, target string, withRules bool) promAPI {
	t.Helper()
	dir := t.TempDir()
	ruleFiles := ""
	if withRules {
		rules, err := os.ReadFile(filepath.Join("..", "monitoring", "alerts.yml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "alerts.yml"), rules, 0o644); err != nil {
			t.Fatal(err)
		}
		ruleFiles = "rule_files: [alerts.yml]\n"
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
%sscrape_configs:
  - job_name: cardsync
    static_configs:
      - targets: [%q]
`, ruleFiles, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	var promBuf bytes.Buffer
	promLog := &lockedWriter{w: &promBuf}
	p := exec.CommandContext(ctx, prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr)
	p.Dir = dir
	p.Stdout, p.Stderr = promLog, promLog
	testbinary.Own(p)
	p.Cancel = func() error { return p.Process.Signal(syscall.SIGTERM) }
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Process.Signal(syscall.SIGTERM)
		_ = p.Wait()
		if t.Failed() {
			t.Logf("prometheus' log:\n%s", promLog.String()) // after Wait: no writer left
		}
	})
	return promAPI{base: "http://" + promAddr}
}

// startServe starts `cardsync serve` in d and returns the func that stops
// it with SIGTERM (also sent when ctx ends), waits for it and, when the test
// failed, logs what it wrote.
func startServe(t *testing.T, ctx context.Context, d *deployment) (stop func()) {
	t.Helper()
	serve, _, serveErr := d.command(ctx, "serve")
	serve.Cancel = func() error { return serve.Process.Signal(syscall.SIGTERM) }
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	return func() {
		_ = serve.Process.Signal(syscall.SIGTERM)
		_ = serve.Wait()
		if t.Failed() {
			t.Logf("serve's log:\n%s", serveErr.String())
		}
	}
}
