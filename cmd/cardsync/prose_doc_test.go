package main

// The guides are scannable: no paragraph of prose in README.md or the
// hand-written guides in docs/ runs past maxParagraphWords, and neither
// does a list item. Code blocks, tables, headings and HTML are not prose;
// the generated references (docs/configuration.md, docs/schema.md) are
// written by their generators, not by hand, and are left out.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/schema"
)

// maxParagraphWords is the longest a paragraph of the guides may be: past
// it, split the paragraph, or turn its enumeration into a list or table.
const maxParagraphWords = 120

// docParagraph is one paragraph of prose of a Markdown file.
type docParagraph struct {
	line  int // of its first line
	words int
}

var (
	// proseListItem opens a list item: a bullet or an ordered marker.
	proseListItem = regexp.MustCompile(`^ {0,3}(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]|$)`)
	// proseBreak is a thematic break or a setext heading's underline.
	proseBreak = regexp.MustCompile(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|=+[ \t]*)$`)
	// proseLinkTarget is the (url) of an inline link, which a reader does
	// not read as words.
	proseLinkTarget = regexp.MustCompile(`\]\([^)]*\)`)
	// proseHTML is an HTML tag or comment.
	proseHTML = regexp.MustCompile(`<!--.*?-->|</?[A-Za-z][^>]*>`)
)

// proseParagraphs returns the paragraphs of prose of a Markdown text, with
// the words a reader reads in each (link targets and HTML not counted).
// Not prose: fenced and indented code, headings, table rows and HTML
// blocks. A list item is a paragraph of its own (its text and the lines
// that continue it), and so is each later paragraph nested in it: a list
// keeps each of its items short, a bullet before a wall of text does not
// make it scannable.
func proseParagraphs(text string) []docParagraph {
	var out []docParagraph
	var cur *docParagraph
	var words []string
	end := func(heading bool) {
		if cur != nil && !heading {
			cur.words = len(words)
			out = append(out, *cur)
		}
		cur, words = nil, nil
	}
	fence := ""
	inList := false // in a list: indented paragraphs after a blank are its items'
	inHTML := false // in an HTML block, which a blank line ends
	blank := true   // the previous line was blank
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		wasBlank := blank
		blank = trimmed == ""
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		case fenceOpen(trimmed) != "":
			end(false)
			fence = fenceOpen(trimmed)
			continue
		case trimmed == "":
			end(false)
			inHTML = false
			continue
		case inHTML:
			continue
		case cur == nil && proseBreak.MatchString(line):
			continue // a thematic break
		case proseListItem.MatchString(line):
			end(false)
			inList = true
			cur = &docParagraph{line: i + 1}
			line = proseListItem.ReplaceAllString(line, "")
			trimmed = strings.TrimSpace(line)
		case wasBlank && inList && indent < 2:
			inList = false // a paragraph after the list
		}
		switch {
		case cur != nil && proseBreak.MatchString(line) && !proseListItem.MatchString(line):
			// After a paragraph's text, = or - underlines a setext heading.
			end(!strings.ContainsAny(trimmed, "*_ "))
			continue
		case cur == nil && wasBlank && indent >= 4 && !inList:
			continue // an indented code block
		case strings.HasPrefix(trimmed, "#"), strings.HasPrefix(trimmed, "|"):
			end(false)
			continue
		case cur == nil && strings.HasPrefix(trimmed, "<"):
			inHTML = true // an HTML block
			continue
		}
		if cur == nil {
			cur = &docParagraph{line: i + 1}
		}
		plain := proseHTML.ReplaceAllString(proseLinkTarget.ReplaceAllString(strings.TrimLeft(trimmed, "> "), "]"), " ")
		words = append(words, strings.Fields(plain)...)
	}
	end(false)
	return out
}

// fenceOpen returns the fence (``` or ~~~ run) a trimmed line opens, or "".
func fenceOpen(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
		if n >= 3 {
			return trimmed[:n]
		}
	}
	return ""
}

// longParagraphs returns "file:line: N words" for each paragraph of text
// over limit words.
func longParagraphs(file, text string, limit int) []string {
	var out []string
	for _, p := range proseParagraphs(text) {
		if p.words > limit {
			out = append(out, fmt.Sprintf("%s:%d: a paragraph of %d words (at most %d: split it, or make its enumeration a list or table)", file, p.line, p.words, limit))
		}
	}
	return out
}

// handWrittenDocs returns README.md and the guides in docs/ that no
// generator writes, as paths relative to the repository root.
func handWrittenDocs(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	generated := []string{config.ReferencePath, schema.DocPath}
	out := []string{"README.md"}
	for _, g := range guides {
		if p := path.Join("docs", filepath.Base(g)); !slices.Contains(generated, p) {
			out = append(out, p)
		}
	}
	if len(out) < 5 {
		t.Fatalf("found %v: want README.md and the guides", out)
	}
	return out
}

