package postgres

import (
	"slices"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/schema"
)

// pgColumn is a column of the migrated database: its relation's kind and
// its type as format_type names it.
type pgColumn struct{ kind, typ string }

// migratedColumns reads every column of the current schema's tables and
// views, keyed "table.column".
func migratedColumns(t *testing.T, w *Warehouse) map[string]pgColumn {
	t.Helper()
	rows, err := w.pool.Query(t.Context(), `
		SELECT c.relname || '.' || a.attname, c.relkind::text, format_type(a.atttypid, a.atttypmod)
		FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'v')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]pgColumn{}
	for rows.Next() {
		var name string
		var c pgColumn
		if err := rows.Scan(&name, &c.kind, &c.typ); err != nil {
			t.Fatal(err)
		}
		out[name] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDocsMatchCatalog: every documented object and column exists in the
// migrated PostgreSQL database as documented (kind, and for a column that
// names a storage form, that form's type); every timestamptz, numeric and
// jsonb column of a public object, and every amount in cents, says its
// type; every column of a public object is documented; and no column_docs
// row uses SQLite's words for a time or an amount.
func TestDocsMatchCatalog(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	cols := migratedColumns(t, w)
	forms := map[string]schema.Form{}
	for _, f := range schema.Forms() {
		forms[f.Name] = f
	}
	documented := map[string]bool{}
	checked := 0
	for _, o := range postgresObjects() {
		kind := map[schema.Kind]string{schema.KindTable: "r", schema.KindView: "v"}[o.Kind]
		for _, c := range o.Columns {
			name := o.Name + "." + c.Name
			documented[name] = true
			got, ok := cols[name]
			if !ok {
				t.Errorf("%s is documented but PostgreSQL has no such column", name)
				continue
			}
			if got.kind != kind {
				t.Errorf("%s: a %s's column, documented as a %s's", name, got.kind, o.Kind)
			}
			if len(c.Forms) > 1 {
				t.Errorf("%s names %d storage forms", name, len(c.Forms))
			}
			for _, f := range c.Forms {
				if checked++; forms[f].PostgresType != got.typ {
					t.Errorf("%s: documented as {%s} (%s), but PostgreSQL's type is %s", name, f, forms[f].PostgresType, got.typ)
				}
			}
			switch {
			case got.typ == "timestamp with time zone" && !slices.Contains(c.Forms, "time"),
				strings.HasPrefix(got.typ, "numeric(21,2)") && !slices.Contains(c.Forms, "decimal"),
				got.typ == "jsonb" && !slices.Contains(c.Forms, "json"):
				t.Errorf("%s is %s, but its description does not name that form: %q", name, got.typ, c.Description)
			case c.Unit == schema.UnitCents && !strings.Contains(c.Description, strings.TrimSuffix(got.typ, "(21,2)")):
				t.Errorf("%s is %s cents, but its description does not say %s: %q", name, got.typ, got.typ, c.Description)
			}
		}
		if !o.Internal && o.Generated == "" {
			for name := range cols {
				if table, _, _ := strings.Cut(name, "."); table == o.Name && !documented[name] {
					t.Errorf("%s is not documented", name)
				}
			}
		}
	}
	if checked < 40 {
		t.Errorf("%d columns checked against their form's type, want the 40-odd times, amounts and JSON documents", checked)
	}
	for _, row := range pgQuery(t, w, `SELECT d.table_name || '.' || d.column_name || ': ' || d.description FROM column_docs d`) {
		name, _, _ := strings.Cut(row, ":")
		if c, ok := cols[name]; !ok {
			t.Errorf("column_docs documents %s, which PostgreSQL does not have", name)
		} else if strings.Contains(row, "UTC text") || strings.Contains(row, "decimal text") || strings.Contains(row, "YYYY") {
			t.Errorf("column_docs describes a %s column in SQLite's words: %s", c.typ, row)
		}
	}
}

// TestComments: a table, a view and their columns carry the documentation
// as COMMENTs (quotes included), in PostgreSQL's words; an Open puts back
// comments changed or dropped by hand, and only those; a read-only open
// writes none.
func TestComments(t *testing.T) {
	w, u, _ := openPG(t, Options{})
	ctx := t.Context()
	docs := map[string]schema.Object{}
	for _, o := range postgresObjects() {
		docs[o.Name] = o
	}
	column := func(table, col string) string {
		for _, c := range docs[table].Columns {
			if c.Name == col {
				return c.Description
			}
		}
		t.Fatalf("%s.%s not documented", table, col)
		return ""
	}
	const q = `SELECT coalesce(obj_description($1::regclass, 'pg_class'), 'NULL'),
		coalesce(col_description($1::regclass, (SELECT attnum FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2)), 'NULL')`
	check := func(table, col, wantTable, wantCol string) {
		t.Helper()
		var gotTable, gotCol string
		if err := w.pool.QueryRow(ctx, q, table, col).Scan(&gotTable, &gotCol); err != nil {
			t.Fatal(err)
		}
		if gotTable != wantTable || gotCol != wantCol {
			t.Errorf("comments of %s, %s.%s:\n%q\n%q\nwant\n%q\n%q", table, table, col, gotTable, gotCol, wantTable, wantCol)
		}
	}
	cases := [][2]string{
		{"sync_runs", "started_at"},     // a table, a timestamptz
		{"account_balances", "balance"}, // a view, a numeric(21,2)
		{"card_versions", "account"},    // a comment with quotes ('default')
		{"card_state", "data"},          // an internal table: its own comment only
		{"cards_flat", "removed_at"},    // the generated view's fixed columns
		{"account_snapshots", "raw"},    // jsonb
		{"column_docs", "unit"},         // the table of the same text
		{"account_balance_changes", "change_minor"},
	}
	want := func(table, col string) (string, string) {
		o := docs[table]
		if o.Internal {
			return objectComment(o), "NULL"
		}
		return objectComment(o), column(table, col)
	}
	for _, c := range cases {
		wt, wc := want(c[0], c[1])
		check(c[0], c[1], wt, wc)
	}
	if _, wc := want("sync_runs", "started_at"); wc != "When the run started (timestamptz)." {
		t.Errorf("sync_runs.started_at: %q", wc)
	}
	if _, wc := want("account_balances", "balance"); !strings.Contains(wc, "numeric(21,2)") {
		t.Errorf("account_balances.balance: %q", wc)
	}
	if _, wc := want("card_versions", "account"); !strings.Contains(wc, "'default'") || strings.Contains(wc, "schema 5") {
		t.Errorf("card_versions.account: %q", wc)
	}

	// Comments changed and dropped by hand: a read-only open leaves them,
	// a writing open puts them back without touching column_docs.
	adminExec(t, u, `COMMENT ON COLUMN sync_runs.started_at IS 'it''s stale'`, `COMMENT ON VIEW account_balances IS NULL`,
		`COMMENT ON COLUMN card_versions.account IS NULL`)
	r, err := Open(ctx, u, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	check("sync_runs", "started_at", objectComment(docs["sync_runs"]), "it's stale")
	logs := &logBuffer{}
	again, err := Open(ctx, u, Options{Common: load.Options{Logger: logs.logger()}})
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	for _, c := range cases {
		wt, wc := want(c[0], c[1])
		check(c[0], c[1], wt, wc)
	}
	if l := logs.String(); !strings.Contains(l, "comments refreshed") || !strings.Contains(l, "comments=3") || strings.Contains(l, "column_docs refreshed") {
		t.Errorf("the open logged:\n%s", l)
	}
	logs = &logBuffer{}
	again, err = Open(ctx, u, Options{Common: load.Options{Logger: logs.logger()}})
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if l := logs.String(); strings.Contains(l, "refreshed") {
		t.Errorf("an open of an up-to-date database wrote:\n%s", l)
	}
}

// TestCommentsSurviveFlatRecreation: when syncFlat drops and re-creates
// cards_flat (a column of another type), the view and its fixed columns
// get their comments back in the same transaction.
func TestCommentsSurviveFlatRecreation(t *testing.T) {
	w, u, _ := openPG(t, Options{})
	ctx := t.Context()
	run := startRun(t, w)
	commit(t, w, run, cardsPage("1", `{"id":1}`))
	adminExec(t, u, `DROP VIEW cards_flat`,
		`CREATE VIEW cards_flat AS SELECT card_id, removed_at, account, (data ->> 'id')::numeric AS id FROM card_state`)
	if err := w.syncFlat(ctx); err != nil {
		t.Fatal(err)
	}
	flat := postgresObjects()[slices.IndexFunc(postgresObjects(), func(o schema.Object) bool { return o.Name == "cards_flat" })]
	got := one(t, pgQuery(t, w, `SELECT obj_description('cards_flat'::regclass, 'pg_class') || '|' ||
		col_description('cards_flat'::regclass, 1) || '|' || format_type(atttypid, atttypmod)
		FROM pg_attribute WHERE attrelid = 'cards_flat'::regclass AND attname = 'id'`))
	if want := objectComment(flat) + "|" + flat.Columns[0].Description + "|text"; got != want {
		t.Errorf("cards_flat after re-creation: %q, want %q", got, want)
	}
}

// TestCommentsNeedOwner: a role that may write the tables (and create in
// the schema, though an up-to-date database no longer needs it: see
// TestWritableNeedsWritePrivileges) but owns none opens the warehouse with
// a warning, column_docs filled.
func TestCommentsNeedOwner(t *testing.T) {
	w, u, _ := openPG(t, Options{})
	ro := readOnlyRole(t, u)
	role := strings.Split(strings.TrimPrefix(ro, "postgres://"), "@")[0]
	adminExec(t, u, `GRANT CREATE ON SCHEMA public TO `+role, `GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO `+role,
		`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO `+role,
		`COMMENT ON TABLE sync_runs IS NULL`, `DELETE FROM column_docs WHERE table_name = 'sync_runs'`)
	logs := &logBuffer{}
	r, err := Open(t.Context(), ro, Options{Password: "analyst-pw", Common: load.Options{Logger: logs.logger()}})
	if err != nil {
		t.Fatalf("Open as a role that owns nothing: %v", err)
	}
	r.Close()
	if l := logs.String(); !strings.Contains(l, "COMMENTs of the warehouse's tables and views not written") || !strings.Contains(l, "42501") {
		t.Errorf("no warning:\n%s", l)
	}
	if n := one(t, pgQuery(t, w, `SELECT count(*) FROM column_docs WHERE table_name = 'sync_runs'`)); n == "0" {
		t.Error("column_docs not refilled")
	}
}
