package postgres

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/money"
)

// pgTypedState is what migration 10 writes, as text: card_fields' types
// and every card's minor units.
func pgTypedState(t *testing.T, w *Warehouse) string {
	t.Helper()
	rows := pgQuery(t, w, `SELECT name || ':' || type || ':' || coalesce(scale::text, '') || ':' || coalesce(minor_column, '') || ':' || conflicts
		FROM card_fields ORDER BY name COLLATE "C"`)
	rows = append(rows, pgQuery(t, w, `SELECT account || '/' || card_id || '=' || coalesce(minor::text, 'NULL') FROM card_state ORDER BY account, card_id`)...)
	return strings.Join(rows, "\n")
}

// TestMigrateTypesFields: a database as schema 9 left it gains typed
// fields at the next Open (migration 10, under the migration lock): the
// fields are typed from the cards stored, their minor units filled, and
// cards_flat's balance_minor (bigint) sums them exactly.
func TestMigrateTypesFields(t *testing.T) {
	ctx := t.Context()
	w, url, _ := openPG(t, Options{})
	run := startRun(t, w)
	p := page(1, nil, 1, 3)
	for id, balance := range []string{`"4966.76"`, `"-0.07"`, `12`, `"N/A"`} {
		data := fmt.Sprintf(`{"id":%d,"balance":%s,"currency":"HKD"}`, id, balance)
		if id == 3 {
			data = `{"id":3,"fee":"1.5"}`
		}
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(id), Data: []byte(data)})
	}
	commit(t, w, run, p)
	p.Cards[0].Data = []byte(`{"id":0,"balance":"N/A","currency":"HKD"}`) // a conflict
	commit(t, w, run, p)
	want := pgTypedState(t, w)
	if !strings.Contains(want, "balance:decimal:2:balance_minor:1\n") {
		t.Fatalf("before the migration:\n%s", want)
	}
	for _, q := range []string{
		`DROP VIEW cards_flat`,
		`ALTER TABLE card_fields DROP COLUMN type, DROP COLUMN scale, DROP COLUMN conflicts, DROP COLUMN minor_column`,
		`ALTER TABLE card_state DROP COLUMN minor`,
		`DELETE FROM schema_migrations WHERE version = 10`,
	} {
		if _, err := w.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	w.Close()
	w2, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatalf("Open after schema 9: %v", err)
	}
	defer w2.Close()
	// The migration sees the cards as they are now, in one batch: two
	// numbers and card 0's "N/A" make balance decimal (more than half of
	// its values), "N/A" its one conflict: as the commits had it.
	got := pgTypedState(t, w2)
	wantNow := want
	if got != wantNow {
		t.Errorf("after the migration:\n%s\nwant\n%s", got, wantNow)
	}
	if got := one(t, pgQuery(t, w2, `SELECT fee_minor::text || ' ' || pg_typeof(fee_minor)::text FROM cards_flat WHERE card_id = '3'`)); got != "150 bigint" { // "1.5" at scale 2
		t.Errorf("fee_minor = %s", got)
	}
}

// TestMigrateTypesDecimal: the migration of cards whose balances are all
// decimals gives balance_minor their exact sum.
func TestMigrateTypesDecimal(t *testing.T) {
	ctx := t.Context()
	w, url, _ := openPG(t, Options{})
	run := startRun(t, w)
	p := page(1, nil, 1, 15)
	var sum int64
	for id := 1; id <= 15; id++ {
		minor := int64(id*id*9973 - 500000)
		sum += minor
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(id), Data: fmt.Appendf(nil, `{"id":%d,"balance":"%s"}`, id, money.FromMinor(minor, 2).String())})
	}
	commit(t, w, run, p)
	for _, q := range []string{
		`DROP VIEW cards_flat`,
		`ALTER TABLE card_fields DROP COLUMN type, DROP COLUMN scale, DROP COLUMN conflicts, DROP COLUMN minor_column`,
		`ALTER TABLE card_state DROP COLUMN minor`,
		`DELETE FROM schema_migrations WHERE version = 10`,
	} {
		if _, err := w.pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	w.Close()
	w2, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if got := one(t, pgQuery(t, w2, `SELECT sum(balance_minor)::text FROM cards_flat`)); got != fmt.Sprint(sum) {
		t.Errorf("SUM(balance_minor) = %s, want %d", got, sum)
	}
}
