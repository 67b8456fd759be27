package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// analystsDoc is the analysts' guide, whose queries TestAnalystsQueriesOnDemo
// runs on the demo warehouse.
const analystsDoc = "../../docs/analysts.md"

var (
	// docInlineQuery is a query in a code span of the prose.
	docInlineQuery = regexp.MustCompile("`((?:SELECT|WITH)\\s[^`]*)`")
	// docAlias is a name a query gives a column of its own making.
	docAlias = regexp.MustCompile(`(?i)\bAS\s+([a-z_][a-z0-9_]*)`)
)

// docQuery is one SQLite query of a Markdown file.
type docQuery struct {
	line int // of its block's opening fence, or of its code span
	sql  string
}

// analystsQueries returns the SQLite queries of the Markdown text doc: each
// statement of its ```sql blocks but PostgreSQL's (first line "--
// postgres"), comments dropped, and each query written in a code span of
// its prose (one starting SELECT or WITH).
func analystsQueries(doc string) []docQuery {
	var out []docQuery
	var prose strings.Builder
	var block *strings.Builder
	start := 0
	for i, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case block == nil && strings.HasPrefix(trimmed, "```sql"):
			block, start = &strings.Builder{}, i+1
		case block == nil && strings.HasPrefix(trimmed, "```"):
			block, start = &strings.Builder{}, 0 // another language: skipped
		case block != nil && trimmed == "```":
			if start > 0 {
				out = append(out, blockQueries(block.String(), start)...)
			}
			block = nil
		case block != nil:
			block.WriteString(line + "\n")
		default:
			prose.WriteString(line)
		}
		// A block's lines are blank in the prose, so spans keep their line.
		prose.WriteString("\n")
	}
	text := prose.String()
	for _, m := range docInlineQuery.FindAllStringSubmatchIndex(text, -1) {
		q := strings.Join(strings.Fields(text[m[2]:m[3]]), " ")
		out = append(out, docQuery{line: strings.Count(text[:m[0]], "\n") + 1, sql: q})
	}
	return out
}

// blockQueries splits one ```sql block, opened at line, into statements:
// comment lines dropped, a statement ending at a line that ends with ";".
func blockQueries(text string, line int) []docQuery {
	if first, _, _ := strings.Cut(strings.TrimSpace(text), "\n"); strings.TrimSpace(first) == "-- postgres" {
		return nil
	}
	var out []docQuery
	var cur strings.Builder
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(l + "\n")
		if strings.HasSuffix(t, ";") {
			out = append(out, docQuery{line: line, sql: strings.TrimSpace(cur.String())})
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, docQuery{line: line, sql: s})
	}
	return out
}

// shownNothing says what a query's result fails to show, or "" when it
// shows something: it has no row, or a column the query makes and names
// itself (AS name) is NULL in every row, as a move between balances is
// when the balances never moved.
func shownNothing(q string, cols []string, rows [][]any) string {
	if len(rows) == 0 {
		return "no row"
	}
	named := map[string]bool{}
	for _, m := range docAlias.FindAllStringSubmatch(q, -1) {
		named[strings.ToLower(m[1])] = true
	}
	for j, c := range cols {
		if !named[strings.ToLower(c)] {
			continue
		}
		some := false
		for _, r := range rows {
			some = some || r[j] != nil
		}
		if !some {
			return fmt.Sprintf("its column %s is NULL in all %d rows", c, len(rows))
		}
	}
	return ""
}

// queryAll runs q and returns its column names and rows.
func queryAll(db *sql.DB, q string) ([]string, [][]any, error) {
	rs, err := db.Query(q)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, nil, err
	}
	var rows [][]any
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		rows = append(rows, vals)
	}
	return cols, rows, rs.Err()
}

