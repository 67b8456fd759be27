package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// jsonbCases are documents at and beyond the edges of what jsonb holds.
func jsonbCases() []string {
	digits := func(n int) string { return strings.Repeat("7", n) }
	zeros := func(n int) string { return strings.Repeat("0", n) }
	return []string{
		`{"a":"\ud800"}`, `{"\ud800":1}`, `{"a":"\udc00"}`, `{"a":"\ud83d\ude00"}`, `{"a":"\ud800\ud800"}`,
		`{"a":"\ud800x"}`, `{"a":"\ud800\n"}`, `{"a":"x\udbff\udfff"}`, `{"a":{"b":[1,{"c":"\udfff"}]}}`,
		`{"a":"\u0000"}`, `{"a":"\\u0000"}`, `{"a":"\u0001\u00e9"}`, `{"a":"\\ud800"}`,
		`{"a":1e131071}`, `{"a":1e131072}`, `{"a":9.9e131071}`, `{"a":0.1e131072}`, `{"a":0.1e131073}`,
		`{"a":1e-16383}`, `{"a":1e-16384}`, `{"a":0e-16383}`, `{"a":0e-16384}`, `{"a":0e1000000}`,
		`{"a":0e1073741822}`, `{"a":0e1073741823}`, `{"a":1e1000000}`, `{"a":-1e1000000}`, `{"a":1E+5}`,
		`{"a":1.5e-16382}`, `{"a":1.5e-16383}`, `{"a":100e131069}`, `{"a":100e131070}`, `{"a":-0}`,
		`{"a":1e99999999999999999999}`, `{"a":1e-99999999999999999999}`, `{"a":0.000e131075}`,
		`{"a":[1` + zeros(131071) + `]}`, `{"a":[1` + zeros(131072) + `]}`, `{"a":` + digits(131072) + `}`,
		`{"a":1.` + zeros(16383) + `}`, `{"a":1.` + zeros(16384) + `}`, `{"a":0.` + zeros(16384) + `}`,
		`{"a":true,"b":false,"c":null,"d":-12.5e-3,"e":"x\"\\\/\b\f\n\r\t"}`,
	}
}

// TestJSONBUnstorableAgreesWithPostgres: jsonbUnstorable refuses exactly
// the documents a real PostgreSQL refuses as jsonb.
func TestJSONBUnstorableAgreesWithPostgres(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	for _, doc := range jsonbCases() {
		var n int
		err := w.pool.QueryRow(context.Background(), `SELECT length($1::text::jsonb::text)`, doc).Scan(&n)
		why := jsonbUnstorable([]byte(doc))
		if (err != nil) != (why != "") {
			t.Errorf("%s: jsonbUnstorable %q; PostgreSQL: %v", shortNumber([]byte(doc)), why, err)
		}
	}
}

// TestPoisonCardQuarantined: cards jsonb cannot hold (lone surrogates in
// a key or a value at any depth, numbers beyond numeric, \u0000) are
// quarantined one by one with a reason; the rest of their page and the
// later pages are stored, and rejected_cards keeps each raw text.
func TestPoisonCardQuarantined(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	poison := map[string]string{
		"2": `{"id":2,"name":"\ud800"}`,
		"4": `{"id":4,"\udc00key":1}`,
		"6": `{"id":6,"deep":{"a":[{"b":"x\ud83d"}]}}`,
		"8": `{"id":8,"balance":1e1000000}`,
		"9": `{"id":9,"memo":"a\u0000b"}`,
	}
	run := startRun(t, w)
	p := page(1, nil, 1, 20)
	for id := 1; id <= 10; id++ {
		data := cardJSON(id, 1)
		if s, ok := poison[fmt.Sprint(id)]; ok {
			data = []byte(s)
		}
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(id), Data: data})
	}
	if got := commit(t, w, run, p); got.New != 5 || got.Rejected != 5 {
		t.Fatalf("page 1: %+v, want 5 new, 5 rejected", got)
	}
	if got := commit(t, w, run, page(2, idRange(11, 20), 1, 20)); got.New != 10 {
		t.Fatalf("page 2: %+v, want 10 new", got)
	}
	if got := one(t, pgQuery(t, w, `SELECT string_agg(card_id, ',' ORDER BY card_id::int) FROM card_state`)); got != "1,3,5,7,10,11,12,13,14,15,16,17,18,19,20" {
		t.Errorf("stored cards %s", got)
	}
	rows := pgQuery(t, w, `SELECT card_id || ' ' || reason || ' | ' || data FROM rejected_cards ORDER BY card_id`)
	if len(rows) != 5 {
		t.Fatalf("rejected_cards: %q, want 5 rows", rows)
	}
	// rejected_cards.data is text: the raw card (redacted, canonical), its
	// poison kept as sent.
	for id, raw := range map[string]string{"2": `"name":"\ud800"`, "4": `"\udc00key":1`, "6": `"x\ud83d"`, "8": `"balance":1e1000000`, "9": `"a\u0000b"`} {
		if got := one(t, pgQuery(t, w, `SELECT data FROM rejected_cards WHERE card_id = $1`, id)); !strings.Contains(got, raw) {
			t.Errorf("card %s: rejected_cards.data %s, want it to hold %s", id, got, raw)
		}
	}
	for id, want := range map[string]string{"2": "surrogate", "4": "surrogate", "6": "surrogate", "8": "digits before the decimal point", "9": `\u0000`} {
		if got := one(t, pgQuery(t, w, `SELECT reason FROM rejected_cards WHERE card_id = $1`, id)); !strings.Contains(got, want) || !strings.Contains(got, "PostgreSQL") {
			t.Errorf("card %s: reason %q, want it to say %q", id, got, want)
		}
	}
}

// TestEscapedBackslashBeforeU0000Stored: "\\u0000" (a backslash, then the
// text u0000) is no NUL: jsonb holds it, and the card is stored.
func TestEscapedBackslashBeforeU0000Stored(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	if got := commit(t, w, startRun(t, w), cardsPage("1", `{"id":1,"path":"C:\\u0000"}`)); got.New != 1 || got.Rejected != 0 {
		t.Errorf("commit: %+v, want the card stored", got)
	}
}

// BenchmarkJSONBUnstorable is the check's cost on load's test card
// (~600 bytes).
func BenchmarkJSONBUnstorable(b *testing.B) {
	card := cardJSON(1234, 5)
	b.SetBytes(int64(len(card)))
	for b.Loop() {
		if jsonbUnstorable(card) != "" {
			b.Fatal("refused")
		}
	}
}
