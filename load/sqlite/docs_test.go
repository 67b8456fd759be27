package sqlite

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/schema"
)

// TestColumnDocsCoverEveryPublicColumn compares schema.Objects with the
// real migrated warehouse: every table and view is documented (or marked
// internal), every column of a public object has a description, no
// documented column is missing, and column_docs holds exactly those rows.
func TestColumnDocsCoverEveryPublicColumn(t *testing.T) {
	w, _, _ := openTest(t, load.Options{})
	ctx := t.Context()
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 3), 1, 3)) // cards_flat gets field columns

	docs := map[string]schema.Object{}
	for _, o := range schema.Objects() {
		if _, dup := docs[o.Name]; dup {
			t.Errorf("%s documented twice", o.Name)
		}
		docs[o.Name] = o
	}
	rows, err := w.db.QueryContext(ctx, `SELECT name, type FROM sqlite_schema
		WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var objects [][2]string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		objects = append(objects, [2]string{name, typ})
	}
	rows.Close()
	if len(objects) < 15 {
		t.Fatalf("only %d objects in the warehouse", len(objects))
	}
	for _, ob := range objects {
		name, typ := ob[0], ob[1]
		t.Run(name, func(t *testing.T) {
			o, ok := docs[name]
			if !ok {
				t.Fatalf("%s %s is not in schema.Objects (schema/docs.json)", typ, name)
			}
			delete(docs, name)
			if string(o.Kind) != typ {
				t.Errorf("%s documented as a %s, is a %s", name, o.Kind, typ)
			}
			if o.Description == "" || o.RowPer == "" {
				t.Errorf("%s has no description or row", name)
			}
			if o.Internal {
				return
			}
			var cols []string
			r, err := w.db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, name)
			if err != nil {
				t.Fatal(err)
			}
			for r.Next() {
				var c string
				if err := r.Scan(&c); err != nil {
					t.Fatal(err)
				}
				cols = append(cols, c)
			}
			r.Close()
			documented := map[string]schema.Column{}
			for _, c := range o.Columns {
				documented[c.Name] = c
				if !slices.Contains(cols, c.Name) {
					t.Errorf("%s.%s is documented but not a column", name, c.Name)
				}
			}
			for _, c := range cols {
				d, ok := documented[c]
				if o.Generated != "" && !ok {
					continue // a card field of cards_flat
				}
				if !ok || strings.TrimSpace(d.Description) == "" {
					t.Errorf("%s.%s has no description in schema/docs.json", name, c)
				}
			}
		})
	}
	for name := range docs {
		t.Errorf("%s is documented but not in the warehouse", name)
	}
	got, err := storedColumnDocs(ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	if want := schema.ColumnDocs(); !slices.Equal(got, want) || len(got) < 150 {
		t.Errorf("column_docs holds %d rows, want the %d documented columns", len(got), len(want))
	}
	if n := queryInt(t, w, `SELECT count(*) FROM column_docs WHERE unit = 'cents'`); n < 6 {
		t.Errorf("%d columns in cents, want the 6 amounts of account_snapshots and more", n)
	}
}

// TestColumnDocsRefreshed: rows edited, deleted or added by hand (or left
// by another binary) are put back on the next writer open; an open of an
// up-to-date warehouse writes nothing.
func TestColumnDocsRefreshed(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	w.Close()
	db := rawDB(t, path)
	for _, q := range []string{
		`UPDATE column_docs SET description = 'stale' WHERE table_name = 'sync_runs' AND column_name = 'status'`,
		`DELETE FROM column_docs WHERE table_name = 'cards'`,
		`INSERT INTO column_docs VALUES ('sync_runs', 'gone', 'a column of an older binary', NULL)`,
	} {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	var logs bytes.Buffer
	opts := load.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	w2, err := Open(t.Context(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := storedColumnDocs(t.Context(), w2.db)
	w2.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, schema.ColumnDocs()) {
		t.Errorf("column_docs not refreshed: %d rows", len(got))
	}
	if !strings.Contains(logs.String(), "column_docs refreshed") {
		t.Errorf("no refresh logged:\n%s", logs.String())
	}
	logs.Reset()
	w3, err := Open(t.Context(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	w3.Close()
	if strings.Contains(logs.String(), "column_docs refreshed") {
		t.Errorf("an up-to-date warehouse was refreshed:\n%s", logs.String())
	}
}
