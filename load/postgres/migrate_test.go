package postgres

import (
	"fmt"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// releaseCard is a card as the API sends it, members in the given order
// (reversed or not), with a key twice: the last one is the card's.
func releaseCard(id int, reversed bool) string {
	if reversed {
		return fmt.Sprintf(`{"status":"active","limits":{"monthly":"10.00","daily":"1.00"},"id":%d,"brand":"visa","balance":"1.00","balance":"2.00"}`, id)
	}
	return fmt.Sprintf(`{"balance":"2.00","brand":"visa","id":%d,"limits":{"daily":"1.00","monthly":"10.00"},"status":"active"}`, id)
}

// TestMigrateCanonicalAddsNoVersion takes a database as schema 4 left it
// (card_state.data_hash over the members in the order received), applies
// migration 5 and syncs the same cards in another member order: every
// card is unchanged and no version is added.
func TestMigrateCanonicalAddsNoVersion(t *testing.T) {
	ctx := t.Context()
	w, _, _ := openPG(t, Options{})
	const n = 15
	p := page(1, nil, 1, n)
	for id := 1; id <= n; id++ {
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(id), Data: []byte(releaseCard(id, false))})
	}
	if got := commit(t, w, startRun(t, w), p); got.New != n {
		t.Fatalf("first page: %+v", got)
	}
	// What schema 4 held: the hash of the text as received.
	for id := 1; id <= n; id++ {
		old := releaseCard(id, true)
		if _, err := w.pool.Exec(ctx, `UPDATE card_state SET data_hash = $1 WHERE card_id = $2`, load.DataHash([]byte(old)), fmt.Sprint(id)); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{`DELETE FROM schema_migrations WHERE version = 5`, `ALTER TABLE sync_runs DROP COLUMN secrets_redacted`} {
		if _, err := w.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	applied, err := Migrate(ctx, w.pool, nil, load.DefaultAmountRules())
	if err != nil || len(applied) != 1 || applied[0] != 5 {
		t.Fatalf("Migrate = %v, %v; want migration 5 applied", applied, err)
	}
	p.Cards = p.Cards[:0]
	for id := 1; id <= n; id++ {
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(id), Data: []byte(releaseCard(id, id%2 == 0))})
	}
	if got := commit(t, w, startRun(t, w), p); got != (counts{Unchanged: n}) {
		t.Errorf("the same cards in another member order after the migration: %+v, want %d unchanged", got, n)
	}
	if got := one(t, pgQuery(t, w, `SELECT count(*) FROM card_versions`)); got != fmt.Sprint(n) {
		t.Errorf("%s card_versions rows, want %d", got, n)
	}
}