// TestAnalystsQueriesOnDemo runs every SQLite query of docs/analysts.md
// on a warehouse `cardsync demo` made, read-only. The page says of its
// example queries "each returns rows" and of its cookbook that each
// "returns rows", and its queries in prose read the warehouse the demo
// makes too: so each must run and show something (shownNothing). A
// demo that stopped moving the account's balances, or adding, changing,
// removing and returning cards, fails here.
func TestAnalystsQueriesOnDemo(t *testing.T) {
	doc, err := os.ReadFile(analystsDoc)
	if err != nil {
		t.Fatal(err)
	}
	queries := analystsQueries(string(doc))
	t.Logf("%d queries in %s", len(queries), analystsDoc)
	// The page held 20 when this test was written: fewer means the
	// extraction lost some.
	if len(queries) < 20 {
		t.Fatalf("found %d queries in %s, want at least 20", len(queries), analystsDoc)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "demo.db")
	e := &env{t: t, vars: map[string]string{}}
	if code, out, errOut := e.run(t.Context(), "demo", "-db", path, "-cards", "60", "-rate", "300"); code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, errOut)
	}
	db := openDB(t, path)
	for _, q := range queries {
		cols, rows, err := queryAll(db, q.sql)
		if err != nil {
			t.Errorf("analysts.md:%d: %v\n%s", q.line, err, q.sql)
			continue
		}
		if why := shownNothing(q.sql, cols, rows); why != "" {
			t.Errorf("analysts.md:%d shows nothing on the demo warehouse (%s):\n%s", q.line, why, q.sql)
		}
	}
}

// TestAnalystsQueriesExtraction: the extraction finds each statement of a
// block, skips PostgreSQL's and other languages' blocks, finds queries in
// code spans across a line break, and numbers lines.
func TestAnalystsQueriesExtraction(t *testing.T) {
	doc := "Intro `SELECT 1 AS one` and `SELECT name\nFROM t` here.\n" +
		"```sh\nsqlite3 x 'SELECT 2'\n```\n" +
		"```sql\n-- a comment\nSELECT 3;\n-- another\nSELECT 4\nFROM u;\n```\n" +
		"```sql\n-- postgres\nSELECT 5;\n```\n" +
		"Then `WITH a AS (SELECT 6) SELECT * FROM a` and `select_me`.\n"
	var got []string
	for _, q := range analystsQueries(doc) {
		got = append(got, fmt.Sprintf("%d:%s", q.line, q.sql))
	}
	want := []string{"6:SELECT 3;", "6:SELECT 4\nFROM u;", "1:SELECT 1 AS one", "1:SELECT name FROM t", "17:WITH a AS (SELECT 6) SELECT * FROM a"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("queries %q, want %q", got, want)
	}
}

// TestShownNothing: no row, or a column of the query's own naming NULL in
// every row, shows nothing; a NULL in a plain column (a run's error) or
// in some rows only does not.
func TestShownNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		q    string
		cols []string
		rows [][]any
		want bool
	}{
		{"no row", "SELECT a FROM t", []string{"a"}, nil, true},
		{"a row", "SELECT a FROM t", []string{"a"}, [][]any{{int64(1)}}, false},
		{"plain column all NULL", "SELECT run_id, error FROM sync_runs", []string{"run_id", "error"}, [][]any{{int64(1), nil}}, false},
		{"named column all NULL", "SELECT day, x - lag(x) OVER (ORDER BY day) AS moved FROM d", []string{"day", "moved"},
			[][]any{{"2026-01-01", nil}}, true},
		{"named column NULL in one row", "SELECT day, x - lag(x) OVER (ORDER BY day) as Moved FROM d", []string{"day", "moved"},
			[][]any{{"2026-01-01", nil}, {"2026-01-02", int64(5)}}, false},
		{"cast is no name", "SELECT CAST(a AS INTEGER) AS n, b FROM t", []string{"n", "b"}, [][]any{{int64(1), nil}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := shownNothing(tt.q, tt.cols, tt.rows); (got != "") != tt.want {
				t.Errorf("shownNothing = %q, want nothing shown: %v", got, tt.want)
			}
		})
	}
}
