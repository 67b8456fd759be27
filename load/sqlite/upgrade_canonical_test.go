package sqlite

import (
	"fmt"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// releaseFiveCard is card id as the API sends it, members in the order
// given by reversed: release 5 stored (and hashed) it in that order.
func releaseFiveCard(id int, reversed bool) string {
	if reversed {
		return fmt.Sprintf(`{"status":"active","limits":{"monthly":"10.00","daily":"1.00"},"id":%d,"brand":"visa","balance":"1.00","balance":"2.00"}`, id)
	}
	return fmt.Sprintf(`{"balance":"2.00","brand":"visa","id":%d,"limits":{"daily":"1.00","monthly":"10.00"},"status":"active"}`, id)
}

// TestUpgradeCanonicalAddsNoVersion takes a warehouse as schema 9 left it
// (cards stored and hashed with their members in the order received,
// duplicates kept, as every release before schema 10), upgrades it, and syncs the same cards sent
// in another member order: every card is unchanged, no version is added,
// and history keeps its rows, rewritten in place.
func TestUpgradeCanonicalAddsNoVersion(t *testing.T) {
	ctx := t.Context()
	w, path, _ := openTest(t, load.Options{})
	const n = 20
	p := page(1, nil, 1, n)
	for id := 1; id <= n; id++ {
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(id), Data: []byte(releaseFiveCard(id, false))})
	}
	if got := commit(t, w, startRun(t, w), p); got.New != n {
		t.Fatalf("first page: %+v", got)
	}
	// What release 5 wrote: the documents in the order received.
	for id := 1; id <= n; id++ {
		old := releaseFiveCard(id, true)
		for _, q := range []string{
			`UPDATE card_state SET data = ?1, data_hash = ?2 WHERE card_id = ?3`,
			`UPDATE card_versions SET data = ?1 WHERE card_id = ?3`,
		} {
			if _, err := w.db.ExecContext(ctx, q, old, load.DataHash([]byte(old)), fmt.Sprint(id)); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Close()
	db := rawDB(t, path)
	for _, q := range []string{schema18Undo, schema17Undo, `DROP TABLE rules_state`, schema15Undo, `ALTER TABLE sync_runs DROP COLUMN duration_ms`, schema13Undo, `ALTER TABLE sync_runs DROP COLUMN holder`, `ALTER TABLE sync_runs DROP COLUMN cards_returned`, `ALTER TABLE sync_runs DROP COLUMN secrets_redacted`, `PRAGMA user_version = 9`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	w, err := Open(ctx, path, load.Options{})
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	defer w.Close()
	want := releaseFiveCard(1, false)
	if got := queryString(t, w, `SELECT data FROM card_state WHERE card_id = '1'`); got != want {
		t.Errorf("card_state.data after the upgrade = %s, want %s", got, want)
	}
	if got := queryString(t, w, `SELECT data FROM card_versions WHERE card_id = '1'`); got != want {
		t.Errorf("card_versions.data after the upgrade = %s, want %s", got, want)
	}
	p.Cards = p.Cards[:0]
	for id := 1; id <= n; id++ {
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(id), Data: []byte(releaseFiveCard(id, id%2 == 0))})
	}
	if got := commit(t, w, startRun(t, w), p); got != (counts{Unchanged: n}) {
		t.Errorf("the same cards in another member order after the upgrade: %+v, want %d unchanged", got, n)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM card_versions`); got != n {
		t.Errorf("%d card_versions rows, want %d", got, n)
	}
}
