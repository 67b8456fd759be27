package postgres

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/cardsync/cardsync/load"
)

// TestColumnDocsAsSQLite: column_docs documents the SQLite warehouse's
// columns (and PostgreSQL's own sync_leases), with the same units, in PostgreSQL's words (docs_test.go checks
// the words), and an Open puts back rows another binary left different.
func TestColumnDocsAsSQLite(t *testing.T) {
	const q = `SELECT table_name || '|' || column_name || '|' || description || '|' || coalesce(unit, 'NULL') FROM column_docs`
	const names = `SELECT table_name || '|' || column_name || '|' || coalesce(unit, 'NULL') FROM column_docs`
	var cols [][]string
	for _, b := range backends(t, 0, 0) {
		// sync_leases and sync_replicas are PostgreSQL's alone (docs.json "only").
		rows := slices.DeleteFunc(b.query(t, names), func(r string) bool {
			return strings.HasPrefix(r, "sync_leases|") || strings.HasPrefix(r, "sync_replicas|")
		})
		slices.Sort(rows)
		cols = append(cols, rows)
	}
	if len(cols) != 2 || !slices.Equal(cols[0], cols[1]) || len(cols[0]) < 150 {
		t.Fatalf("column_docs differ\nsqlite:   %q\npostgres: %q", cols[0], cols[1:])
	}
	var want []string
	for _, o := range postgresObjects() {
		for _, c := range o.Columns {
			if !o.Internal {
				want = append(want, o.Name+"|"+c.Name+"|"+c.Description+"|"+cmp.Or(c.Unit, "NULL"))
			}
		}
	}
	slices.Sort(want)
	w, url, _ := openPG(t, Options{})
	if got := pgQuery(t, w, q); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Errorf("column_docs is not the PostgreSQL documentation: %d rows, want %d", len(got), len(want))
	}
	if _, err := w.pool.Exec(t.Context(), `UPDATE column_docs SET description = 'stale' WHERE table_name = 'sync_runs';
		DELETE FROM column_docs WHERE table_name = 'cards_flat'`); err != nil {
		t.Fatal(err)
	}
	again, err := Open(t.Context(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	got := pgQuery(t, w, q)
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("column_docs not refreshed at Open: %d rows, want %d", len(got), len(want))
	}
}

