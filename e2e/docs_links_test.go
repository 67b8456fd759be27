package e2e

// Every relative link and #anchor of the repository's markdown resolves the
// way GitHub resolves it. The checker is a function over a root directory
// and its file list so that fixtures in t.TempDir() prove it can fail and
// pass; TestDocLinks runs it on the files git tracks.

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// githubSlug is the anchor GitHub gives a heading's text before duplicates
// are numbered: lowercase; every character that is not a letter, digit,
// space, hyphen or underscore dropped; spaces become hyphens. Markdown
// syntax is rendered first: [text](url) is its text, HTML tags go, code
// spans keep their content.
func githubSlug(heading string) string {
	text := renderHeading(heading)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	inlineLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag        = regexp.MustCompile(`</?[A-Za-z][^>]*>`)
)

// renderHeading is the text GitHub renders for a heading's markdown,
// outside code spans: links become their text and HTML tags vanish.
func renderHeading(md string) string {
	var out strings.Builder
	for i, seg := range splitCodeSpans(md) {
		if i%2 == 1 { // code: literal
			out.WriteString(seg)
			continue
		}
		seg = inlineLinkText.ReplaceAllString(seg, "$1")
		out.WriteString(htmlTag.ReplaceAllString(seg, ""))
	}
	return out.String()
}

// splitCodeSpans splits s into alternating text and code-span contents
// (even indexes text, odd indexes code), per CommonMark: a run of n
// backticks opens a span that the next run of exactly n closes; an
// unclosed run is literal text.
func splitCodeSpans(s string) []string {
	var out []string
	var text strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '`' {
			text.WriteByte(s[i])
			i++
			continue
		}
		n := runLen(s, i)
		end := -1
		for j := i + n; j < len(s); {
			if s[j] == '`' {
				m := runLen(s, j)
				if m == n {
					end = j
					break
				}
				j += m
				continue
			}
			j++
		}
		if end < 0 {
			text.WriteString(s[i : i+n])
			i += n
			continue
		}
		out = append(out, text.String(), s[i+n:end])
		text.Reset()
		i = end + n
	}
	return append(out, text.String())
}

func runLen(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// mdHeading is one heading of a markdown file with its final anchor.
type mdHeading struct {
	level  int
	text   string
	anchor string // after duplicate numbering
	line   int
}

// mdLinkRef is one link target found in a markdown file.
type mdLinkRef struct {
	line   int
	target string
}

// mdDoc is what the link checker needs of one markdown file.
type mdDoc struct {
	headings []mdHeading
	anchors  map[string]bool // heading anchors and explicit <a id>/<a name>
	links    []mdLinkRef
}

var (
	atxHeading   = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setextUnder  = regexp.MustCompile(`^ {0,3}(=+|-+)[ \t]*$`)
	fenceOpen    = regexp.MustCompile("^\\s*(```+|~~~+)")
	explicitID   = regexp.MustCompile(`<a\s[^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']`)
	htmlHref     = regexp.MustCompile(`<(?:a|img)\s[^>]*?\b(?:href|src)\s*=\s*["']([^"']+)["']`)
	inlineLink   = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^\s)>]*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	refDef       = regexp.MustCompile(`(?m)^ {0,3}\[([^\]]+)\]:[ \t]*<?([^\s>]+)>?`)
	refUse       = regexp.MustCompile(`\[([^\]]+)\]\[([^\]]*)\]`)
	autoLink     = regexp.MustCompile(`<(https?://[^>\s]+)>`)
	repoURL      = regexp.MustCompile(`https://github\.com/cardsync/cardsync/(?:blob|tree)/main/[^\s)>\]"'<]*`)
	lineFragment = regexp.MustCompile(`^L([0-9]+)(?:-L([0-9]+))?$`)
)

