package sqlite

import (
	"slices"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestCardIDKeyUpgrade: a warehouse of schema 14 (no card id key) gets one
// when upgraded, once, kept by every later open; its cards' ids (none a
// card number) stay as they were, and a walk of the same cards after the
// upgrade changes none of them.
func TestCardIDKeyUpgrade(t *testing.T) {
	ctx := t.Context()
	w, path, clk := openTest(t, load.Options{})
	run := startRun(t, w)
	p := page(1, idRange(1, 12), 1, 12)
	if _, err := w.CommitPage(ctx, run, p); err != nil {
		t.Fatal(err)
	}
	ids := func(w *Warehouse) []string {
		var out []string
		rows, err := w.DB().QueryContext(ctx, "SELECT card_id FROM cards ORDER BY card_id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		return out
	}
	before := ids(w)
	w.Close()
	db := rawDB(t, path)
	for _, q := range []string{schema18Undo, schema17Undo, "DROP TABLE rules_state", schema15Undo, "PRAGMA user_version = 14"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	w2, err := Open(ctx, path, load.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	key := w2.ItemRules().IDKey
	if len(key) != load.IDKeyBytes {
		t.Fatalf("key of %d bytes after the upgrade", len(key))
	}
	run2 := startRun(t, w2)
	r, err := w2.CommitPage(ctx, run2, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Unchanged != 12 {
		t.Errorf("after the upgrade: %+v, want 12 unchanged", r)
	}
	if after := ids(w2); !slices.Equal(before, after) {
		t.Errorf("ids %q after the upgrade, want %q", after, before)
	}
	w2.Close()
	w3, err := Open(ctx, path, load.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer w3.Close()
	if !slices.Equal(w3.ItemRules().IDKey, key) {
		t.Error("the key changed at the next open")
	}
}
