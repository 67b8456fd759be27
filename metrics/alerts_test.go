package metrics

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// promtool returns the path of promtool (Debian package prometheus), or
// skips the test; with CARDSYNC_REQUIRE_TOOLS set (CI) it fails instead.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CARDSYNC_REQUIRE_TOOLS") != "" {
			t.Fatal("promtool not found and CARDSYNC_REQUIRE_TOOLS is set (apt-get install prometheus)")
		}
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	return p
}

func TestShippedAlertRules(t *testing.T) {
	if raceEnabled {
		// All of its work is promtool's, which the race detector does not
		// see; the fast tier runs it (about 10 CPU-seconds).
		t.Skip("promtool's work only: run by go test ./..., not under -race")
	}
	tool := promtool(t)
	dir := filepath.Join("..", "monitoring")
	for _, args := range [][]string{
		{"check", "rules", "alerts.yml"},
		{"test", "rules", "alerts_test.yml"},
	} {
		cmd := exec.CommandContext(t.Context(), tool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// TestAlertsUseExportedSeries: every cardsync_* name the rules use is a
// family New registers, so a renamed metric cannot silently disarm an alert.
func TestAlertsUseExportedSeries(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "monitoring", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	fams := families(t, New(Options{}))
	names := regexp.MustCompile(`\bcardsync_[a-z_]+\b`).FindAllString(string(b), -1)
	if len(names) == 0 {
		t.Fatal("no cardsync_ series in alerts.yml")
	}
	for _, n := range names {
		if fams[n] == nil {
			t.Errorf("alerts.yml uses %s, which metrics does not export", n)
		}
	}
}

// TestEveryAlertTestedBothWays: each rule of alerts.yml has, in
// alerts_test.yml, an evaluation where it fires and one where it does not.
func TestEveryAlertTestedBothWays(t *testing.T) {
	rules, err := os.ReadFile(filepath.Join("..", "monitoring", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("..", "monitoring", "alerts_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`(?m)^\s*- alert: (\w+)$`).FindAllStringSubmatch(string(rules), -1)
	if len(names) == 0 {
		t.Fatal("no alert in alerts.yml")
	}
	silent, firing := map[string]bool{}, map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*alertname: (\w+)\n\s*exp_alerts:( \[\])?$`).FindAllStringSubmatch(string(tests), -1) {
		if m[2] != "" {
			silent[m[1]] = true
		} else {
			firing[m[1]] = true
		}
	}
	for _, n := range names {
		if !silent[n[1]] || !firing[n[1]] {
			t.Errorf("alerts_test.yml tests %s firing: %v, not firing: %v; want both", n[1], firing[n[1]], silent[n[1]])
		}
	}
}
