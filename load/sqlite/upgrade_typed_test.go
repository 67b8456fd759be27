package sqlite

import (
	"database/sql"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlitecheck"
	"github.com/cardsync/cardsync/money"
)

// schema13Undo turns a file of schema 13 back into one of schema 12 (its
// user_version aside): card_fields without types, card_state without
// minor units. cards_flat, which may read card_state.minor, goes first;
// the upgrade makes it again.
const schema13Undo = `DROP VIEW IF EXISTS cards_flat;
ALTER TABLE card_fields DROP COLUMN type;
ALTER TABLE card_fields DROP COLUMN scale;
ALTER TABLE card_fields DROP COLUMN conflicts;
ALTER TABLE card_fields DROP COLUMN minor_column;
ALTER TABLE card_state DROP COLUMN minor`

// schema18Undo turns a file of schema 18 back into one of schema 17 (its
// user_version aside): no hashes in walk_seen.
const schema18Undo = `ALTER TABLE walk_seen DROP COLUMN hashes`

// schema17Undo turns a file of schema 17 back into one of schema 16 (its
// user_version aside): no per-card scale, currency or rounding flag, no
// rounded count. The views that read card_state's columns go first; the
// upgrade makes them again.
const schema17Undo = `DROP VIEW IF EXISTS cards_current;
DROP VIEW IF EXISTS cards;
ALTER TABLE card_state DROP COLUMN amount_scale;
ALTER TABLE card_state DROP COLUMN amount_currency;
ALTER TABLE card_state DROP COLUMN amounts_rounded;
ALTER TABLE card_fields DROP COLUMN rounded`

// schema15Undo turns a file of schema 15 back into one of schema 14 (its
// user_version aside): no card id key, no rules' counters.
const schema15Undo = `DROP TABLE card_id_key;
ALTER TABLE sync_runs DROP COLUMN card_numbers_masked;
ALTER TABLE sync_runs DROP COLUMN codes_dropped;
ALTER TABLE sync_runs DROP COLUMN track_data_dropped;
ALTER TABLE sync_runs DROP COLUMN fields_dropped`

// typedState is what migration 13 writes, as text: card_fields' types and
// every card's minor units.
func typedState(t *testing.T, db *sql.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT name || ':' || type || ':' || coalesce(scale, '') || ':' || coalesce(minor_column, '') || ':' || conflicts FROM card_fields ORDER BY name`,
		`SELECT account || '/' || card_id || '=' || coalesce(minor, 'NULL') FROM card_state ORDER BY account, card_id`,
	} {
		rows, err := db.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			b.WriteString(s + "\n")
		}
		rows.Close()
	}
	return b.String()
}

// TestUpgradeTypesFields: opening a file of schema 12 types its fields
// from the cards it holds and fills their minor units as the commits of
// schema 13 did (conflicts included), cards_flat's _minor columns read
// them, in the system sqlite3 CLI too, and the analysts' own views are
// made again.
func TestUpgradeTypesFields(t *testing.T) {
	ctx := t.Context()
	w, path, _ := openTest(t, load.Options{})
	run := startRun(t, w)
	p := load.Page{Number: 1, TotalPages: 1, TotalItems: 4}
	for id, balance := range []string{`"10.25"`, `"-0.07"`, `"N/A"`, `3`} {
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(id), Data: fmt.Appendf(nil, `{"id":%d,"balance":%s,"currency":"EUR","on":true}`, id, balance)})
	}
	commit(t, w, run, p) // one batch: its decimals and integers make balance decimal, "N/A" makes it text
	p = load.Page{Number: 1, TotalPages: 1, TotalItems: 1, Cards: []load.Card{{ID: "9", Data: []byte(`{"id":9,"amount":"1.5","fee":"0.10"}`)}}}
	commit(t, w, run, p)
	p.Cards[0].Data = []byte(`{"id":9,"amount":"1.55","fee":"0.1"}`)
	commit(t, w, run, p) // amount 1.55 and fee 0.1 at scale 2, the typed fields' (no growth)
	want := typedState(t, w.db)
	w.Close()
	if !strings.Contains(want, "amount:decimal:2:amount_minor:0\n") || !strings.Contains(want, "default/9={\"amount\":155,\"fee\":10}\n") {
		t.Fatalf("before the upgrade:\n%s", want)
	}

	db := rawDB(t, path)
	// An analyst's views (made here after the undo, which dropped
	// cards_flat) come through the upgrade.
	for _, q := range []string{schema18Undo, schema17Undo, `DROP TABLE rules_state`, schema15Undo, `ALTER TABLE sync_runs DROP COLUMN duration_ms`, schema13Undo, `PRAGMA user_version = 12`,
		`CREATE VIEW my_cards AS SELECT card_id FROM card_state`,
		`CREATE VIEW my_money AS SELECT card_id, amount_minor FROM cards_flat`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	w2, err := Open(ctx, path, load.Options{})
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	got := typedState(t, w2.db)
	// The upgrade sees the cards as they are now, as one batch, at the
	// cards' scale ([cards] amount_scale: no card names a currency but
	// EUR's), as the commits did: fee "0.1" is 10 cents.
	if got != want {
		t.Errorf("after the upgrade:\n%s\nwant\n%s", got, want)
	}
	var mine string
	if err := w2.db.QueryRowContext(ctx, `SELECT group_concat(x) FROM (SELECT card_id || '=' || coalesce(amount_minor, '-') AS x FROM my_money WHERE card_id IN (SELECT card_id FROM my_cards) ORDER BY card_id)`).Scan(&mine); err != nil || mine != "0=-,1=-,2=-,3=-,9=155" {
		t.Errorf("the analyst's views after the upgrade read %q, %v", mine, err)
	}
	w2.Close()
	cli := sqlitecheck.Program(t, "sqlite3", "sqlite3")
	out, err := exec.Command(cli, "-readonly", "-separator", "|", "file:"+path+"?mode=ro",
		"SELECT card_id, amount_minor, typeof(amount_minor), fee_minor FROM cards_flat WHERE card_id = '9'").CombinedOutput()
	if err != nil || string(out) != "9|155|integer|10\n" {
		t.Errorf("sqlite3 reads %q, %v; want 9|155|integer|10", out, err)
	}
}

// TestUpgradeReleaseTypesFields: a release-4 file (schema 4) gains typed
// fields: balance is decimal at scale 2 and SUM(balance_minor) is the
// exact sum of the cards' balance texts in cents.
func TestUpgradeReleaseTypesFields(t *testing.T) {
	path := releaseWarehouse(t, "release4")
	w, err := Open(t.Context(), path, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := queryString(t, w, `SELECT type || ':' || scale || ':' || minor_column || ':' || conflicts FROM card_fields WHERE name = 'balance'`); got != "decimal:2:balance_minor:0" {
		t.Errorf("balance: %s", got)
	}
	var sum int64
	n := 0
	err = eachRow(t.Context(), w.db, `SELECT json_extract(data, '$.balance') FROM card_state`, nil, func(scan func(...any) error) error {
		var s sql.NullString
		if err := scan(&s); err != nil || !s.Valid {
			return err
		}
		a, err := money.Parse(s.String, 2)
		sum += a.Minor()
		n++
		return err
	})
	if err != nil || n == 0 {
		t.Fatalf("%d cards: %v", n, err)
	}
	if got := queryInt(t, w, `SELECT sum(balance_minor) FROM cards_flat`); got != sum {
		t.Errorf("SUM(balance_minor) = %d, want %d", got, sum)
	}
}
