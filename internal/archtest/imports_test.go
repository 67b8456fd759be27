package archtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rules reads the import rules from ARCHITECTURE.md at the module's root.
func rules(t *testing.T) (root string, rs []Rule) {
	t.Helper()
	_, root, err := Module(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err = ParseRules(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	return root, rs
}

// TestImportRules checks the module's imports against ARCHITECTURE.md's import rules.
func TestImportRules(t *testing.T) {
	root, rs := rules(t)
	g, err := Imports(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Unmatched(g, rs) {
		t.Errorf("%s: names no package of the module nor any import (misspelt or renamed?)", name)
	}
	for _, v := range Check(g, rs) {
		t.Error(v)
	}
}

// TestImportRulesFailOnPlantedImports shows the check failing: each case adds one import the
// document forbids to a small graph and expects the violation to name the import and the rule.
func TestImportRulesFailOnPlantedImports(t *testing.T) {
	_, rs := rules(t)
	tests := []struct {
		name, from, to string
		rule           string // a part of the rule's line
	}{
		{"a layer above", "worker", "metrics", "layers:"},
		{"extract and load", "extract", "load", "extract must not import load/..."},
		{"load and extract", "load/postgres", "extract", "load/... must not import extract"},
		{"a dialect outside load/dialect", "worker", "load/sqlite", "* except load/dialect must not import"},
		{"config and a dialect", "config", "load/postgres", "config must not import"},
		{"SQL outside the dialects", "report", "database/sql", "must not import database/sql"},
		{"HTTP in load", "load/sqlite", "net/http", "must not import net/http"},
		{"account's only import", "account", "encoding/json", "account may import only money"},
		{"redact's only imports", "redact", "github.com/pelletier/go-toml/v2", "redact may import only"},
		{"tests-only packages", "worker", "internal/testbinary", "must not import e2e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := Graph{tt.from: {tt.to}}
			for _, name := range []string{"worker", "metrics", "extract", "load", "load/postgres", "load/sqlite",
				"config", "report", "account", "money", "redact", "internal/testbinary"} {
				if _, ok := g[name]; !ok {
					g[name] = nil
				}
			}
			got := Check(g, rs)
			var named bool
			for _, v := range got {
				named = named || v.From == tt.from && v.To == tt.to && strings.Contains(v.Rule.Text, tt.rule) &&
					strings.Contains(v.String(), tt.from+" imports "+tt.to)
			}
			if !named {
				t.Errorf("violations of %s -> %s = %v, want one naming the rule %q", tt.from, tt.to, got, tt.rule)
			}
		})
	}
}

// TestImportRulesFailOnPlantedFile plants a file importing a dialect into config (a go list
// overlay, the tree untouched) and expects the real check to name the import and its rules.
func TestImportRulesFailOnPlantedFile(t *testing.T) {
	root, rs := rules(t)
	module, _, err := Module(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	planted := filepath.Join(dir, "planted.go")
	src := "package config\n\nimport _ \"" + module + "/load/sqlite\"\n"
	overlay := filepath.Join(dir, "overlay.json")
	target := filepath.Join(root, "config", "zz_planted.go")
	for path, text := range map[string]string{planted: src, overlay: `{"Replace":{"` + target + `":"` + planted + `"}}`} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	g, err := Imports(t.Context(), root, "-overlay", overlay)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range Check(g, rs) {
		got = append(got, v.String())
	}
	text := strings.Join(got, "\n")
	t.Logf("the planted import's violations:\n%s", text)
	for _, want := range []string{"config imports load/sqlite, against ARCHITECTURE.md:", "config must not import",
		"* except load/dialect must not import"} {
		if !strings.Contains(text, want) {
			t.Errorf("violations:\n%s\nwant one saying %q", text, want)
		}
	}
	if len(got) != 2 {
		t.Errorf("got %d violations, want 2 (the planted import against its two rules):\n%s", len(got), text)
	}
}

// TestParseRulesRefusesAnUnknownLine: a rule the checker cannot read is an error, never skipped.
func TestParseRulesRefusesAnUnknownLine(t *testing.T) {
	doc := "## Import rules\n\n```text\nworker should not import metrics\n```\n"
	if _, err := ParseRules(doc); err == nil || !strings.Contains(err.Error(), "ARCHITECTURE.md:4") {
		t.Errorf("ParseRules = %v, want an error naming ARCHITECTURE.md:4", err)
	}
	if _, err := ParseRules("# Architecture\n"); err == nil {
		t.Error("ParseRules of a document without the block: no error")
	}
}
