//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// grafanaDashboard is the part of monitoring/grafana-dashboard.json the
// test reads: the panels' queries and the template variables' queries.
type grafanaDashboard struct {
	Panels     []grafanaPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

type grafanaPanel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // a collapsed row's panels
}

// dashboardQuery is one panel target of the dashboard.
type dashboardQuery struct {
	panel, refID, expr string
}

// readDashboard returns every panel target of the shipped dashboard, in
// the order of the file, and the template variables' definitions by name.
func readDashboard(t *testing.T) ([]dashboardQuery, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "monitoring", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	var out []dashboardQuery
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				out = append(out, dashboardQuery{panel: fmt.Sprintf("%d %q", p.ID, p.Title), refID: tg.RefID, expr: tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Definition
	}
	return out, vars
}

// grafanaVars is what Grafana puts in place of the dashboard's variables
// before it sends a query. The template variables take the values of one
// selection (".*" is the dashboard's "All"; a multi-value selection
// becomes "(a|b)"). Grafana's own interval variables depend on the panel
// width and the time range; the test uses values that fit its 1 s scrape
// interval: $__rate_interval 1m (Grafana: at least 4 scrape intervals),
// $__interval 30s, $__range 1h (the dashboard's own range is 24h; the
// test's data spans less than a minute either way).
func grafanaVars(job, instance, account string) *strings.Replacer {
	return strings.NewReplacer(
		"${__rate_interval}", "1m", "$__rate_interval", "1m",
		"${__interval}", "30s", "$__interval", "30s",
		"${__range}", "1h", "$__range", "1h",
		"${job}", job, "$job", job,
		"${instance}", instance, "$instance", instance,
		"${account}", account, "$account", account,
	)
}

// instantQuery runs query at now through Prometheus's /api/v1/query and
// returns the API's status, error and the result's values (NaN included).
func (p promAPI) instantQuery(query string) (status, errText string, values []float64, err error) {
	r, err := http.Get(p.base + "/api/v1/query?" + url.Values{"query": {query}}.Encode())
	if err != nil {
		return "", "", nil, err
	}
	defer r.Body.Close()
	resp, err := io.ReadAll(r.Body)
	if err != nil {
		return "", "", nil, err
	}
	var env struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(resp, &env); err != nil {
		return "", "", nil, fmt.Errorf("decode %s: %w", resp, err)
	}
	if env.Status != "success" {
		return env.Status, env.Error, nil, nil
	}
	parse := func(v [2]any) float64 {
		s, _ := v[1].(string)
		var f float64
		switch s {
		case "NaN":
			return math.NaN()
		case "+Inf":
			return math.Inf(1)
		case "-Inf":
			return math.Inf(-1)
		}
		fmt.Sscan(s, &f)
		return f
	}
	switch env.Data.ResultType {
	case "vector":
		var r []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(env.Data.Result, &r); err != nil {
			return "", "", nil, fmt.Errorf("decode vector: %w", err)
		}
		for _, s := range r {
			values = append(values, parse(s.Value))
		}
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(env.Data.Result, &v); err != nil {
			return "", "", nil, fmt.Errorf("decode scalar: %w", err)
		}
		values = append(values, parse(v))
	default:
		return env.Status, "result type " + env.Data.ResultType + ", want an instant vector", nil, nil
	}
	return env.Status, "", values, nil
}

// labelValues answers a label_values(SELECTOR, LABEL) variable query as
// Grafana does: /api/v1/label/LABEL/values?match[]=SELECTOR.
func (p promAPI) labelValues(selector, label string) []string {
	var out []string
	if !p.get("/api/v1/label/"+url.PathEscape(label)+"/values", url.Values{"match[]": {selector}}, &out) {
		return nil
	}
	return out
}

// TestDashboardQueriesReturnData runs the Debian prometheus binary against
// `cardsync serve` with two accounts and, once runs have succeeded and
// been scraped, evaluates every panel query of the shipped Grafana
// dashboard through Prometheus's query API, for "All", one account and
// instance, and a multi-value selection: each must be valid PromQL and
// return at least one series with a number. The template variables'
// queries must offer the job, the instance and both accounts.
func TestDashboardQueriesReturnData(t *testing.T) {
	if testing.Short() {
		// The binary under test is built without -race either way: the
		// race run would only repeat the same queries.
		t.Skip("-short: the dashboard's queries run in the full suite")
	}
	prom := requireTool(t, "prometheus", "prometheus")
	deadline := time.Now().Add(50 * time.Second)
	queries, vars := readDashboard(t)
	if len(queries) == 0 {
		t.Fatal("the dashboard has no panel query")
	}

	alpha := newUpstream(t, sim.Options{Seed: 91, Cards: 40})
	beta := newUpstream(t, sim.Options{Seed: 92, Cards: 25})
	d := newDeployment(t, nil)
	d.useAccounts(t, account{"alpha", alpha.URL}, account{"beta", beta.URL})
	metricsAddr := freeAddr(t)
	d.env["CARDSYNC_METRICS_LISTEN"] = metricsAddr
	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 2s"
	d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
	d.env["CARDSYNC_API_MAX_WAIT"] = "1s"
	// Scheduled backups, so the backup panels have a schedule, a success
	// and an age to show.
	d.env["CARDSYNC_BACKUP_CRON"] = "@every 3s"

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	defer startServe(t, ctx, d)()
	api := startScraper(t, ctx, prom, metricsAddr, false)

	// Both accounts have succeeded and taken a snapshot, and Prometheus
	// has scraped enough samples for rate() and increase() over 1m.
	waitFor(t, deadline, "both accounts' successes and snapshots in Prometheus", func() bool {
		return len(api.vector(`cardsync_last_success_timestamp_seconds{job="cardsync"} > 0`)) == 2 &&
			len(api.vector(`cardsync_account_snapshot_timestamp_seconds{job="cardsync"} > 0`)) == 2 &&
			len(api.vector(`cardsync_backup_last_success_timestamp_seconds{job="cardsync"} > 0`)) == 1
	})
	waitFor(t, deadline, "a few scrapes after the first successes", func() bool {
		return len(api.vector(`count_over_time((cardsync_last_success_timestamp_seconds{job="cardsync"} > 0)[1m:1s]) >= 4`)) == 2 &&
			len(api.vector(`cardsync_runs_total{job="cardsync",trigger="schedule",status="succeeded"} >= 2`)) == 2
	})

	// The variables offer what a user picks from.
	for name, want := range map[string][]string{"job": {"cardsync"}, "instance": {metricsAddr}, "account": {"alpha", "beta"}} {
		def := vars[name]
		m := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`).FindStringSubmatch(def)
		if m == nil || m[2] != name {
			t.Errorf("variable %s: query %q is not label_values(SELECTOR, %s)", name, def, name)
			continue
		}
		got := api.labelValues(grafanaVars("cardsync", ".*", ".*").Replace(m[1]), name)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("variable %s: %s offers %q, want %q among them", name, def, got, w)
			}
		}
	}

	// Grafana escapes a chosen value's regexp characters, doubling the
	// backslash for the PromQL string: 127\\.0\\.0\\.1:9464.
	instance := strings.ReplaceAll(regexp.QuoteMeta(metricsAddr), `\`, `\\`)
	selections := []struct {
		name string
		vars *strings.Replacer
	}{
		{"All", grafanaVars("cardsync", ".*", ".*")},
		{"instance and account alpha", grafanaVars("cardsync", instance, "alpha")},
		{"accounts alpha and beta", grafanaVars("cardsync", "("+instance+")", "(alpha|beta)")},
	}
	var summary []string
	for _, q := range queries {
		for _, sel := range selections {
			expr := sel.vars.Replace(q.expr)
			if strings.Contains(expr, "$") {
				t.Errorf("panel %s %s: a variable the test does not know is left in %q", q.panel, q.refID, expr)
				continue
			}
			status, errText, values, err := api.instantQuery(expr)
			switch {
			case err != nil:
				t.Errorf("panel %s %s (%s): %v", q.panel, q.refID, sel.name, err)
			case status != "success" || errText != "":
				t.Errorf("panel %s %s (%s): %s %s\n%s", q.panel, q.refID, sel.name, status, errText, expr)
			case len(values) == 0:
				t.Errorf("panel %s %s (%s): no data\n%s", q.panel, q.refID, sel.name, expr)
			case !slices.ContainsFunc(values, func(v float64) bool { return !math.IsNaN(v) }):
				t.Errorf("panel %s %s (%s): only NaN %v\n%s", q.panel, q.refID, sel.name, values, expr)
			}
			if sel.name == "All" {
				summary = append(summary, fmt.Sprintf("%s %s: %d series", q.panel, q.refID, len(values)))
			}
		}
	}
	t.Logf("%d panel queries, %d selections each:\n%s", len(queries), len(selections), strings.Join(summary, "\n"))
}
