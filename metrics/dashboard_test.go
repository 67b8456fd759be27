package metrics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// dashboardFile is the shipped Grafana dashboard.
var dashboardFile = filepath.Join("..", "monitoring", "grafana-dashboard.json")

// dashDatasource is how every panel, target and variable names its data
// source: the Prometheus picked at import (__inputs DS_PROMETHEUS).
type dashDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type dashPanel struct {
	ID          int             `json:"id"`
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Datasource  *dashDatasource `json:"datasource"`
	GridPos     *struct {
		X int `json:"x"`
		Y int `json:"y"`
		W int `json:"w"`
		H int `json:"h"`
	} `json:"gridPos"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
		Overrides []struct {
			Properties []struct {
				ID    string `json:"id"`
				Value any    `json:"value"`
			} `json:"properties"`
		} `json:"overrides"`
	} `json:"fieldConfig"`
	Targets []struct {
		Datasource *dashDatasource `json:"datasource"`
		RefID      string          `json:"refId"`
		Expr       string          `json:"expr"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"` // a collapsed row's panels
}

type dashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Refresh       string `json:"refresh"`
	Time          struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"time"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Datasource *dashDatasource `json:"datasource"`
			Definition string          `json:"definition"`
			Multi      bool            `json:"multi"`
			IncludeAll bool            `json:"includeAll"`
			AllValue   string          `json:"allValue"`
			Current    struct {
				Value any `json:"value"`
			} `json:"current"`
		} `json:"list"`
	} `json:"templating"`
	Panels []dashPanel `json:"panels"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// allPanels returns the dashboard's panels, a collapsed row's included.
func allPanels(ps []dashPanel) []dashPanel {
	var out []dashPanel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

// dashboardUnits are the units the dashboard's panels may use.
var dashboardUnits = []string{"s", "bytes", "reqps", "short"}

// TestDashboardStructure checks what an import into Grafana and a reader
// of the dashboard rely on: the data source input, the variables, and on
// every panel a unique id, a title, a one-line description, a place on the
// grid no other panel takes, the imported data source and a unit.
func TestDashboardStructure(t *testing.T) {
	d := readDashboard(t)
	if d.UID != "cardsync" || d.Title != "cardsync" || d.SchemaVersion != 39 || d.Refresh != "1m" ||
		d.Time.From != "now-24h" || d.Time.To != "now" {
		t.Errorf("uid %q, title %q, schemaVersion %d, refresh %q, time %s to %s; want cardsync, cardsync, 39, 1m, now-24h to now",
			d.UID, d.Title, d.SchemaVersion, d.Refresh, d.Time.From, d.Time.To)
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" || d.Inputs[0].PluginID != "prometheus" {
		t.Errorf("__inputs = %+v, want one Prometheus data source input DS_PROMETHEUS", d.Inputs)
	}
	wantDS := dashDatasource{Type: "prometheus", UID: "${DS_PROMETHEUS}"}

	checkDashboardVariables(t, d, wantDS)

	ids := map[int]string{}
	taken := map[[2]int]string{}
	panels := allPanels(d.Panels)
	queries := 0
	for _, p := range panels {
		name := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.ID <= 0 {
			t.Errorf("%s: id %d", name, p.ID)
		}
		if other, ok := ids[p.ID]; ok {
			t.Errorf("%s: id also used by %s", name, other)
		}
		ids[p.ID] = name
		if strings.TrimSpace(p.Title) == "" {
			t.Errorf("%s: no title", name)
		}
		if g := p.GridPos; g == nil || g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			t.Errorf("%s: gridPos %+v, want x, y >= 0, w, h > 0, x+w <= 24", name, g)
		} else {
		cells:
			for x := g.X; x < g.X+g.W; x++ {
				for y := g.Y; y < g.Y+g.H; y++ {
					if other, ok := taken[[2]int{x, y}]; ok {
						t.Errorf("%s overlaps %s at x %d, y %d", name, other, x, y)
						break cells
					}
					taken[[2]int{x, y}] = name
				}
			}
		}
		if p.Type == "row" {
			continue
		}
		if !slices.Contains([]string{"timeseries", "stat", "table"}, p.Type) {
			t.Errorf("%s: type %q", name, p.Type)
		}
		if p.Datasource == nil || *p.Datasource != wantDS {
			t.Errorf("%s: datasource %v, want %v", name, p.Datasource, wantDS)
		}
		if strings.TrimSpace(p.Description) == "" || strings.Contains(p.Description, "\n") {
			t.Errorf("%s: description %q, want one line", name, p.Description)
		}
		if !slices.Contains(dashboardUnits, p.FieldConfig.Defaults.Unit) {
			t.Errorf("%s: unit %q, want one of %v", name, p.FieldConfig.Defaults.Unit, dashboardUnits)
		}
		for _, o := range p.FieldConfig.Overrides {
			for _, pr := range o.Properties {
				if u, _ := pr.Value.(string); pr.ID == "unit" && !slices.Contains(dashboardUnits, u) {
					t.Errorf("%s: override unit %q, want one of %v", name, u, dashboardUnits)
				}
			}
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no query", name)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			queries++
			if tg.Datasource == nil || *tg.Datasource != wantDS {
				t.Errorf("%s %s: datasource %v, want %v", name, tg.RefID, tg.Datasource, wantDS)
			}
			if tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("%s: refId %q empty or repeated", name, tg.RefID)
			}
			refs[tg.RefID] = true
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("%s %s: no expression", name, tg.RefID)
			}
		}
	}
	if queries == 0 {
		t.Fatal("the dashboard has no query")
	}
}

// checkDashboardVariables checks d's template variables: job, instance and
// account, label_values queries on the data source wantDS.
func checkDashboardVariables(t *testing.T, d dashboard, wantDS dashDatasource) {
	t.Helper()
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if v.Type != "query" || v.Datasource == nil || *v.Datasource != wantDS || !strings.HasPrefix(v.Definition, "label_values(") {
			t.Errorf("variable %s: type %q, datasource %v, query %q; want a label_values query on ${DS_PROMETHEUS}", v.Name, v.Type, v.Datasource, v.Definition)
		}
		switch v.Name {
		case "job":
			if v.Current.Value != "cardsync" {
				t.Errorf("variable job defaults to %v, want cardsync", v.Current.Value)
			}
		case "instance", "account":
			if !v.Multi || !v.IncludeAll || v.AllValue != ".*" {
				t.Errorf("variable %s: multi %v, includeAll %v, allValue %q; want multi, All = .*", v.Name, v.Multi, v.IncludeAll, v.AllValue)
			}
		default:
			t.Errorf("variable %s: not one of job, instance, account", v.Name)
		}
	}
	for _, n := range []string{"job", "instance", "account"} {
		if !vars[n] {
			t.Errorf("no variable %s", n)
		}
	}
}

// dashboardSeries matches a series name in an expression and its matchers:
// the cardsync families, the Go and process collectors, and up.
var dashboardSeries = regexp.MustCompile(`\b(cardsync_[a-z0-9_]+|process_[a-z0-9_]+|go_[a-z0-9_]+|up)\b(\{[^}]*\})?`)

// dashboardVariable matches a Grafana variable in an expression.
var dashboardVariable = regexp.MustCompile(`\$\{?(\w+)\}?`)

// docMetrics returns the metric names of the metrics table of
// docs/monitoring.md.
func docMetrics(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `(cardsync_[a-z0-9_]+)` \\|")
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			out[m[1]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDashboardQueriesUseExportedSeries: every series a panel query reads
// is one /metrics serves (a cardsync one also in docs/monitoring.md's table; up is
// Prometheus' own), each selector filters by the job and instance
// variables, and by the account variable where the series has that label;
// the expressions use only the dashboard's variables and Grafana's
// interval variables.
func TestDashboardQueriesUseExportedSeries(t *testing.T) {
	d := readDashboard(t)
	fams := families(t, New(Options{}))
	documented := docMetrics(t)
	family := func(name string) *dto.MetricFamily {
		if mf := fams[name]; mf != nil {
			return mf
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok {
				if mf := fams[base]; mf != nil && mf.GetType() == dto.MetricType_HISTOGRAM {
					return mf
				}
			}
		}
		return nil
	}
	known := []string{"job", "instance", "account", "__rate_interval", "__interval", "__range"}
	for _, p := range allPanels(d.Panels) {
		for _, tg := range p.Targets {
			name := fmt.Sprintf("panel %d %q %s", p.ID, p.Title, tg.RefID)
			for _, v := range dashboardVariable.FindAllStringSubmatch(tg.Expr, -1) {
				if !slices.Contains(known, v[1]) {
					t.Errorf("%s: variable $%s is not one of %v", name, v[1], known)
				}
			}
			found := dashboardSeries.FindAllStringSubmatch(tg.Expr, -1)
			if len(found) == 0 {
				t.Errorf("%s: no series in %q", name, tg.Expr)
			}
			for _, m := range found {
				series, matchers := m[1], m[2]
				want := []string{`job=~"$job"`, `instance=~"$instance"`}
				if series != "up" {
					mf := family(series)
					switch {
					case mf == nil:
						t.Errorf("%s: %s is not served on /metrics", name, series)
						continue
					case strings.HasPrefix(mf.GetName(), "cardsync_") && !documented[mf.GetName()]:
						t.Errorf("%s: %s is not in docs/monitoring.md's metrics table", name, mf.GetName())
					}
					if hasLabel(mf, "account") {
						want = append(want, `account=~"$account"`)
					}
				}
				for _, w := range want {
					if !strings.Contains(matchers, w) {
						t.Errorf("%s: %s%s does not select %s", name, series, matchers, w)
					}
				}
			}
		}
	}
}

// hasLabel reports whether the family's series carry the label.
func hasLabel(mf *dto.MetricFamily, label string) bool {
	for _, m := range mf.GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label {
				return true
			}
		}
	}
	return false
}

// TestDashboardQueriesParse writes every panel query, its variables
// replaced as Grafana does for "All", as a recording rule and has promtool
// check the file: a syntax error fails here without a Prometheus server
// (the end-to-end test runs each query against one).
func TestDashboardQueriesParse(t *testing.T) {
	tool := promtool(t)
	d := readDashboard(t)
	vars := strings.NewReplacer("$__rate_interval", "1m", "$__interval", "30s", "$__range", "1h",
		"$job", "cardsync", "$instance", ".*", "$account", ".*")
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range allPanels(d.Panels) {
		for _, tg := range p.Targets {
			expr, err := json.Marshal(vars.Replace(tg.Expr)) // a JSON string is a YAML string
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&rules, "      - record: dashboard:panel_%d_%s\n        expr: %s\n", p.ID, tg.RefID, expr)
			n++
		}
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), tool, "check", "rules", file).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules (the dashboard's %d queries): %v\n%s", n, err, out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("%d rules found", n)) {
		t.Errorf("promtool found other than %d rules:\n%s", n, out)
	}
}

// TestDashboardKeepsInstancesApart: every aggregation keeps the instance
// label. Independent daemons share account names ("default"), so a sum over
// instances would add one daemon's runs to another's.
func TestDashboardKeepsInstancesApart(t *testing.T) {
	agg := regexp.MustCompile(`\b(sum|max|min|avg|count|topk|bottomk|quantile)\s*(by|without)\s*\(([^)]*)\)`)
	for _, p := range allPanels(readDashboard(t).Panels) {
		for _, tg := range p.Targets {
			for _, m := range agg.FindAllStringSubmatch(tg.Expr, -1) {
				labels := strings.Split(strings.ReplaceAll(m[3], " ", ""), ",")
				if (m[2] == "by") != slices.Contains(labels, "instance") {
					t.Errorf("panel %d %q: %q merges instances", p.ID, p.Title, m[0])
				}
			}
		}
	}
}
