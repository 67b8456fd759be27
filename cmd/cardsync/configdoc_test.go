package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// docFlag is one row of docs/configuration.md whose flag column names a
// flag: the command it belongs to ("" for the flags of every command
// that reads the configuration) and the key it overrides.
type docFlag struct {
	command, flag, key string
}

// configDocFlags reads the flag column of docs/configuration.md.
func configDocFlags(t *testing.T) []docFlag {
	t.Helper()
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []docFlag
	table := ""
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "## `"); ok {
			table = strings.Trim(h, "[]`")
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, " | ")
		if len(cells) < 6 {
			t.Fatalf("docs/configuration.md: a row of %d cells: %q", len(cells), line)
		}
		flag := strings.Trim(cells[4], "` ")
		if flag == "" {
			continue
		}
		f := docFlag{flag: flag, key: table + "." + strings.Trim(cells[0], "|` ")}
		if cmd, name, ok := strings.Cut(flag, " "); ok {
			f.command, f.flag = cmd, name
		}
		out = append(out, f)
	}
	return out
}

// overridesFlag matches a flag of -h output whose usage says which key it
// overrides: "  -db string\n    \twarehouse path (overrides [warehouse] path)".
var overridesFlag = regexp.MustCompile(`(?m)^  (-[a-z-]+)\b.*\n\s+[^\n]*\(overrides \[([a-z]+)\] ([a-z_]+)`)

// TestConfigDocFlags: the flag column of docs/configuration.md names
// flags that exist, on every command that reads the configuration or on
// the command it names, and every flag whose -h says it overrides a key
// is in that key's row.
func TestConfigDocFlags(t *testing.T) {
	e := &env{t: t, vars: map[string]string{}}
	help := func(cmd string) string {
		code, _, errOut := e.run(t.Context(), cmd, "-h")
		if code != 0 {
			t.Fatalf("%s -h: exit %d", cmd, code)
		}
		return errOut
	}
	documented := map[docFlag]bool{}
	docs := configDocFlags(t)
	if len(docs) == 0 {
		t.Fatal("docs/configuration.md names no flag")
	}
	for _, f := range docs {
		documented[f] = true
		cmds := []string{f.command}
		if f.command == "" {
			cmds = []string{"serve", "backfill", "status", "check", "backup", "report"}
		}
		for _, cmd := range cmds {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(f.flag) + `\b`).MatchString(help(cmd)) {
				t.Errorf("docs/configuration.md: %s has flag %s, which `cardsync %s -h` does not list", f.key, f.flag, cmd)
			}
		}
	}
	overrides := 0
	for _, cmd := range []string{"serve", "backfill", "status", "check", "backup", "restore", "report", "datasette-metadata"} {
		for _, m := range overridesFlag.FindAllStringSubmatch(help(cmd), -1) {
			overrides++
			key := m[2] + "." + m[3]
			if !documented[docFlag{flag: m[1], key: key}] && !documented[docFlag{command: cmd, flag: m[1], key: key}] {
				t.Errorf("`cardsync %s -h`: %s overrides %s, but docs/configuration.md's row of %s does not name it (config/keytable.go)", cmd, m[1], key, key)
			}
		}
	}
	if overrides == 0 {
		t.Error("no -h output says a flag overrides a key: the pattern no longer matches the usage lines")
	}
}
