//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// TestStatusTellsTheTruth: exit 0 only when healthy; a failed run makes it
// exit 1 with the full cause on the first line; a SIGKILLed daemon's run
// shows as dead; the warehouse unreadable exits 6; -json always has the
// documented fields, null for never.
func TestStatusTellsTheTruth(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 75, Cards: 600})
	d := newDeployment(t, up)
	if code, _, _ := d.run("status"); code != 6 {
		t.Errorf("status before any sync: exit %d, want 6", code)
	}
	d.backfillOK(t)
	if code, out, _ := d.run("status"); code != 0 || !strings.HasPrefix(out, "healthy: last success") {
		t.Errorf("status after a success: exit %d\n%s", code, out)
	}
	checkStatusSchema(t, d)

	up.InjectFault(sim.Fault{Endpoint: "cards", Kind: sim.FaultStatus, Status: 403, Pages: []int{2}})
	d.run("backfill")
	code, out, _ := d.run("status")
	if code != 1 || !strings.HasPrefix(out, "UNHEALTHY: the last run (2) failed") || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "status 403") {
		t.Errorf("status after a failure: exit %d, want 1 and the cause on the first line:\n%s", code, out)
	}
	up.ClearFaults()

	// A daemon killed mid-run leaves its run marked running: status shows it
	// dead, since no process holds the warehouse.
	d.env["CARDSYNC_API_RATE_LIMIT"] = "20/1s"
	d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
	serve := d.startBG("serve")
	pollUntil(t, 30*time.Second, "a run in progress", func() bool { return countRuns(t, d.db, `WHERE status = 'running'`) == 1 }, serve)
	if code, out, _ := d.run("status"); code != 1 || !strings.Contains(out, "writer     process") {
		t.Logf("status during a live run (exit %d):\n%s", code, out)
	}
	_ = serve.cmd.Process.Kill()
	<-serve.done
	code, out, _ = d.run("status")
	if code != 1 || !strings.Contains(out, "is marked running but no cardsync process holds the warehouse") || !strings.Contains(out, " dead ") {
		t.Errorf("status after SIGKILL: exit %d, want 1 and the run shown dead:\n%s", code, out)
	}
	checkStatusSchema(t, d)
	if err := os.Chmod(d.db, 0); err == nil && os.Geteuid() != 0 {
		if code, _, _ := d.run("status"); code != 6 {
			t.Errorf("status on an unreadable warehouse: exit %d, want 6", code)
		}
	}
	os.Chmod(d.db, 0o640)
}

// checkStatusSchema runs `status -json` and checks it against the schema
// docs/operating.md documents: the same fields every time, their JSON
// types, null only where the guide says a field can be null.
func checkStatusSchema(t *testing.T, d *deployment) {
	t.Helper()
	_, out, _ := d.run("status", "-json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("status -json: %v\n%s", err, out)
	}
	schema := readmeStatusSchema(t)
	for path, typ := range schema {
		got, ok := lookupJSON(doc, path)
		if !ok {
			t.Errorf("status -json lacks %s", path)
			continue
		}
		if got == emptyList {
			continue // nothing in the list to check
		}
		if !jsonTypeMatches(got, typ) {
			t.Errorf("status -json %s = %v, want %s", path, got, typ)
		}
	}
	var extra []string
	collectPaths("", doc, func(p string) {
		if _, ok := schema[p]; !ok {
			extra = append(extra, p)
		}
	})
	if len(extra) > 0 {
		t.Errorf("status -json has fields docs/operating.md does not document: %v", extra)
	}
}

// readmeStatusSchema reads the status -json field table of
// docs/operating.md (between its status-json-schema markers): lines
// "| `path` | type | meaning |".
func readmeStatusSchema(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "<!-- status-json-schema -->")
	if !ok {
		t.Fatal("docs/operating.md has no status -json schema table")
	}
	table, _, _ := strings.Cut(after, "<!-- /status-json-schema -->")
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([a-z ,|]+?) \\|")
	out := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		out[m[1]] = strings.TrimSpace(m[2])
	}
	if len(out) < 40 {
		t.Fatalf("docs/operating.md status -json table has %d fields", len(out))
	}
	return out
}

// emptyList is what lookupJSON returns for a path under an empty list.
var emptyList = new(int)

func lookupJSON(doc any, path string) (any, bool) {
	cur := doc
	for _, part := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		arr := strings.HasSuffix(part, "[]")
		part = strings.TrimSuffix(part, "[]")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
		if arr {
			a, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			if len(a) == 0 {
				return emptyList, true
			}
			cur = a[0]
		}
	}
	return cur, true
}

// collectPaths calls fn with every leaf path of doc, in the table's form.
func collectPaths(prefix string, v any, fn func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			collectPaths(prefix+"."+k, val, fn)
		}
	case []any:
		for _, e := range x {
			if _, ok := e.(map[string]any); ok {
				collectPaths(prefix+"[]", e, fn)
			} else {
				fn(prefix + "[]")
			}
		}
	default:
		fn(prefix)
	}
}

func jsonTypeMatches(v any, typ string) bool {
	for _, t := range strings.Split(typ, " or ") {
		switch strings.TrimSpace(t) {
		case "null":
			if v == nil {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "number", "integer":
			if _, ok := v.(float64); ok {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "array", "array of strings", "array of integers":
			if _, ok := v.([]any); ok {
				return true
			}
		}
	}
	return v == nil && strings.Contains(typ, "null")
}