// TestDocParagraphsShort: no paragraph of README.md or of a hand-written
// guide is over maxParagraphWords words.
func TestDocParagraphsShort(t *testing.T) {
	for _, name := range handWrittenDocs(t) {
		b, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			t.Fatal(err)
		}
		ps := proseParagraphs(string(b))
		longest := docParagraph{}
		for _, p := range ps {
			if p.words > longest.words {
				longest = p
			}
		}
		t.Logf("%s: %d paragraphs, the longest %d words (line %d)", name, len(ps), longest.words, longest.line)
		for _, p := range longParagraphs(name, string(b), maxParagraphWords) {
			t.Error(p)
		}
	}
}

// words returns n words of filler text.
func words(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }

// TestDocParagraphsFixture proves the count: what is prose and what is
// not, and that a paragraph one word over the limit is reported with its
// file:line and count.
func TestDocParagraphsFixture(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []docParagraph
	}{
		{"one paragraph over lines", "# T\n\n" + words(60) + "\n" + words(61) + "\n", []docParagraph{{3, 121}}},
		{"blank lines split", words(5) + "\n\n" + words(7) + "\n", []docParagraph{{1, 5}, {3, 7}}},
		{"fenced code is not prose", "```sh\n" + words(200) + "\n\n" + words(3) + "\n```\n~~~\n" + words(9) + "\n~~~\n" + words(2), []docParagraph{{9, 2}}},
		{"a longer fence closes only with its length", "````md\n```\n" + words(50) + "\n```\n````\n" + words(4), []docParagraph{{6, 4}}},
		{"tables are not prose", "| a | b |\n|---|---|\n| " + words(200) + " | x |\n", nil},
		{"each list item is a paragraph", "- " + words(70) + "\n  " + words(60) + "\n\n  " + words(50) + "\n\n  ```sh\n  " + words(200) + "\n  ```\n1. " + words(3) + "\n   - " + words(2) + "\n\n" + words(6), []docParagraph{{1, 130}, {4, 50}, {9, 3}, {10, 2}, {12, 6}}},
		{"a line right after a list item is the item's", "* item\n" + words(130) + "\n", []docParagraph{{1, 131}}},
		{"the marker is not a word", "- \n12. " + words(4) + "\n+ `x`", []docParagraph{{1, 0}, {2, 4}, {3, 1}}},
		{"headings are not prose", "# " + words(150) + "\n## " + words(150) + "\n" + words(2), []docParagraph{{3, 2}}},
		{"a heading ends a paragraph", words(3) + "\n## H\n" + words(4), []docParagraph{{1, 3}, {3, 4}}},
		{"setext headings are not prose", words(130) + "\n===\n\n" + words(8) + "\n---\n\n" + words(1) + "\n\n---\n", []docParagraph{{7, 1}}},
		{"indented code is not prose", "    " + words(130) + "\n\n" + words(2) + "\n    " + words(3), []docParagraph{{3, 5}}},
		{"HTML blocks are not prose", "<!-- marker -->\n<a id=\"x\"></a>\n" + words(130) + "\n\n" + words(3) + " <em>em</em>", []docParagraph{{5, 4}}},
		{"a thematic break is neither a list nor a heading", words(2) + "\n\n- - -\n" + words(3) + "\n\n***\n", []docParagraph{{1, 2}, {4, 3}}},
		{"link targets are not words", "[two words](https://example.com/a b) and [ref](x.md#y)", []docParagraph{{1, 4}}},
		{"a quote is prose", "> " + words(10) + "\n> " + words(2), []docParagraph{{1, 12}}},
	} {
		if got := proseParagraphs(c.text); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}

	// Generated paragraphs: one at the limit passes, one word more fails.
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		n := 1 + r.IntN(maxParagraphWords)
		var b strings.Builder
		b.WriteString("# Guide\n\n- a list\n\n")
		lines := 1 + r.IntN(min(8, n))
		for i := range lines {
			k := n / lines
			if i == lines-1 {
				k = n - k*(lines-1)
			}
			b.WriteString(words(k) + "\n")
		}
		if got := longParagraphs("docs/g.md", b.String(), maxParagraphWords); len(got) != 0 {
			t.Errorf("a paragraph of %d words reported: %v", n, got)
		}
		over := b.String() + "extra"
		if n < maxParagraphWords {
			over += " " + words(maxParagraphWords-n)
		}
		over += "\n\n| table |\n"
		want := fmt.Sprintf("docs/g.md:5: a paragraph of %d words", maxParagraphWords+1)
		if got := longParagraphs("docs/g.md", over, maxParagraphWords); len(got) != 1 || !strings.HasPrefix(got[0], want) {
			t.Errorf("a paragraph of %d words: got %q, want one %q", maxParagraphWords+1, got, want)
		}
	}
}
