package e2e

// The README as a front door (short, opening with the two commands, linking
// every guide) and the alerts' runbook links into docs/monitoring.md. Each
// check is a function over a root directory; fixtures prove it can fail and
// pass.

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeMaxLines is the front page's length limit.
const readmeMaxLines = 250

// frontGuides are the task guides in docs/ that README.md must link to.
var frontGuides = []string{
	"operating.md", "monitoring.md", "backups.md", "analysts.md", "schema.md",
	"configuration.md", "postgres.md", "odd-data.md", "performance.md", "development.md",
}

// The two commands README.md opens with; the test command is the one
// .ci/run runs.
const (
	demoCommand = "go run ./cmd/cardsync demo"
	testCommand = "go test ./..."
)

// readmeFrontProblems checks README.md under root: its length, that every
// guide exists and is linked from it, and that its first fenced block holds
// the demo command and the test command .ci/run runs.
func readmeFrontProblems(root string) []string {
	var problems []string
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return []string{err.Error()}
	}
	text := string(src)
	if n := strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1; n > readmeMaxLines {
		problems = append(problems, fmt.Sprintf("README.md has %d lines; the front page must stay within %d (move detail into docs/ and link it)", n, readmeMaxLines))
	}
	linked := map[string]bool{}
	for _, l := range parseMarkdown(text).links {
		target, _, _ := strings.Cut(l.target, "#")
		switch {
		case strings.HasPrefix(target, repoBlobPrefix+"blob/main/"):
			linked[path.Clean(strings.TrimPrefix(target, repoBlobPrefix+"blob/main/"))] = true
		case !strings.Contains(target, ":"):
			linked[path.Clean(strings.TrimPrefix(target, "/"))] = true
		}
	}
	for _, g := range frontGuides {
		p := "docs/" + g
		if _, err := os.Stat(filepath.Join(root, "docs", g)); err != nil {
			problems = append(problems, fmt.Sprintf("guide %s does not exist", p))
		}
		if !linked[p] {
			problems = append(problems, fmt.Sprintf("README.md does not link to guide %s (want a link such as [%s](%s))", p, strings.TrimSuffix(g, ".md"), p))
		}
	}
	first, line := firstFencedBlock(text)
	if line == 0 {
		problems = append(problems, "README.md has no fenced code block; it must open with the demo and test commands")
	}
	cmds := map[string]bool{}
	for _, l := range strings.Split(first, "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		cmds[strings.Join(strings.Fields(cmd), " ")] = true
	}
	for _, want := range []string{demoCommand, testCommand} {
		if line > 0 && !cmds[want] {
			problems = append(problems, fmt.Sprintf("README.md:%d: the first code block does not run %q", line, want))
		}
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		problems = append(problems, err.Error())
	} else if !regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(testCommand) + `\s*$`).Match(ci) {
		problems = append(problems, fmt.Sprintf(".ci/run has no line %q: README.md's test command is no longer what CI runs", testCommand))
	}
	return problems
}

// firstFencedBlock returns the body of the first fenced code block of a
// markdown text and the line of its opening fence (0: none).
func firstFencedBlock(text string) (string, int) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		m := fenceOpen.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if t := strings.TrimSpace(lines[j]); strings.HasPrefix(t, m[1]) && strings.Trim(t, m[1][:1]) == "" {
				return strings.Join(lines[i+1:j], "\n"), i + 1
			}
		}
		return strings.Join(lines[i+1:], "\n"), i + 1
	}
	return "", 0
}

// runbookPrefix is where every alert's runbook lives.
const runbookPrefix = "https://github.com/cardsync/cardsync/blob/main/docs/monitoring.md#"

var (
	alertLine   = regexp.MustCompile(`^\s*- alert:\s*(\S+)\s*$`)
	runbookLine = regexp.MustCompile(`^\s*runbook_url:\s*["']?([^"'\s]+)["']?\s*$`)
)

