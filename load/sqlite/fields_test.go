package sqlite

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// uniqueFieldsPage is page n of a walk whose cards each carry their own
// top-level fields: card i holds "id" and u<i*per> … u<i*per+per-1>.
func uniqueFieldsPage(n, cardsPerPage, per, total int) load.Page {
	p := load.Page{Stream: load.StreamCards, Number: n, TotalPages: (total + cardsPerPage - 1) / cardsPerPage, TotalItems: total}
	for c := range cardsPerPage {
		id := (n-1)*cardsPerPage + c
		var b strings.Builder
		fmt.Fprintf(&b, `{"id":%d`, id)
		for f := range per {
			fmt.Fprintf(&b, `,"u%04d":%d`, id*per+f, f)
		}
		b.WriteString("}")
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(id), Data: []byte(b.String())})
	}
	return p
}

// TestNewFieldsPerWalkBounded: a walk meeting 1,500 unique field names (and
// "id") over 15 pages, committed in several batches, records
// MaxNewFieldsPerWalk of them in card_fields and cards_flat; the other 501
// stay in the cards' data (TestNewFieldsSkippedCount counts them). A run
// that resumes the walk has no room left; the next walk adds the rest.
func TestNewFieldsPerWalkBounded(t *testing.T) {
	ctx := t.Context()
	w, _, _ := openTest(t, load.Options{BatchPages: 4})
	run := startRun(t, w)
	ww := w.NewWalkWriter(run, load.StreamCards)
	commits := 0
	for n := 1; n <= 15; n++ {
		r, err := ww.Add(ctx, uniqueFieldsPage(n, 10, 10, 150))
		if err != nil {
			t.Fatal(err)
		}
		if r.Committed.Pages > 0 {
			commits++
		}
	}
	if err := ww.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if commits < 2 {
		t.Fatalf("%d commits before Flush: the walk must span several batches", commits)
	}
	rows := queryInt(t, w, `SELECT count(*) FROM card_fields`)
	if rows != load.MaxNewFieldsPerWalk {
		t.Errorf("card_fields has %d rows, want %d", rows, load.MaxNewFieldsPerWalk)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM pragma_table_info('cards_flat')`); got != load.MaxNewFieldsPerWalk+3 {
		t.Errorf("cards_flat has %d columns, want %d", got, load.MaxNewFieldsPerWalk+3)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM card_fields WHERE name = 'u1499'`); got != 0 {
		t.Errorf("the last field got a card_fields row")
	}
	if got := queryInt(t, w, `SELECT json_extract(data, '$.u1499') FROM cards WHERE card_id = '149'`); got != 9 {
		t.Errorf("a field beyond the bound is not in data: %d", got)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM cards`); got != 150 {
		t.Errorf("%d cards stored, want 150", got)
	}

	// Resumed by another run, the walk has no room: a new field is left out.
	run2 := startRun(t, w)
	ww2 := w.NewWalkWriter(run2, load.StreamCards)
	p := uniqueFieldsPage(16, 10, 10, 160)
	p.Cards[0].Data = []byte(`{"id":150,"late":1}`)
	if _, err := ww2.Add(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := ww2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// "late" and the 90 fields of the page's other nine cards.
	if n := ww2.FieldsSkipped(); n != 91 {
		t.Errorf("the resumed walk skipped %d fields, want 91", n)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM card_fields WHERE name = 'late'`); got != 0 {
		t.Errorf("a run resuming the walk added a field past the walk's bound")
	}
	if _, err := finishWalk(ctx, w, run2, true); err != nil {
		t.Fatal(err)
	}

	// The next walk has room again.
	run3 := startRun(t, w)
	ww3 := w.NewWalkWriter(run3, load.StreamCards)
	for n := 1; n <= 15; n++ {
		if _, err := ww3.Add(ctx, uniqueFieldsPage(n, 10, 10, 150)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ww3.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := ww3.FieldsSkipped(); n != 0 {
		t.Errorf("%d fields skipped by a walk with room", n)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM card_fields`); got != 1501 {
		t.Errorf("card_fields has %d rows after a second walk, want 1501", got)
	}
}

// TestNewFieldsSkippedCount: WalkWriter.FieldsSkipped counts each
// left-out field once, whatever the batches.
func TestNewFieldsSkippedCount(t *testing.T) {
	ctx := t.Context()
	w, _, _ := openTest(t, load.Options{BatchPages: 1})
	run := startRun(t, w)
	ww := w.NewWalkWriter(run, load.StreamCards)
	for n := 1; n <= 15; n++ {
		for range 2 { // every page twice: a field is counted once
			if _, err := ww.Add(ctx, uniqueFieldsPage(n, 10, 10, 150)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := ww.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if want, skipped := 1501-load.MaxNewFieldsPerWalk, ww.FieldsSkipped(); skipped != want {
		t.Errorf("FieldsSkipped adds up to %d, want %d", skipped, want)
	}
}

// TestPlanFieldsRoom: PlanFields adds new fields up to room, in order of
// appearance, and still updates known ones.
func TestPlanFieldsRoom(t *testing.T) {
	var s cardfield.FieldSet
	for _, n := range []string{"known", "a", "b", "c"} {
		s.Add(n, "string")
	}
	have := []cardfield.FieldRow{{Name: "known", JSONTypes: "string", LastRun: 1, Column: "known", InFlatView: true}}
	add, update, skipped := cardfield.PlanFields(have, &s, 2, SQLiteFlatLimits(), 2)
	var names []string
	for _, f := range add {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"a", "b"}) || len(update) != 1 || !slices.Equal(skipped, []string{"c"}) {
		t.Errorf("PlanFields(room 2) added %q, updated %d, skipped %q; want [a b], 1, [c]", names, len(update), skipped)
	}
	if add, _, skipped := cardfield.PlanFields(have, &s, 2, SQLiteFlatLimits(), 0); len(add) != 0 || len(skipped) != 3 {
		t.Errorf("PlanFields(room 0) added %d, skipped %d; want 0, 3", len(add), len(skipped))
	}
}

// TestPruneFields: a field no run has seen for longer than the retention
// is deleted after a complete walk and leaves cards_flat; a field seen
// within it stays, and its column keeps answering.
func TestPruneFields(t *testing.T) {
	ctx := t.Context()
	w, _, clk := openTest(t, load.Options{})
	walk := func(cards ...string) {
		t.Helper()
		run := startRun(t, w)
		p := load.Page{Stream: load.StreamCards, Number: 1, TotalPages: 1, TotalItems: len(cards)}
		for i, c := range cards {
			p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(i + 1), Data: []byte(c)})
		}
		commit(t, w, run, p)
		if _, err := finishWalk(ctx, w, run, true); err != nil {
			t.Fatal(err)
		}
	}
	columns := func() []string {
		t.Helper()
		rows, err := w.db.QueryContext(ctx, `SELECT name FROM pragma_table_info('cards_flat') ORDER BY cid`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}
	walk(`{"id":1,"status":"active","promo":"x"}`)
	if got := queryString(t, w, `SELECT last_seen_at FROM card_fields WHERE name = 'promo'`); got != formatTime(clk.Now()) {
		t.Errorf("last_seen_at = %q, want the commit's time %q", got, formatTime(clk.Now()))
	}
	clk.Advance(60 * 24 * time.Hour)
	walk(`{"id":1,"status":"active"}`) // promo is gone from the card
	if got := queryString(t, w, `SELECT last_seen_at FROM card_fields WHERE name = 'status'`); got != formatTime(clk.Now()) {
		t.Errorf("status last_seen_at = %q, want the second run's %q", got, formatTime(clk.Now()))
	}
	cutoff := func() time.Time { return clk.Now().Add(-load.DefaultFieldRetention) }
	if n, err := w.PruneFields(ctx, cutoff()); err != nil || n != 0 {
		t.Fatalf("PruneFields 60 days on = %d, %v; want 0 (within the retention)", n, err)
	}
	clk.Advance(31 * 24 * time.Hour)
	walk(`{"id":1,"status":"active"}`)
	n, err := w.PruneFields(ctx, cutoff())
	if err != nil || n != 1 {
		t.Fatalf("PruneFields 91 days on = %d, %v; want 1", n, err)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM card_fields WHERE name = 'promo'`); got != 0 {
		t.Error("promo is still in card_fields")
	}
	if got, want := columns(), []string{"card_id", "id", "status", "removed_at", "account"}; !slices.Equal(got, want) {
		t.Errorf("cards_flat columns %q, want %q", got, want)
	}
	if got := queryString(t, w, `SELECT status FROM cards_flat`); got != "active" {
		t.Errorf("cards_flat.status = %q after the prune", got)
	}
	// A pruned field seen again comes back as a new field.
	walk(`{"id":1,"status":"active","promo":"y"}`)
	if got := queryString(t, w, `SELECT promo FROM cards_flat`); got != "y" {
		t.Errorf("cards_flat.promo = %q after the field came back", got)
	}
}
