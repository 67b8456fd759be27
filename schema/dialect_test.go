package schema

import (
	"slices"
	"strings"
	"testing"
)

// TestExpand: a form becomes each dialect's words, an alternative its side
// of the bar, and a malformed placeholder is an error.
func TestExpand(t *testing.T) {
	for _, c := range []struct{ raw, sqlite, postgres string }{
		{"When ({time}).", "When (UTC text YYYY-MM-DDTHH:MM:SSZ).", "When (timestamptz)."},
		{"x as {decimal}.", "x as exact decimal text.", "x as exact numeric(21,2)."},
		{"version {9|4}{ since 3|}.", "version 9 since 3.", "version 4."},
		{"no placeholder", "no placeholder", "no placeholder"},
	} {
		for d, want := range map[Dialect]string{DialectSQLite: c.sqlite, DialectPostgres: c.postgres} {
			if got, err := expand(c.raw, d); err != nil || got != want {
				t.Errorf("expand(%q, %s) = %q, %v; want %q", c.raw, d, got, err, want)
			}
		}
	}
	for _, raw := range []string{"{nosuchform}", "open {time", "close }", "{a|b|c}", "{a{time}}"} {
		if got, err := expand(raw, DialectPostgres); err == nil {
			t.Errorf("expand(%q) = %q, want an error", raw, got)
		}
	}
	if got := formsOf("a {time} b {9|4} c {cents}"); !slices.Equal(got, []string{"time", "cents"}) {
		t.Errorf("formsOf = %q", got)
	}
}

// TestDialectsDescribeTheSameColumns: both dialects document the same
// objects (PostgreSQL's own aside), columns, units and forms; only the words differ, and PostgreSQL's
// never name SQLite's storage forms.
func TestDialectsDescribeTheSameColumns(t *testing.T) {
	sqlite, postgres := ObjectsIn(DialectSQLite), ObjectsIn(DialectPostgres)
	// PostgreSQL's own tables (TestOnlyOneDialect) aside.
	postgres = slices.DeleteFunc(postgres, func(o Object) bool {
		return o.Name == "sync_leases" || o.Name == "sync_replicas" || o.Name == "schema_migrations"
	})
	if len(sqlite) != len(postgres) {
		t.Fatalf("%d objects in SQLite, %d in PostgreSQL", len(sqlite), len(postgres))
	}
	// JSON text is no SQLite word: cards_flat's columns are JSON text in
	// both (data ->> 'field').
	sqliteWords := []string{"UTC text", "YYYY-MM-DDTHH:MM:SSZ", "decimal text"}
	forms := 0
	for i, s := range sqlite {
		p := postgres[i]
		if s.Name != p.Name || s.Kind != p.Kind || len(s.Columns) != len(p.Columns) {
			t.Fatalf("object %d: %s/%s, %d/%d columns", i, s.Name, p.Name, len(s.Columns), len(p.Columns))
		}
		texts := []string{p.Description, p.RowPer, p.Generated}
		for j, sc := range s.Columns {
			pc := p.Columns[j]
			if sc.Name != pc.Name || sc.Unit != pc.Unit || !slices.Equal(sc.Forms, pc.Forms) {
				t.Errorf("%s: column %d differs: %+v / %+v", s.Name, j, sc, pc)
			}
			forms += len(pc.Forms)
			texts = append(texts, pc.Description)
		}
		for _, text := range texts {
			for _, w := range sqliteWords {
				if strings.Contains(text, w) {
					t.Errorf("%s: PostgreSQL's text names SQLite's %q: %s", p.Name, w, text)
				}
			}
			if strings.ContainsAny(text, "{}") {
				t.Errorf("%s: a placeholder left in %q", p.Name, text)
			}
		}
	}
	if forms < 40 {
		t.Errorf("%d columns name a storage form, want the 40-odd times, amounts and JSON documents", forms)
	}
}

// TestOnlyOneDialect: an object docs.json marks as one dialect's is
// documented in that dialect alone; an unknown dialect is an error.
func TestOnlyOneDialect(t *testing.T) {
	has := func(objects []Object, name string) bool {
		for _, o := range objects {
			if o.Name == name {
				return true
			}
		}
		return false
	}
	for _, name := range []string{"sync_leases", "sync_replicas", "schema_migrations"} {
		if !has(ObjectsIn(DialectPostgres), name) || has(Objects(), name) {
			t.Errorf("%s: want it documented for PostgreSQL only", name)
		}
	}
	if _, err := decodeObjects([]byte(`[{"name":"x","kind":"table","only":"mysql","row_per":"r","description":"d"}]`), DialectSQLite); err == nil {
		t.Error("only \"mysql\" decoded")
	}
}