// runbookProblems checks monitoring/alerts.yml under root: each alert has
// one runbook_url, docs/monitoring.md#<alert lowercased>, and
// docs/monitoring.md has exactly one "### <Alert>" heading per alert whose
// anchor is that fragment.
func runbookProblems(root string) []string {
	src, err := os.ReadFile(filepath.Join(root, "monitoring", "alerts.yml"))
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	type alert struct {
		name       string
		line, urls int
	}
	var alerts []*alert
	for i, l := range strings.Split(string(src), "\n") {
		if m := alertLine.FindStringSubmatch(l); m != nil {
			alerts = append(alerts, &alert{name: m[1], line: i + 1})
		} else if m := runbookLine.FindStringSubmatch(l); m != nil {
			if len(alerts) == 0 {
				problems = append(problems, fmt.Sprintf("monitoring/alerts.yml:%d: runbook_url before any alert", i+1))
				continue
			}
			a := alerts[len(alerts)-1]
			a.urls++
			if want := runbookPrefix + strings.ToLower(a.name); m[1] != want {
				problems = append(problems, fmt.Sprintf("monitoring/alerts.yml:%d: %s: runbook_url is %s, want %s", i+1, a.name, m[1], want))
			}
		}
	}
	if len(alerts) == 0 {
		return append(problems, "monitoring/alerts.yml: no `- alert:` rule found")
	}
	md, err := os.ReadFile(filepath.Join(root, "docs", "monitoring.md"))
	if err != nil {
		return append(problems, fmt.Sprintf("docs/monitoring.md, the runbook of %d alerts: %v", len(alerts), err))
	}
	headings := map[string][]mdHeading{}
	for _, h := range parseMarkdown(string(md)).headings {
		if h.level == 3 {
			headings[h.text] = append(headings[h.text], h)
		}
	}
	for _, a := range alerts {
		if a.urls != 1 {
			problems = append(problems, fmt.Sprintf("monitoring/alerts.yml:%d: %s has %d runbook_url annotations, want 1", a.line, a.name, a.urls))
		}
		hs := headings[a.name]
		switch {
		case len(hs) == 0:
			problems = append(problems, fmt.Sprintf("docs/monitoring.md has no heading \"### %s\" (the runbook entry of the alert at monitoring/alerts.yml:%d)", a.name, a.line))
		case len(hs) > 1:
			problems = append(problems, fmt.Sprintf("docs/monitoring.md:%d: \"### %s\" again (first at line %d); one runbook entry per alert", hs[1].line, a.name, hs[0].line))
		case hs[0].anchor != strings.ToLower(a.name):
			problems = append(problems, fmt.Sprintf("docs/monitoring.md:%d: \"### %s\" gets anchor #%s (an earlier heading has the same slug), not #%s", hs[0].line, a.name, hs[0].anchor, strings.ToLower(a.name)))
		}
	}
	return problems
}

// TestReadmeFront: README.md is short, links every guide, and opens with
// the demo command and CI's test command.
func TestReadmeFront(t *testing.T) {
	for _, p := range readmeFrontProblems("..") {
		t.Error(p)
	}
}

// TestAlertRunbooks: every alert's runbook_url is its anchor in
// docs/monitoring.md, and the anchor exists.
func TestAlertRunbooks(t *testing.T) {
	for _, p := range runbookProblems("..") {
		t.Error(p)
	}
}

