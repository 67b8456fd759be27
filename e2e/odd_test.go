//go:build e2e

package e2e

import (
	"database/sql"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/sim"
)

// oddStored and oddRejected say where each of the simulator's odd items
// must end up: stored as a card (by its id) or set aside in rejected_cards
// (with the card id when one could be read).
var (
	oddStored   = []string{"string-id-unicode", "base64-id", "uuid-id", "long-id", "big-integer-id", "negative-id", "odd-field-names", "nested-300", "card-numbers", "look-alikes"}
	oddRejected = map[string]string{"overlong-id": "", "control-char-id": "", "null-id": "", "missing-id": "", "fraction-id": "", "boolean-id": "",
		"object-id": "", "empty-id": "", "string-item": "", "number-item": "", "nested-1100": "nested-1100"}
)

// TestOddDataEndToEnd: the simulator mixes odd items into its cards, sends
// float noise in the account and a links.next on a foreign origin. The
// binary's runs succeed; every ordinary card equals the simulator's truth;
// each odd item is stored or quarantined as it should be; the account is
// rounded and marked; the foreign origin is never contacted; and removals
// still happen while the odd items stay upstream.
func TestOddDataEndToEnd(t *testing.T) { testOddData(t, toSQLite) }

// oddOutcome says where each odd item must end up in a warehouse at where:
// oddStored and oddRejected, except that PostgreSQL's jsonb cannot hold
// the "a\u0000b" key of odd-field-names, so that card is set aside there
// (with its id).
func oddOutcome(where string) (stored []string, rejected map[string]string) {
	if !isPostgres(where) {
		return oddStored, oddRejected
	}
	rejected = maps.Clone(oddRejected)
	rejected["odd-field-names"] = "odd-keys"
	for _, name := range oddStored {
		if name != "odd-field-names" {
			stored = append(stored, name)
		}
	}
	return stored, rejected
}

func testOddData(t *testing.T, dest destination) {
	foreign := newForeignOrigin(t)
	up := newUpstream(t, sim.Options{Seed: 11, Cards: 300, OddData: true, FloatNoise: true,
		Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultForeignNext, URL: foreign.URL, Pages: []int{2, 5, 9}}}})
	d := newDeploymentTo(t, up, dest)
	_, oddRejected := oddOutcome(d.db)
	backfill := func() string {
		t.Helper()
		code, stdout, stderr := d.run("backfill")
		if code != 0 {
			t.Fatalf("backfill exited %d\n%s\n%s", code, stdout, stderr)
		}
		return stderr
	}
	stderr := backfill()
	db := openRO(t, d.db)
	run := lastRun(t, d.db)
	if run.Status != "succeeded" || run.WalkConsistent.Int64 != 1 {
		t.Fatalf("run %+v: want succeeded and consistent", run)
	}
	if got := queryInt(t, db, `SELECT cards_rejected FROM sync_runs WHERE run_id = $1`, run.ID); got != int64(len(oddRejected)) {
		t.Errorf("cards_rejected = %d, want %d", got, len(oddRejected))
	}
	if n := strings.Count(stderr, "card set aside in rejected_cards"); n != len(oddRejected) {
		t.Errorf("%d warn lines for rejected cards, want %d", n, len(oddRejected))
	}
	if n := strings.Count(stderr, "links.next names another origin"); n != 1 {
		t.Errorf("%d warnings for the foreign links.next, want 1 per walk", n)
	}
	if n, a := foreign.requests.Load(), foreign.auth.Load(); n != 0 || a != 0 {
		t.Errorf("the foreign origin got %d requests (%d with a token)", n, a)
	}
	checkOddOutcome(t, up, d.db)

	var balance, recharge, rounded int64
	var raw string
	if err := db.QueryRow(`SELECT balance_minor, available_recharge_balance_minor, amounts_rounded, raw FROM account_snapshots ORDER BY snapshot_id DESC LIMIT 1`).
		Scan(&balance, &recharge, &rounded, &raw); err != nil {
		t.Fatal(err)
	}
	if balance != 123456 || recharge != 30 || rounded != 1 || !strings.Contains(raw, "1234.5600000000002") {
		t.Errorf("account: balance %d recharge %d rounded %d raw %s; want 123456, 30, 1, exact text kept", balance, recharge, rounded, raw)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM sync_runs WHERE account_error IS NOT NULL`); got != 0 {
		t.Errorf("%d runs with an account error", got)
	}

	// Removals go on while the odd items stay upstream: two ordinary cards
	// removed are marked removed after two walks, no odd item is.
	var gone []string
	for _, c := range up.Cards() {
		if c.Odd == "" && len(gone) < 2 {
			gone = append(gone, c.ID)
		}
	}
	for _, id := range gone {
		up.RemoveCard(id)
	}
	backfill()
	backfill()
	removed := removedCards(t, d.db)
	if !reflect.DeepEqual(sortedCopy(removed), sortedCopy(gone)) {
		t.Errorf("removed %v, want %v", removed, gone)
	}
	checkOddOutcome(t, up, d.db)
	if got := queryInt(t, openRO(t, d.db), `SELECT count(*) FROM rejected_cards`); got != int64(len(oddRejected)) {
		t.Errorf("rejected_cards has %d rows after three runs, want %d (repeats update their row)", got, len(oddRejected))
	}
	code, stdout, _ := d.run("status")
	if code != 0 || !strings.Contains(stdout, "rejected") {
		t.Errorf("status (exit %d) does not show the rejections:\n%s", code, stdout)
	}
}

// checkOddOutcome compares the warehouse with the simulator: ordinary cards
// current and equal, odd items stored or quarantined as they should be.
func checkOddOutcome(t *testing.T, up *upstream, where string) {
	t.Helper()
	db := openRO(t, where)
	oddStored, oddRejected := oddOutcome(where)
	current := map[string]string{}
	rows, err := db.Query(`SELECT card_id, data FROM cards WHERE removed_at IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, data string
		rows.Scan(&id, &data)
		current[id] = data
	}
	rows.Close()
	byOdd := map[string]sim.Card{}
	ordinary := 0
	for _, c := range up.Cards() {
		if c.Odd != "" {
			byOdd[c.Odd] = c
			continue
		}
		ordinary++
		data, ok := current[c.ID]
		if !ok {
			t.Errorf("card %s lost", c.ID)
			continue
		}
		if !reflect.DeepEqual(canonicalJSON(t, []byte(data)), canonicalJSON(t, c.JSON())) {
			t.Errorf("card %s differs:\n got %s\nwant %s", c.ID, data, c.JSON())
		}
	}
	if want := ordinary + len(oddStored); len(current) != want {
		t.Errorf("%d current cards, want %d ordinary + %d odd stored", len(current), ordinary, len(oddStored))
	}
	for _, name := range oddStored {
		c := byOdd[name]
		if _, ok := current[c.ID]; !ok {
			t.Errorf("odd item %s (id %q) not stored", name, c.ID)
		}
	}
	for name, id := range oddRejected {
		var n int64
		if id == "" {
			// Identify it by what it holds: these items hold no card data,
			// so they are stored in canonical form (members sorted).
			stored, _, err := redact.NewPolicy(nil).JSON(byOdd[name].JSON())
			if err != nil {
				t.Fatal(err)
			}
			n = queryInt(t, db, `SELECT count(*) FROM rejected_cards WHERE card_id IS NULL AND data = $1`, string(stored))
		} else {
			n = queryInt(t, db, `SELECT count(*) FROM rejected_cards WHERE card_id = $1`, id)
		}
		if n != 1 {
			t.Errorf("odd item %s: %d rows in rejected_cards, want 1", name, n)
		}
	}
	checkOddFields(t, db, where)
}

