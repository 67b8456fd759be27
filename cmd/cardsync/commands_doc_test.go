package main

// README.md's commands table agrees with the program: it lists exactly the
// commands `cardsync -h` lists, and every flag a row names is one of that
// command's flags in `cardsync NAME -h`.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var (
	docFlagSpan = regexp.MustCompile("`(-[a-z][a-z0-9-]*)(?:[ =][^`]*)?`")
	docRowName  = regexp.MustCompile("^\\|\\s*`cardsync ([a-z][a-z0-9-]*)[^`]*`\\s*\\|")
)

// usageCommands returns the command names of the "Commands:" section of
// cardsync's usage text, in order.
func usageCommands(usageText string) []string {
	var names []string
	in := false
	for _, l := range strings.Split(usageText, "\n") {
		switch {
		case strings.TrimSpace(l) == "Commands:":
			in = true
		case in && strings.TrimSpace(l) == "":
			return names
		case in:
			names = append(names, strings.Fields(l)[0])
		}
	}
	return names
}

// commandsDocProblems compares the first table of README's "## Commands"
// section with usageText (cardsync -h) and with help(name), the output of
// `cardsync NAME -h`; it returns one line per disagreement.
func commandsDocProblems(readme, usageText string, help func(name string) string) []string {
	var problems []string
	lines := strings.Split(readme, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "## Commands" {
			start = i
			break
		}
	}
	if start < 0 {
		return []string{`README.md has no "## Commands" section`}
	}
	type row struct {
		name, text string
		line       int
	}
	var rows []row
	table := false
	for i := start + 1; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "## ") || (table && !strings.HasPrefix(l, "|")) {
			break
		}
		if !strings.HasPrefix(l, "|") {
			continue
		}
		if !table { // the header row, then the |---| row
			table = true
			i++
			continue
		}
		m := docRowName.FindStringSubmatch(l)
		if m == nil {
			problems = append(problems, fmt.Sprintf("README.md:%d: a commands-table row whose first cell is not `cardsync NAME`: %s", i+1, l))
			continue
		}
		rows = append(rows, row{name: m[1], text: l, line: i + 1})
	}
	if !table {
		return []string{fmt.Sprintf("README.md:%d: the Commands section has no table", start+1)}
	}
	listed := map[string]bool{}
	for _, c := range usageCommands(usageText) {
		listed[c] = true
	}
	if len(listed) == 0 {
		return append(problems, "cardsync -h lists no commands (no Commands: section)")
	}
	inTable := map[string]bool{}
	for _, r := range rows {
		if inTable[r.name] {
			problems = append(problems, fmt.Sprintf("README.md:%d: cardsync %s has a second row", r.line, r.name))
		}
		inTable[r.name] = true
		if !listed[r.name] {
			problems = append(problems, fmt.Sprintf("README.md:%d: the commands table lists cardsync %s, which cardsync -h does not list", r.line, r.name))
			continue
		}
		h := help(r.name)
		for _, m := range docFlagSpan.FindAllStringSubmatch(r.text, -1) {
			flagLine := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(m[1]) + `(\s|$)`)
			if !flagLine.MatchString(h) {
				problems = append(problems, fmt.Sprintf("README.md:%d: the row of cardsync %s names %s, which `cardsync %s -h` does not list", r.line, r.name, m[1], r.name))
			}
		}
	}
	var missing []string
	for c := range listed {
		if !inTable[c] {
			missing = append(missing, c)
		}
	}
	sort.Strings(missing)
	for _, c := range missing {
		problems = append(problems, fmt.Sprintf("README.md:%d: cardsync -h lists %s, the commands table has no `cardsync %s` row", start+1, c, c))
	}
	return problems
}

// runHelp runs cardsync with args in-process and returns its exit code and
// what it printed (stdout then stderr).
func runHelp(args ...string) (int, string) {
	var stdout, stderr bytes.Buffer
	m := &Main{
		Stdin:   strings.NewReader(""),
		Stdout:  &stdout,
		Stderr:  &stderr,
		Getenv:  func(string) string { return "" },
		Environ: func() []string { return nil },
	}
	code := m.Run(context.Background(), args)
	return code, stdout.String() + stderr.String()
}

// TestCommandsTableMatchesHelp: README.md's commands table and cardsync's
// own -h output agree on the commands and on every flag a row names.
func TestCommandsTableMatchesHelp(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	code, top := runHelp("-h")
	if code != 0 {
		t.Fatalf("cardsync -h exited %d:\n%s", code, top)
	}
	help := func(name string) string {
		code, out := runHelp(name, "-h")
		if code != 0 {
			t.Errorf("cardsync %s -h exited %d:\n%s", name, code, out)
		}
		return out
	}
	if n := len(usageCommands(top)); n < 5 {
		t.Fatalf("found %d commands in cardsync -h's Commands: section:\n%s", n, top)
	}
	for _, p := range commandsDocProblems(string(readme), top, help) {
		t.Error(p)
	}
}

// TestCommandsDocFixture proves commandsDocProblems passes an agreeing
// table and names each kind of disagreement.
func TestCommandsDocFixture(t *testing.T) {
	usageText := "tool\n\nCommands:\n  serve     run\n  restore   put back\n  two-word  x  y\n\nRun ...\n"
	help := func(name string) string {
		return map[string]string{
			"serve":    "Flags:\n  -config string\n  -restart\n",
			"restore":  "Flags:\n  -force\n  -o string\n    \tthe output\n",
			"two-word": "Flags:\n",
		}[name]
	}
	good := "# t\n\n## Commands\n\n| command | what |\n|---|---|\n" +
		"| `cardsync serve` | runs; `-restart`, `-config FILE` |\n" +
		"| `cardsync restore FILE` | `-force`; writes `-o FILE`; not a flag: `<stem>-x`, `a -b` |\n" +
		"| `cardsync two-word` | x |\n\nEvery command takes `-h`, `-nope`.\n\n## Next\n\n| `cardsync gone` | x |\n"
	if p := commandsDocProblems(good, usageText, help); len(p) != 0 {
		t.Fatalf("an agreeing table reported:\n%s", strings.Join(p, "\n"))
	}
	bad := "# t\n\n## Commands\n\n| command | what |\n|---|---|\n" +
		"| `cardsync serve` | runs; `-restart`, `-confirm FILE` |\n" +
		"| `cardsync extra` | x |\n" +
		"| serve | no code |\n" +
		"| `cardsync serve` | again |\n"
	got := strings.Join(commandsDocProblems(bad, usageText, help), "\n")
	for _, want := range []string{
		"README.md:7: the row of cardsync serve names -confirm, which `cardsync serve -h` does not list",
		"README.md:8: the commands table lists cardsync extra, which cardsync -h does not list",
		"README.md:9: a commands-table row whose first cell is not `cardsync NAME`",
		"README.md:10: cardsync serve has a second row",
		"README.md:3: cardsync -h lists restore, the commands table has no `cardsync restore` row",
		"README.md:3: cardsync -h lists two-word, the commands table has no `cardsync two-word` row",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("commands check lacks %q; it says:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n") + 1; n != 6 {
		t.Errorf("want 6 problems, got %d:\n%s", n, got)
	}
	if p := commandsDocProblems("# t\n", usageText, help); len(p) != 1 || !strings.Contains(p[0], `no "## Commands" section`) {
		t.Errorf("a README without the section reported %q", p)
	}
}