// TestReadmeFrontFixture proves readmeFrontProblems passes a conforming
// tree and names each kind of failure.
func TestReadmeFrontFixture(t *testing.T) {
	files := map[string]string{".ci/run": "set -e\ngo vet ./...\ngo test ./...\n"}
	var readme strings.Builder
	readme.WriteString("# tool\n\n```sh\n" + demoCommand + "   # try it\n" + testCommand + "\n```\n\n")
	for i, g := range frontGuides {
		files["docs/"+g] = "# " + g + "\n"
		if i%2 == 0 {
			fmt.Fprintf(&readme, "- [%s](docs/%s#%s)\n", g, g, "x")
		} else {
			fmt.Fprintf(&readme, "- [%s](https://github.com/cardsync/cardsync/blob/main/docs/%s)\n", g, g)
		}
	}
	files["README.md"] = readme.String()
	root := writeFixture(t, files).root
	if p := readmeFrontProblems(root); len(p) != 0 {
		t.Fatalf("a conforming README reported:\n%s", strings.Join(p, "\n"))
	}

	files["README.md"] = "# tool\n\n```sh\ngo run ./cmd/cardsync demo -db x\ngo test ./...\n```\n\n[ops](docs/operating.md)\n" +
		strings.Repeat("line\n", readmeMaxLines)
	files[".ci/run"] = "go test -race ./...\n"
	delete(files, "docs/backups.md")
	got := strings.Join(readmeFrontProblems(writeFixture(t, files).root), "\n")
	for _, want := range []string{
		fmt.Sprintf("README.md has %d lines; the front page must stay within 250", readmeMaxLines+8),
		"guide docs/backups.md does not exist",
		"README.md does not link to guide docs/monitoring.md",
		`README.md:3: the first code block does not run "go run ./cmd/cardsync demo"`,
		`.ci/run has no line "go test ./..."`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("README check lacks %q; it says:\n%s", want, got)
		}
	}
	if strings.Contains(got, "docs/operating.md (") {
		t.Errorf("README check reports the linked guide docs/operating.md:\n%s", got)
	}
	if n := strings.Count(got, "\n") + 1; n != 1+1+9+2 {
		t.Errorf("want 13 problems (length, a missing guide, 9 unlinked guides, demo, CI), got %d:\n%s", n, got)
	}
}

// TestAlertRunbooksFixture proves runbookProblems passes a conforming
// pair of files and names each kind of failure.
func TestAlertRunbooksFixture(t *testing.T) {
	rules := "groups:\n  - name: cardsync\n    rules:\n" +
		"      - alert: CardsyncDown\n        annotations:\n          runbook_url: \"" + runbookPrefix + "cardsyncdown\"\n" +
		"      - alert: CardsyncSlow\n        annotations:\n          runbook_url: " + runbookPrefix + "cardsyncslow\n"
	md := "# Monitoring\n\n## Runbook\n\n### CardsyncDown\n\n```\n### CardsyncSlow\n```\n\n### CardsyncSlow\n"
	root := writeFixture(t, map[string]string{"monitoring/alerts.yml": rules, "docs/monitoring.md": md}).root
	if p := runbookProblems(root); len(p) != 0 {
		t.Fatalf("conforming alerts and runbook reported:\n%s", strings.Join(p, "\n"))
	}

	rules = "groups:\n  - name: cardsync\n    rules:\n" +
		"      - alert: CardsyncDown\n        annotations:\n          runbook_url: \"https://github.com/cardsync/cardsync/blob/main/README.md#cardsyncdown\"\n" +
		"      - alert: CardsyncSlow\n" +
		"      - alert: CardsyncTwice\n          runbook_url: " + runbookPrefix + "cardsynctwice\n" +
		"      - alert: CardsyncLate\n          runbook_url: " + runbookPrefix + "cardsynclate\n"
	md = "# Monitoring\n\n### cardsynclate\n\n### CardsyncDown\n\n```\n### CardsyncSlow\n```\n\n### CardsyncTwice\n\n### CardsyncTwice\n\n### CardsyncLate\n"
	root = writeFixture(t, map[string]string{"monitoring/alerts.yml": rules, "docs/monitoring.md": md}).root
	got := strings.Join(runbookProblems(root), "\n")
	for _, want := range []string{
		"monitoring/alerts.yml:6: CardsyncDown: runbook_url is https://github.com/cardsync/cardsync/blob/main/README.md#cardsyncdown, want " + runbookPrefix + "cardsyncdown",
		"monitoring/alerts.yml:7: CardsyncSlow has 0 runbook_url annotations, want 1",
		`docs/monitoring.md has no heading "### CardsyncSlow" (the runbook entry of the alert at monitoring/alerts.yml:7)`,
		`docs/monitoring.md:13: "### CardsyncTwice" again (first at line 11)`,
		`docs/monitoring.md:15: "### CardsyncLate" gets anchor #cardsynclate-1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("runbook check lacks %q; it says:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n") + 1; n != 5 {
		t.Errorf("want 5 problems, got %d:\n%s", n, got)
	}
	if p := runbookProblems(t.TempDir()); len(p) != 1 || !strings.Contains(p[0], "alerts.yml") {
		t.Errorf("a tree without monitoring/alerts.yml reported %q", p)
	}
}