// flatValues checks that every field column of cards_flat reads what
// card_state.data holds under the field's name (->>, numbers compared as
// text), and returns the columns by field name.
func flatValues(t *testing.T, w *Warehouse) map[string]string {
	t.Helper()
	ctx := t.Context()
	columns := map[string]string{}
	agg := one(t, pgQuery(t, w, `SELECT coalesce(jsonb_object_agg(name, column_name), '{}')::text FROM card_fields WHERE in_flat_view = 1`))
	if err := json.Unmarshal([]byte(agg), &columns); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for name, col := range columns {
		if seen[strings.ToLower(col)] {
			t.Errorf("column %q used twice (case-insensitively)", col)
		}
		seen[strings.ToLower(col)] = true
		if len(col) > 63 || col == "" {
			t.Errorf("field %q: column %q is not a PostgreSQL name", name, col)
		}
		var bad int
		if err := w.pool.QueryRow(ctx, `SELECT count(*) FROM cards_flat f JOIN card_state c USING (account, card_id)
			WHERE f.`+pgx.Identifier{col}.Sanitize()+`::text IS DISTINCT FROM c.data ->> $1`, name).Scan(&bad); err != nil {
			t.Errorf("field %q column %q: %v", name, col, err)
		} else if bad != 0 {
			t.Errorf("field %q column %q: %d cards read another value than data ->> the field", name, col, bad)
		}
	}
	// A decimal field also has its minor-units column (card_fields.minor_column).
	var n, minors int
	if err := w.pool.QueryRow(ctx, `SELECT count(*) FROM card_fields WHERE in_flat_view = 1 AND minor_column IS NOT NULL`).Scan(&minors); err != nil {
		t.Fatal(err)
	}
	if err := w.pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns WHERE table_name = 'cards_flat'`).Scan(&n); err != nil || n != len(columns)+minors+3 {
		t.Errorf("cards_flat has %d columns, %v; want %d fields, %d minor-units columns and 3", n, err, len(columns), minors)
	}
	return columns
}

// TestCardsFlat: cards_flat has a column per field, always text, reading
// the stored values of current and removed cards; a field that appears
// later adds a column and a number field that gets a string stays text;
// a view built on cards_flat survives both.
func TestCardsFlat(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	ctx := t.Context()
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 15), 1, 15))
	cols := flatValues(t, w)
	if len(cols) != 18 || cols["billing_address"] != "billing_address" {
		t.Errorf("columns %v", cols)
	}
	typeOf := func(col string) string {
		return one(t, pgQuery(t, w, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'cards_flat'::regclass AND attname = $1`, col))
	}
	for col, want := range map[string]string{"spent": "text", "id": "text", "balance": "text", "labels": "text", "is_locked": "text", "notes": "text"} {
		if got := typeOf(col); got != want {
			t.Errorf("cards_flat.%s is %s, want %s", col, got, want)
		}
	}
	if got := one(t, pgQuery(t, w, `SELECT (spent::numeric * 2)::text FROM cards_flat WHERE card_id = '3'`)); got != "3.0" {
		t.Errorf("spent * 2 = %s, want 3.0", got)
	}
	if _, err := w.pool.Exec(ctx, `CREATE VIEW my_cards AS SELECT card_id, status FROM cards_flat`); err != nil {
		t.Fatal(err)
	}
	p := page(1, idRange(1, 15), 1, 16)
	p.Cards = append(p.Cards, load.Card{ID: "16", Data: []byte(`{"id":16,"nickname":"late","status":"frozen"}`)})
	commit(t, w, run, p)
	if cols := flatValues(t, w); cols["nickname"] != "nickname" {
		t.Errorf("a new field adds no column: %v", cols)
	}
	if got := joined(pgQuery(t, w, `SELECT status FROM my_cards WHERE card_id IN ('1', '16') ORDER BY card_id`)); got != "active,frozen" {
		t.Errorf("view on cards_flat reads %q", got)
	}
	p.Cards = append(p.Cards, load.Card{ID: "17", Data: []byte(`{"id":17,"spent":"unknown","status":7}`)})
	commit(t, w, run, p)
	flatValues(t, w)
	if got := typeOf("spent"); got != "text" {
		t.Errorf("spent with a string is %s, want text", got)
	}
	if got := joined(pgQuery(t, w, `SELECT spent FROM cards_flat WHERE card_id IN ('3', '17') ORDER BY card_id`)); got != "unknown,1.5" {
		t.Errorf("spent reads %q", got)
	}
	if got := joined(pgQuery(t, w, `SELECT status FROM my_cards WHERE card_id IN ('1', '17') ORDER BY card_id`)); got != "active,7" {
		t.Errorf("view on cards_flat reads %q after a type change", got)
	}
	// Removed cards stay, with removed_at.
	if _, err := w.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		run = startRun(t, w)
		commit(t, w, run, page(1, idRange(1, 14), 1, 14))
		if _, err := w.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
			t.Fatal(err)
		}
	}
	if got := one(t, pgQuery(t, w, `SELECT count(*) FROM cards_flat WHERE removed_at IS NOT NULL`)); got != "3" {
		t.Errorf("removed cards in cards_flat: %s, want 3", got)
	}
	if got := one(t, pgQuery(t, w, `SELECT count(*) FROM cards_flat`)); got != one(t, pgQuery(t, w, `SELECT count(*) FROM cards`)) {
		t.Errorf("cards_flat has %s rows, cards another count", got)
	}
}

// TestCardsFlatOddNames: as in SQLite, field names that collide
// case-insensitively, are long, empty or hold quotes, backslashes, control
// characters, dots or SQL words get a unique column that reads the value.
func TestCardsFlatOddNames(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	run := startRun(t, w)
	long := strings.Repeat("k", 300)
	fields := map[string]any{"id": 1, "status": "a", "Status": "B", "STATUS": "c", "": "empty", `q"x`: "quote", `b\s`: "backslash",
		"t\tz": "tab", "it's": "apostrophe", long: "long", long + "x": "long2", strings.Repeat("é", 40): "wide", "select": "kw",
		"limit": map[string]string{"daily": "5.00"}, "a.b": "dot", "$": "dollar", "café": "crème",
		"card_id": "shadow", "removed_at": "shadow2", "account": "shadow3"}
	doc, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, w, run, load.Page{Number: 1, TotalPages: 1, TotalItems: 1, Cards: []load.Card{{ID: "1", Data: doc}}})
	cols := flatValues(t, w)
	if len(cols) != 20 {
		t.Errorf("%d columns, want 20: %q", len(cols), cols)
	}
	if got := one(t, pgQuery(t, w, `SELECT card_id || '/' || account FROM cards_flat`)); got != "1/default" {
		t.Errorf("cards_flat.card_id/account = %q, want the card's, not the fields'", got)
	}
	if got := one(t, pgQuery(t, w, `SELECT `+pgx.Identifier{cols["limit"]}.Sanitize()+` FROM cards_flat`)); got != `{"daily": "5.00"}` {
		t.Errorf("limit reads %s, want the object as jsonb text", got)
	}
}

