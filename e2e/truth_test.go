package e2e

import (
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/sim"
)

// assertStructural checks the invariants that hold after any run, complete
// or not: integrity, no duplicate cards or current versions, page atomicity
// (an in-progress walk's committed rows match its checkpoint).
func assertStructural(t *testing.T, path string) {
	t.Helper()
	db := openRO(t, path)
	if !isPostgres(path) {
		var integrity string
		if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
			t.Fatalf("integrity_check = %q, %v", integrity, err)
		}
	}
	if n := queryInt(t, db, `SELECT count(*) FROM (SELECT card_id FROM cards GROUP BY card_id HAVING count(*) > 1) AS dup`); n != 0 {
		t.Errorf("%d duplicated card ids", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM (SELECT card_id FROM card_versions WHERE valid_to IS NULL GROUP BY card_id HAVING count(*) > 1) AS dup`); n != 0 {
		t.Errorf("%d cards with more than one current version", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM cards c WHERE NOT EXISTS (SELECT 1 FROM card_versions v WHERE v.card_id = c.card_id AND v.valid_to IS NULL)`); n != 0 {
		t.Errorf("%d cards without a current version", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM sync_runs WHERE status NOT IN ('running','succeeded','failed','interrupted','abandoned')`); n != 0 {
		t.Errorf("%d runs with an unknown status", n)
	}
}

// assertTruth checks that the warehouse equals the simulator: every card
// listed upstream is current with its latest content, no other card is
// current, and the latest account snapshot equals the account.
func assertTruth(t *testing.T, up *upstream, path string) {
	t.Helper()
	assertStructural(t, path)
	assertAccountTruth(t, up, path, "default")
}

// assertAccountTruth is assertTruth for one account of the warehouse: its
// rows alone equal the simulator. Amounts compare as text: SQLite's view
// shows canonical decimal text, PostgreSQL's numeric(21,2) prints the same.
func assertAccountTruth(t *testing.T, up *upstream, path, account string) {
	t.Helper()
	db := openRO(t, path)
	rows, err := db.Query(`SELECT card_id, data FROM cards WHERE removed_at IS NULL AND account = $1`, account)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for rows.Next() {
		var id string
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			t.Fatal(err)
		}
		got[id] = data
	}
	rows.Close()
	truth := up.Cards()
	if len(got) != len(truth) {
		t.Errorf("account %s: warehouse has %d current cards, simulator %d", account, len(got), len(truth))
	}
	lost := 0
	for _, c := range truth {
		data, ok := got[c.ID]
		if !ok {
			lost++
			continue
		}
		if !reflect.DeepEqual(canonicalJSON(t, data), canonicalJSON(t, c.JSON())) {
			t.Errorf("card %s content differs:\n got %s\nwant %s", c.ID, data, c.JSON())
		}
	}
	if lost > 0 {
		t.Errorf("%d cards lost", lost)
	}
	acct := up.Account()
	for col, want := range map[string]*string{
		"transfer_amount": acct.TransferAmount, "reach_amount": acct.ReachAmount,
		"authorizations": acct.Authorizations, "balance": acct.Balance,
		"cards_balance": acct.CardsBalance, "available_recharge_balance": acct.AvailableRechargeBalance,
	} {
		var gotText sql.NullString
		if err := db.QueryRow(`SELECT CAST(`+col+` AS text) FROM account_balances WHERE account = $1 ORDER BY snapshot_id DESC LIMIT 1`, account).Scan(&gotText); err != nil {
			t.Fatalf("account_balances.%s: %v", col, err)
		}
		switch {
		case want == nil && gotText.Valid:
			t.Errorf("account %s = %q, want NULL", col, gotText.String)
		case want != nil:
			w, err := money.Parse(*want, 2)
			if err != nil {
				t.Fatal(err)
			}
			if gotText.String != w.String() {
				t.Errorf("account %s = %q, want %q", col, gotText.String, w.String())
			}
		}
	}
}

// contentHash hashes the warehouse's data tables (not run bookkeeping), to
// show that a run with no upstream change alters nothing. In PostgreSQL it
// covers card_state and card_versions with each row's xmin: a card whose
// content did not change is not written at all, not even rewritten alike.
func contentHash(t *testing.T, path string) string {
	t.Helper()
	db := openRO(t, path)
	queries := []string{
		`SELECT card_id, data, first_seen_at, updated_at, coalesce(removed_at,''), first_seen_run FROM cards ORDER BY card_id`,
		`SELECT card_id, version, valid_from, coalesce(valid_to,''), run_id, change, data FROM card_versions ORDER BY card_id, version`,
		`SELECT name, json_types, first_run FROM card_fields ORDER BY name`,
	}
	if isPostgres(path) {
		queries = []string{
			`SELECT account, card_id, xmin::text, data::text, first_seen_at::text, last_seen_at::text, last_seen_run, updated_at::text,
				coalesce(removed_at::text, ''), first_seen_run, encode(data_hash, 'hex') FROM card_state ORDER BY account, card_id`,
			`SELECT account, card_id, version, xmin::text, valid_from::text, coalesce(valid_to::text, ''), run_id, change, data::text
				FROM card_versions ORDER BY account, card_id, version`,
		}
	}
	var b strings.Builder
	for _, q := range queries {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%v\n", vals)
		}
		rows.Close()
	}
	return b.String()
}

// extraFetches counts card pages requested more than once.
func extraFetches(st sim.Stats) int64 {
	var n int64
	for _, c := range st.PageRequests {
		if c > 1 {
			n += c - 1
		}
	}
	return n
}