// parseMarkdown finds the headings, explicit anchors and link targets of a
// markdown file. Fenced code blocks and code spans hold neither headings
// nor links.
func parseMarkdown(src string) mdDoc {
	lines := strings.Split(src, "\n")
	// prose is src with fenced blocks blanked (lines kept for numbering).
	prose := make([]string, len(lines))
	doc := mdDoc{anchors: map[string]bool{}}
	seen := map[string]int{}
	addHeading := func(level int, text string, line int) {
		base := githubSlug(text)
		anchor := base
		if n := seen[base]; n > 0 {
			anchor = fmt.Sprintf("%s-%d", base, n)
		}
		seen[base]++
		doc.headings = append(doc.headings, mdHeading{level: level, text: strings.TrimSpace(text), anchor: anchor, line: line})
		doc.anchors[anchor] = true
	}
	fence := ""
	for i, line := range lines {
		if fence != "" {
			t := strings.TrimSpace(line)
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			fence = m[1]
			continue
		}
		prose[i] = line
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			addHeading(len(m[1]), m[2], i+1)
			continue
		}
		if m := setextUnder.FindStringSubmatch(line); m != nil && i > 0 && prose[i-1] != "" &&
			(i == 1 || strings.TrimSpace(prose[i-2]) == "") && !strings.ContainsAny(prose[i-1][:1], "#|>-*+ ") {
			level := 1
			if m[1][0] == '-' {
				level = 2
			}
			addHeading(level, prose[i-1], i)
		}
	}
	text := blankCodeSpans(strings.Join(prose, "\n"))
	lineAt := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
	for _, m := range explicitID.FindAllStringSubmatch(text, -1) {
		doc.anchors[m[1]] = true
	}
	type key struct {
		line   int
		target string
	}
	found := map[key]bool{}
	add := func(off int, target string) {
		k := key{lineAt(off), target}
		if !found[k] {
			found[k] = true
			doc.links = append(doc.links, mdLinkRef{line: k.line, target: target})
		}
	}
	for _, re := range []*regexp.Regexp{inlineLink, htmlHref, autoLink, repoURL} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			if len(m) > 2 {
				add(m[2], text[m[2]:m[3]])
			} else {
				add(m[0], text[m[0]:m[1]])
			}
		}
	}
	labels := map[string]bool{}
	for _, m := range refDef.FindAllStringSubmatchIndex(text, -1) {
		labels[normLabel(text[m[2]:m[3]])] = true
		add(m[4], text[m[4]:m[5]])
	}
	for _, m := range refUse.FindAllStringSubmatchIndex(text, -1) {
		label := text[m[4]:m[5]]
		if label == "" {
			label = text[m[2]:m[3]]
		}
		if !labels[normLabel(label)] {
			add(m[0], "[undefined reference "+strconv.Quote(label)+"]")
		}
	}
	sort.SliceStable(doc.links, func(i, j int) bool { return doc.links[i].line < doc.links[j].line })
	return doc
}

func normLabel(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// blankCodeSpans replaces the contents of code spans (which may not cross
// a blank line) with spaces, keeping newlines and offsets.
func blankCodeSpans(s string) string {
	paras := strings.Split(s, "\n\n")
	for i, p := range paras {
		segs := splitCodeSpans(p)
		var b strings.Builder
		for j, seg := range segs {
			if j%2 == 1 {
				b.WriteString(" ") // an opening backtick run, at least one byte
				for _, r := range seg {
					if r == '\n' {
						b.WriteByte('\n')
					} else {
						b.WriteByte(' ')
					}
				}
				b.WriteString(" ")
				continue
			}
			b.WriteString(seg)
		}
		paras[i] = b.String()
	}
	return strings.Join(paras, "\n\n")
}

// docTree is a checkout: its root and the files (slash paths relative to
// root) that exist on GitHub, i.e. the ones git tracks.
type docTree struct {
	root  string
	files map[string]bool
	dirs  map[string]bool
	docs  map[string]mdDoc // parsed markdown, by path
}

func newDocTree(root string, files []string) *docTree {
	t := &docTree{root: root, files: map[string]bool{}, dirs: map[string]bool{".": true}, docs: map[string]mdDoc{}}
	for _, f := range files {
		t.files[f] = true
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			t.dirs[d] = true
		}
	}
	return t
}

func (t *docTree) doc(p string) (mdDoc, error) {
	if d, ok := t.docs[p]; ok {
		return d, nil
	}
	src, err := os.ReadFile(filepath.Join(t.root, filepath.FromSlash(p)))
	if err != nil {
		return mdDoc{}, err
	}
	d := parseMarkdown(string(src))
	t.docs[p] = d
	return d, nil
}

const repoBlobPrefix = "https://github.com/cardsync/cardsync/"

