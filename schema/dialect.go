package schema

import (
	"fmt"
	"strings"
)

// Dialect names a database the warehouse lives in. The documentation says
// what a column means once; where the two databases store it differently
// (a time as text or as timestamptz), its text names each one's form.
type Dialect string

// The dialects of the warehouse.
const (
	DialectSQLite   Dialect = "sqlite"
	DialectPostgres Dialect = "postgres"
)

// Form is a storage form a description names with a placeholder ({time}):
// the same meaning, stored differently in each dialect.
type Form struct {
	// Name is the placeholder's name: {Name} in a description.
	Name string
	// SQLite and Postgres are the words the placeholder becomes.
	SQLite, Postgres string
	// PostgresType is the column's type as PostgreSQL's format_type names
	// it; a test checks it against the migrated database.
	PostgresType string
}

// Forms returns the storage forms descriptions may name, in a fixed order.
// Each call returns a new slice.
func Forms() []Form {
	return []Form{
		{Name: "time", SQLite: "UTC text YYYY-MM-DDTHH:MM:SSZ", Postgres: "timestamptz", PostgresType: "timestamp with time zone"},
		{Name: "decimal", SQLite: "exact decimal text", Postgres: "exact numeric(21,2)", PostgresType: "numeric(21,2)"},
		{Name: "cents", SQLite: "cents", Postgres: "cents (bigint)", PostgresType: "bigint"},
		{Name: "json", SQLite: "JSON text", Postgres: "jsonb", PostgresType: "jsonb"},
	}
}

// form returns the Form named name.
func form(name string) (Form, bool) {
	for _, f := range Forms() {
		if f.Name == name {
			return f, true
		}
	}
	return Form{}, false
}

// formsOf returns the names of the forms a raw description (as docs.json
// holds it) names, in order, with repeats.
func formsOf(raw string) []string {
	var out []string
	for rest := raw; ; {
		_, after, ok := strings.Cut(rest, "{")
		if !ok {
			return out
		}
		inner, tail, ok := strings.Cut(after, "}")
		if !ok {
			return out
		}
		if !strings.Contains(inner, "|") {
			out = append(out, inner)
		}
		rest = tail
	}
}

// expand returns raw as dialect d says it. raw may hold placeholders:
// {name} is the Form of that name in d's words; {sqlite text|postgres text}
// is the text before the bar in SQLite, after it in PostgreSQL (either may
// be empty), for the few facts that differ otherwise (a schema version
// number, a column limit). Braces do not nest.
func expand(raw string, d Dialect) (string, error) {
	var b strings.Builder
	rest := raw
	for {
		before, after, ok := strings.Cut(rest, "{")
		if strings.Contains(before, "}") {
			return "", fmt.Errorf("%q: unbalanced }", raw)
		}
		b.WriteString(before)
		if !ok {
			return b.String(), nil
		}
		inner, tail, ok := strings.Cut(after, "}")
		if !ok || strings.Contains(inner, "{") {
			return "", fmt.Errorf("%q: unbalanced {", raw)
		}
		var text string
		if sqlite, postgres, alt := strings.Cut(inner, "|"); alt {
			if strings.Contains(postgres, "|") {
				return "", fmt.Errorf("%q: {%s} has more than one |", raw, inner)
			}
			text = sqlite
			if d == DialectPostgres {
				text = postgres
			}
		} else {
			f, ok := form(inner)
			if !ok {
				return "", fmt.Errorf("%q: unknown form {%s}", raw, inner)
			}
			text = f.SQLite
			if d == DialectPostgres {
				text = f.Postgres
			}
		}
		b.WriteString(text)
		rest = tail
	}
}

// expandObject returns o with every text in d's words.
func expandObject(o Object, d Dialect) (Object, error) {
	var err error
	for _, s := range []*string{&o.RowPer, &o.Description, &o.Generated} {
		if *s, err = expand(*s, d); err != nil {
			return o, fmt.Errorf("%s: %w", o.Name, err)
		}
	}
	o.Columns = append([]Column(nil), o.Columns...)
	for i := range o.Columns {
		c := &o.Columns[i]
		if c.Description, err = expand(c.Description, d); err != nil {
			return o, fmt.Errorf("%s.%s: %w", o.Name, c.Name, err)
		}
	}
	return o, nil
}