// checkOddFields checks odd fields as stored (in cards_flat, or in the
// jsonb on PostgreSQL) and the pan-forms card: its card numbers and codes
// gone, its flags kept.
func checkOddFields(t *testing.T, db *sql.DB, where string) {
	t.Helper()
	fields := map[string]string{
		`SELECT data FROM cards WHERE card_id = 'pan-forms'`:                            "", // checked below
		`SELECT "a_b" FROM cards_flat WHERE card_id = 'odd-keys'`:                       "nul",
		`SELECT "Status_2" FROM cards_flat WHERE card_id = 'odd-keys'`:                  "ACTIVE",
		`SELECT "status" FROM cards_flat WHERE card_id = 'odd-keys'`:                    "active",
		`SELECT "café" FROM cards_flat WHERE card_id = 'odd-keys'`:                      "crème",
		`SELECT json_extract(data, '$.url') FROM cards WHERE card_id = 'odd-keys'`:      "https://example.com/cards/odd-keys",
		`SELECT json_extract(data, '$.iban') FROM cards WHERE card_id = 'look-alikes'`:  "DE89 3704 0044 0532 0130 00",
		`SELECT json_extract(data, '$.phone') FROM cards WHERE card_id = 'look-alikes'`: "+86 138 0013 8000",
	}
	if isPostgres(where) {
		// No cards_flat (query the jsonb), and odd-keys is set aside.
		fields = map[string]string{
			`SELECT data FROM cards WHERE card_id = 'pan-forms'`:             "",
			`SELECT data->>'iban' FROM cards WHERE card_id = 'look-alikes'`:  "DE89 3704 0044 0532 0130 00",
			`SELECT data->>'phone' FROM cards WHERE card_id = 'look-alikes'`: "+86 138 0013 8000",
		}
	}
	for q, want := range fields {
		var got sql.NullString
		if err := db.QueryRow(q).Scan(&got); err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if want != "" && got.String != want {
			t.Errorf("%s = %q, want %q", q, got.String, want)
		}
	}
	var stored []byte
	if err := db.QueryRow(`SELECT data FROM cards WHERE card_id = 'pan-forms'`).Scan(&stored); err != nil {
		t.Fatalf("pan-forms: %v", err)
	}
	// Compact, whatever the destination's own spelling (jsonb adds spaces).
	compact, err := json.Marshal(canonicalJSON(t, stored))
	if err != nil {
		t.Fatal(err)
	}
	pans := string(compact)
	for _, bad := range []string{"4111\u00a01111\u00a01111\u00a01111", "5500/0000/0000/0004", "4012888888881881", "378282246310005", "5500 0000 0000 0004", `"cardCVV"`, `"pinCode"`, `"security_code"`} {
		if strings.Contains(pans, bad) {
			t.Errorf("pan-forms stored %q: %s", bad, pans)
		}
	}
	for _, keep := range []string{`"pin_verified":true`, `"has_pin":true`, `"cvc_status":"pass"`, `"spin_count":3`, `"pinned":false`} {
		if !strings.Contains(pans, keep) {
			t.Errorf("pan-forms lost %s: %s", keep, pans)
		}
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
