package schema

import (
	"errors"
	"fmt"
	"strings"
)

// README markers: the text between them is Markdown(), rewritten by
// `go generate ./schema` (or `go run ./schema/gendocs`).
const (
	ReadmeBegin = "<!-- schema:begin: generated from schema/docs.json by `go generate ./schema`; edit that file, not this section -->"
	ReadmeEnd   = "<!-- schema:end -->"
)

// Markdown renders the README's schema section: a table of every object,
// then each public object's columns in a collapsed <details> block.
func Markdown() string {
	var b strings.Builder
	objs := Objects()
	b.WriteString("| name | kind | one row per | what it holds |\n|---|---|---|---|\n")
	for _, o := range objs {
		kind := string(o.Kind)
		if o.Internal {
			kind += " (internal)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", o.Name, kind, cell(o.RowPer), cell(o.Description))
	}
	b.WriteString(postgresNote())
	b.WriteString("\nThe columns of each public table and view (the same text is in the table `column_docs` and in\n`datasette/metadata.json`):\n")
	for _, o := range objs {
		if o.Internal {
			continue
		}
		fmt.Fprintf(&b, "\n<details><summary><code>%s</code> (%s, %d columns)</summary>\n\n", o.Name, o.Kind, len(o.Columns))
		if o.Generated != "" {
			fmt.Fprintf(&b, "Besides the columns below: %s.\n\n", o.Generated)
		}
		b.WriteString("| column | meaning | unit | example |\n|---|---|---|---|\n")
		for _, c := range o.Columns {
			ex := ""
			if c.Example != "" {
				ex = "`" + cell(c.Example) + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.Name, cell(c.Description), c.Unit, ex)
		}
		b.WriteString("\n</details>\n")
	}
	return b.String()
}

// postgresNote is the README's word on the PostgreSQL warehouse: the same
// meanings, each storage form in PostgreSQL's words (from Forms).
func postgresNote() string {
	var sqlite, postgres []string
	for _, f := range Forms() {
		sqlite = append(sqlite, f.SQLite)
		postgres = append(postgres, f.Postgres)
	}
	list := func(s []string) string {
		return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
	}
	return "\nThe text below is the SQLite warehouse's. A PostgreSQL warehouse's `column_docs` and `COMMENT`s (psql `\\d+`)\n" +
		"say the same in PostgreSQL's types: where it says " + list(sqlite) + ",\nthey say " + list(postgres) + " respectively.\n"
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// ErrNoMarkers is returned by ReplaceReadmeSection when the README lacks
// the begin or end marker.
var ErrNoMarkers = errors.New("README has no schema markers")

// ReplaceReadmeSection returns readme with the text between ReadmeBegin and
// ReadmeEnd replaced by Markdown().
func ReplaceReadmeSection(readme string) (string, error) {
	before, rest, ok := strings.Cut(readme, ReadmeBegin)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrNoMarkers, ReadmeBegin)
	}
	_, after, ok := strings.Cut(rest, ReadmeEnd)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrNoMarkers, ReadmeEnd)
	}
	return before + ReadmeBegin + "\n" + Markdown() + ReadmeEnd + after, nil
}