// TestCardsFlatColumnLimit: past PostgreSQL's column limit the view stops
// growing and stays valid; the extra fields have in_flat_view = 0.
func TestCardsFlatColumnLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("2,100 fields")
	}
	w, _, _ := openPG(t, Options{})
	parts := []string{`"id":1`}
	for i := range 2100 {
		parts = append(parts, fmt.Sprintf(`"f%04d":%d`, i, i))
	}
	wide := load.Page{Number: 1, TotalPages: 1, TotalItems: 1, Cards: []load.Card{{ID: "1", Data: []byte("{" + strings.Join(parts, ",") + "}")}}}
	// A walk adds at most load.MaxNewFieldsPerWalk fields: three walks.
	var run int64
	for range 3 {
		run = startRun(t, w)
		commit(t, w, run, wide)
		if _, err := w.FinishWalk(t.Context(), run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
			t.Fatal(err)
		}
	}
	if got := one(t, pgQuery(t, w, `SELECT count(*) FROM card_fields WHERE in_flat_view = 1`)); got != fmt.Sprint(flatLimits().Fields) {
		t.Errorf("fields in the view = %s, want %d", got, flatLimits().Fields)
	}
	if got := one(t, pgQuery(t, w, `SELECT count(*) FROM information_schema.columns WHERE table_name = 'cards_flat'`)); got != fmt.Sprint(flatLimits().Fields+3) {
		t.Errorf("cards_flat has %s columns", got)
	}
	commit(t, w, run, load.Page{Number: 2, TotalPages: 2, TotalItems: 2, Cards: []load.Card{{ID: "2", Data: []byte(`{"id":2,"late":1}`)}}})
	if got := one(t, pgQuery(t, w, `SELECT in_flat_view::text || coalesce(column_name, 'NULL') FROM card_fields WHERE name = 'late'`)); got != "0NULL" {
		t.Errorf("late field: %s, want out of the view", got)
	}
	if got := one(t, pgQuery(t, w, `SELECT f1000::text FROM cards_flat WHERE card_id = '1'`)); got != "1000" {
		t.Errorf("f1000 = %s", got)
	}
}

// TestCardsFlatRacingReplicas: replicas of two accounts sharing the
// database commit pages with new fields (some colliding case-insensitively)
// at the same time, and re-create cards_flat concurrently: no commit or
// re-creation fails, and the view ends with every field.
func TestCardsFlatRacingReplicas(t *testing.T) {
	a, url, _ := openPG(t, Options{})
	b, err := Open(t.Context(), url, Options{Common: load.Options{Account: "other"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const pages = 12
	g, ctx := errgroup.WithContext(t.Context())
	for i, w := range []*Warehouse{a, b} {
		g.Go(func() error {
			run, err := w.StartRun(ctx, load.TriggerSchedule, "test")
			if err != nil {
				return err
			}
			for n := 1; n <= pages; n++ {
				doc := fmt.Sprintf(`{"id":%d,"shared_%d":1,"Case_%d":"x","w%d_%d":true}`, n, n, n, i, n)
				if i == 1 {
					doc = fmt.Sprintf(`{"id":%d,"shared_%d":2,"CASE_%d":"y","w%d_%d":false}`, n, n, n, i, n)
				}
				p := load.Page{Number: n, TotalPages: pages, TotalItems: pages, Cards: []load.Card{{ID: fmt.Sprint(n), Data: []byte(doc)}}}
				if _, err := w.CommitPage(ctx, run, p); err != nil {
					return fmt.Errorf("replica %d page %d: %w", i, n, err)
				}
				if err := w.syncFlat(ctx); err != nil {
					return fmt.Errorf("replica %d: %w", i, err)
				}
				if w.flatStale.Load() {
					return fmt.Errorf("replica %d page %d: cards_flat not re-created after the commit", i, n)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	cols := flatValues(t, a)
	if want := 1 + pages*5; len(cols) != want {
		t.Errorf("%d field columns, want %d", len(cols), want)
	}
	if got := one(t, pgQuery(t, a, `SELECT count(*) FROM cards_flat`)); got != fmt.Sprint(2*pages) {
		t.Errorf("cards_flat has %s rows, want %d", got, 2*pages)
	}
}

// TestSyncFlatIdempotent: re-creating cards_flat when it matches
// card_fields changes nothing (the view keeps its oid).
func TestSyncFlatIdempotent(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	commit(t, w, startRun(t, w), page(1, idRange(1, 3), 1, 3))
	oid := func() string { return one(t, pgQuery(t, w, `SELECT 'cards_flat'::regclass::oid`)) }
	before := oid()
	if err := w.syncFlat(t.Context()); err != nil {
		t.Fatal(err)
	}
	if after := oid(); after != before {
		t.Errorf("cards_flat re-created without a change: oid %s -> %s", before, after)
	}
}