// brokenDocLinks checks every link of every markdown file in the tree and
// returns one "file:line: problem" per broken link.
func brokenDocLinks(tree *docTree) []string {
	var mds []string
	for f := range tree.files {
		if strings.HasSuffix(f, ".md") {
			mds = append(mds, f)
		}
	}
	sort.Strings(mds)
	var problems []string
	for _, f := range mds {
		d, err := tree.doc(f)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f, err))
			continue
		}
		for _, l := range d.links {
			if p := tree.checkLink(f, l.target); p != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", f, l.line, l.target, p))
			}
		}
	}
	return problems
}

// checkLink returns why target, linked from file from, does not resolve
// on GitHub, or "".
func (t *docTree) checkLink(from, target string) string {
	if strings.HasPrefix(target, "[undefined reference") {
		return "no [label]: definition for this reference link"
	}
	raw, fragment, hasFragment := strings.Cut(target, "#")
	var p string
	switch {
	case strings.HasPrefix(raw, repoBlobPrefix):
		rest := strings.TrimPrefix(raw, repoBlobPrefix)
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, "blob/main/"), "tree/main/")
		p = path.Clean(rest)
	case strings.Contains(raw, ":") || strings.HasPrefix(raw, "//"):
		return "" // another site, or mailto: — not fetched
	case raw == "":
		p = from
	default:
		raw, _, _ = strings.Cut(raw, "?")
		u, err := url.PathUnescape(raw)
		if err != nil {
			return fmt.Sprintf("bad escape in path: %v", err)
		}
		if strings.HasPrefix(u, "/") {
			p = path.Clean(strings.TrimPrefix(u, "/"))
		} else {
			p = path.Join(path.Dir(from), u)
		}
	}
	if p == ".." || strings.HasPrefix(p, "../") {
		return "points outside the repository"
	}
	if !t.files[p] && !t.dirs[p] {
		if _, err := os.Stat(filepath.Join(t.root, filepath.FromSlash(p))); err == nil {
			return p + " exists here but git does not track it (GitHub would show 404)"
		}
		return p + " does not exist"
	}
	if !hasFragment || fragment == "" {
		return ""
	}
	if f, err := url.PathUnescape(fragment); err == nil {
		fragment = f
	}
	if t.dirs[p] {
		return "" // a directory: GitHub renders its README; not checked
	}
	if !strings.HasSuffix(p, ".md") {
		m := lineFragment.FindStringSubmatch(fragment)
		if m == nil {
			return fmt.Sprintf("#%s: %s is not markdown; only #L<n> or #L<n>-L<m> anchors exist there", fragment, p)
		}
		src, err := os.ReadFile(filepath.Join(t.root, filepath.FromSlash(p)))
		if err != nil {
			return err.Error()
		}
		n := strings.Count(strings.TrimSuffix(string(src), "\n"), "\n") + 1
		for _, s := range m[1:] {
			if v, _ := strconv.Atoi(s); s != "" && (v < 1 || v > n) {
				return fmt.Sprintf("#%s: %s has %d lines", fragment, p, n)
			}
		}
		return ""
	}
	d, err := t.doc(p)
	if err != nil {
		return err.Error()
	}
	if d.anchors[fragment] {
		return ""
	}
	msg := fmt.Sprintf("%s has no heading or <a id> with anchor #%s", p, fragment)
	if s := githubSlug(fragment); s != fragment && d.anchors[s] {
		msg += fmt.Sprintf(" (anchors are lowercase slugs: #%s exists)", s)
	}
	return msg
}

// trackedFiles lists the files git tracks under root.
func trackedFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s (links must resolve to tracked files): %v", root, err)
	}
	return strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
}

// TestDocLinks: every relative link, #anchor and
// github.com/cardsync/cardsync/blob/main link of every tracked markdown
// file resolves on GitHub.
func TestDocLinks(t *testing.T) {
	tree := newDocTree("..", trackedFiles(t, ".."))
	n := 0
	for f := range tree.files {
		if strings.HasSuffix(f, ".md") {
			n++
		}
	}
	if n < 2 {
		t.Fatalf("git tracks %d markdown files; expected README.md and the guides", n)
	}
	for _, p := range brokenDocLinks(tree) {
		t.Error("broken link: " + p)
	}
}
