package archtest

import (
	"bufio"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A Rule is one line of ARCHITECTURE.md's import rules.
type Rule struct {
	Line int    // line number in the document
	Text string // the line as written

	layers [][]string // layers, top first, for a "layers:" line

	subjects []string // the packages the rule is about ("*" for any)
	except   []string // subjects the rule leaves out
	objects  []string // what they must not import, or all they may import
	only     bool     // objects is an allow list ("may import only")
}

// A Violation is an import a rule forbids.
type Violation struct {
	Rule     Rule
	From, To string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s imports %s, against ARCHITECTURE.md:%d: %s", v.From, v.To, v.Rule.Line, v.Rule.Text)
}

// ParseRules reads the fenced block that follows the "## Import rules" heading of doc.
// Blank lines and lines starting with # are skipped; every other line is a rule:
//
//	layers: a → b, c → d        (top first; no package imports one in a row above its own)
//	a, b must not import c, d/...
//	* except a must not import b
//	a may import only std, b
//
// A name is a package path relative to the module (load/sqlite) or a full import path for other
// modules and the standard library; "x/..." is x and every package below it, "std" any package of
// the standard library, "*" every package of the module.
func ParseRules(doc string) ([]Rule, error) {
	var rules []Rule
	state := 0 // 0: before the heading, 1: before the fence, 2: inside it
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case state == 0 && line == "## Import rules":
			state = 1
		case state == 1 && strings.HasPrefix(line, "```"):
			state = 2
		case state == 2 && line == "```":
			return rules, nil
		case state == 2 && line != "" && !strings.HasPrefix(line, "#"):
			r, err := parseRule(line)
			if err != nil {
				return nil, fmt.Errorf("ARCHITECTURE.md:%d: %w", n, err)
			}
			r.Line, r.Text = n, line
			rules = append(rules, r)
		}
	}
	return nil, fmt.Errorf("no fenced block after an \"## Import rules\" heading")
}

func parseRule(line string) (Rule, error) {
	if rows, ok := strings.CutPrefix(line, "layers:"); ok {
		var r Rule
		for row := range strings.SplitSeq(rows, "→") {
			r.layers = append(r.layers, names(row))
		}
		return r, nil
	}
	subjects, objects, ok := strings.Cut(line, " must not import ")
	only := false
	if !ok {
		subjects, objects, ok = strings.Cut(line, " may import only ")
		only = true
	}
	if !ok {
		return Rule{}, fmt.Errorf("%q: want \"layers:\", \"must not import\" or \"may import only\"", line)
	}
	subjects, except, _ := strings.Cut(subjects, " except ")
	return Rule{subjects: names(subjects), except: names(except), objects: names(objects), only: only}, nil
}

func names(list string) []string {
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// A Graph is the module's packages (module-relative names) and each one's imports
// (module-relative for the module's packages, full paths for the others).
type Graph map[string][]string

func (g Graph) matches(pattern, name string) bool {
	_, ours := g[name]
	switch {
	case pattern == "*":
		return ours
	case pattern == "std":
		first, _, _ := strings.Cut(name, "/")
		return !ours && !strings.Contains(first, ".")
	case strings.HasSuffix(pattern, "/..."):
		base := strings.TrimSuffix(pattern, "/...")
		return name == base || strings.HasPrefix(name, base+"/")
	}
	return pattern == name
}

func (g Graph) any(patterns []string, name string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return g.matches(p, name) })
}

// Check returns every import of g that one of rules forbids, in the order of the packages' names.
func Check(g Graph, rules []Rule) []Violation {
	var out []Violation
	for _, from := range slices.Sorted(maps.Keys(g)) {
		for _, to := range g[from] {
			for _, r := range rules {
				if r.forbids(g, from, to) {
					out = append(out, Violation{Rule: r, From: from, To: to})
				}
			}
		}
	}
	return out
}

func (r Rule) forbids(g Graph, from, to string) bool {
	if r.layers != nil {
		return r.row(g, to) >= 0 && r.row(g, to) < r.row(g, from)
	}
	if !g.any(r.subjects, from) || g.any(r.except, from) {
		return false
	}
	return g.any(r.objects, to) != r.only
}

// row is the index of name's layer, top first, or -1 when no layer names it.
func (r Rule) row(g Graph, name string) int {
	return slices.IndexFunc(r.layers, func(row []string) bool { return g.any(row, name) })
}

// Unmatched returns the names of rules that match no package of g nor any of their imports:
// a misspelt or renamed package, which would make its rule hold whatever the code does.
func Unmatched(g Graph, rules []Rule) []string {
	var out []string
	for _, r := range rules {
		for _, p := range slices.Concat(slices.Concat(r.layers...), r.subjects, r.except, r.objects) {
			if p != "*" && p != "std" && !g.matchesAny(p) {
				out = append(out, fmt.Sprintf("ARCHITECTURE.md:%d: %s", r.Line, p))
			}
		}
	}
	return out
}

func (g Graph) matchesAny(pattern string) bool {
	for from, imports := range g {
		if g.matches(pattern, from) || slices.ContainsFunc(imports, func(to string) bool { return g.matches(pattern, to) }) {
			return true
		}
	}
	return false
}
