package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGithubSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Exit codes of every command":              "exit-codes-of-every-command",
		"What `status` reports":                    "what-status-reports",
		"Why a static user, not `DynamicUser=yes`": "why-a-static-user-not-dynamicuseryes",
		"The goals, side by side: `make bench`":    "the-goals-side-by-side-make-bench",
		"CardsyncTargetDown":                       "cardsynctargetdown",
		"snake_case and 2 digits":                  "snake_case-and-2-digits",
		"Links [like this](other.md#x) read":       "links-like-this-read",
		"Tags <em>vanish</em>, `<code>` stays":     "tags-vanish-code-stays",
		"Ünïcode letters — kept":                   "ünïcode-letters--kept",
	} {
		if got := githubSlug(heading); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", heading, got, want)
		}
	}
	d := parseMarkdown("# Dup\n\n## Dup\n\n```sh\n# Dup\n```\n\n### Dup ###\n")
	var got []string
	for _, h := range d.headings {
		got = append(got, h.anchor)
	}
	if want := "dup dup-1 dup-2"; strings.Join(got, " ") != want {
		t.Errorf("duplicate headings (one in a code block) got anchors %q, want %q", got, want)
	}
}

// writeFixture writes files (path: content) under a new temporary root
// and returns the tree, every file tracked.
func writeFixture(t *testing.T, files map[string]string) *docTree {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var list []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(root, p)
			list = append(list, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return newDocTree(root, list)
}

// TestDocLinksFixture proves the checker passes a tree whose links all
// resolve and reports each kind of broken link with file:line.
func TestDocLinksFixture(t *testing.T) {
	good := map[string]string{
		"README.md": "# Tool\n\nSee [ops](docs/ops.md), [exit codes](docs/ops.md#exit-codes),\n" +
			"[the second](docs/ops.md#exit-codes-1) and [status](#what-status-reports), [a\nwrapped link](#tool).\n\n" +
			"## What `status` reports\n\n![logo](img/logo.png \"Logo\") [unit](systemd/) [L](config.toml#L2)\n" +
			"[ref][ops] and [x][] and <a href=\"docs/ops.md#pinned\">pinned</a> <https://example.com/nope>\n\n" +
			"[ops]: docs/ops.md#exit-codes\n[x]: https://github.com/cardsync/cardsync/blob/main/docs/ops.md#pinned\n",
		"docs/ops.md": "# Operating\n\n## Exit codes\n\n## Exit codes\n\n<a id=\"pinned\"></a>\n\n" +
			"```md\n## Fenced\n[not a link](missing.md)\n```\n\nBack to [the README](../README.md#tool); `[code](nope.md)`.\n",
		"img/logo.png":     "png",
		"systemd/unit":     "[Unit]",
		"config.toml":      "a = 1\nb = 2\n",
		"docs/untouched.x": "",
	}
	if p := brokenDocLinks(writeFixture(t, good)); len(p) != 0 {
		t.Fatalf("a tree whose links all resolve reported:\n%s", strings.Join(p, "\n"))
	}
	bad := map[string]string{
		"README.md": "# Tool\n\n[gone](docs/gone.md)\n[anchor](docs/ops.md#fenced)\n[self](#nope)\n" +
			"[case](#Tool)\n[up](../outside.md)\n[dup](docs/ops.md#exit-codes-2)\n" +
			"https://github.com/cardsync/cardsync/blob/main/docs/ops.md#missing\n[line](config.toml#L9)\n" +
			"[u][nolabel]\n[wrapped\ntext](docs/ops.md#nowhere)\n",
		"docs/ops.md": "# Operating\n\n## Exit codes\n\n## Exit codes\n\n```\n## Fenced\n```\n",
		"config.toml": "a = 1\n",
	}
	got := strings.Join(brokenDocLinks(writeFixture(t, bad)), "\n")
	for _, want := range []string{
		"README.md:3: docs/gone.md: docs/gone.md does not exist",
		"README.md:4: docs/ops.md#fenced: docs/ops.md has no heading or <a id> with anchor #fenced",
		"README.md:5: #nope: README.md has no heading",
		"README.md:6: #Tool: README.md has no heading or <a id> with anchor #Tool (anchors are lowercase slugs: #tool exists)",
		"README.md:7: ../outside.md: points outside the repository",
		"README.md:8: docs/ops.md#exit-codes-2: docs/ops.md has no heading",
		"README.md:9: https://github.com/cardsync/cardsync/blob/main/docs/ops.md#missing: docs/ops.md has no heading",
		"README.md:10: config.toml#L9: #L9: config.toml has 1 lines",
		`README.md:11: [undefined reference "nolabel"]: no [label]: definition`,
		"README.md:13: docs/ops.md#nowhere: docs/ops.md has no heading",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("broken links report lacks %q; it says:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n") + 1; n != 10 {
		t.Errorf("want 10 broken links, got %d:\n%s", n, got)
	}
}
