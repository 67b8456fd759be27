package sim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// TestOddData: the odd items are spread through the list, counted in the
// pagination like any item, served byte for byte as their truth says, with
// the escapes and shapes their names promise.
func TestOddData(t *testing.T) {
	for _, cards := range []int{0, 40, 300} {
		t.Run(fmt.Sprintf("%d cards", cards), func(t *testing.T) {
			e := start(t, sim.Options{Seed: 3, Cards: cards, OddData: true})
			truth := e.sim.Cards()
			var odd []sim.Card
			for _, c := range truth {
				if c.Odd != "" {
					odd = append(odd, c)
				}
			}
			if len(odd) < 20 || len(truth) != cards+len(odd) {
				t.Fatalf("%d odd items among %d, want at least 20 more than %d cards", len(odd), len(truth), cards)
			}
			if cards >= 300 {
				// Spread: the first odd item comes after the first tenth of
				// the list, and the last one within its last tenth.
				firstOdd, lastOdd := -1, -1
				for i, c := range truth {
					if c.Odd != "" {
						if firstOdd < 0 {
							firstOdd = i
						}
						lastOdd = i
					}
				}
				if firstOdd < 5 || lastOdd < len(truth)*9/10 {
					t.Errorf("odd items at %d..%d of %d: not spread through the list", firstOdd, lastOdd, len(truth))
				}
			}
			served := servedItems(t, e, len(truth))
			if len(served) != len(truth) {
				t.Fatalf("served %d items, truth has %d", len(served), len(truth))
			}
			byName := map[string]string{}
			for i, c := range truth {
				if !bytes.Equal(served[i], c.JSON()) {
					t.Errorf("item %d (%s) served differently from its truth", i, c.Odd)
				}
				if c.Odd != "" {
					byName[c.Odd] = string(c.JSON())
				}
			}
			for name, want := range map[string]string{
				"string-id-unicode": `"id":"card 42 \u2713"`,
				"base64-id":         `"id":"YWJj+\/=="`,
				"null-id":           `"id":null`,
				"fraction-id":       `"id":12.5`,
				"control-char-id":   `"id":"ab\u0007c"`,
				"string-item":       `"oops"`,
				"number-item":       `42`,
				"odd-field-names":   `"a\u0000b":"nul"`,
				"card-numbers":      `"reference":4012888888881881`,
				"look-alikes":       `"iban":"DE89 3704 0044 0532 0130 00"`,
			} {
				if !strings.Contains(byName[name], want) {
					t.Errorf("%s: %q does not hold %s", name, byName[name], want)
				}
			}
			if d := depth(byName["nested-1100"]); d != 1101 {
				t.Errorf("nested-1100 has depth %d, want 1101", d)
			}
			if d := depth(byName["nested-300"]); d != 301 {
				t.Errorf("nested-300 has depth %d, want 301", d)
			}
			if !strings.Contains(byName["odd-field-names"], `"caf\u00e9"`) || !strings.Contains(byName["odd-field-names"], `https:\/\/`) {
				t.Errorf("odd-field-names lost its PHP escapes: %s", byName["odd-field-names"])
			}
		})
	}
}

// servedItems walks every page of e's cards and returns the items served,
// checking each page's total and count (total: the items the truth holds).
func servedItems(t *testing.T, e *env, total int) [][]byte {
	t.Helper()
	tok := e.token()
	var served [][]byte
	for page := 1; ; page++ {
		r := e.get(fmt.Sprintf("/cards?page=%d", page), tok)
		if r.status != 200 || !json.Valid(r.body) {
			t.Fatalf("page %d: status %d, valid JSON %v", page, r.status, json.Valid(r.body))
		}
		var p struct {
			Data []json.RawMessage
			Meta struct {
				Pagination struct {
					Total      int `json:"total"`
					Count      int `json:"count"`
					TotalPages int `json:"total_pages"`
				}
			}
		}
		dec := json.NewDecoder(bytes.NewReader(r.body))
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Meta.Pagination.Total != total || p.Meta.Pagination.Count != len(p.Data) {
			t.Errorf("page %d: total %d count %d, want %d and %d", page, p.Meta.Pagination.Total, p.Meta.Pagination.Count, total, len(p.Data))
		}
		for _, d := range p.Data {
			served = append(served, d)
		}
		if page >= p.Meta.Pagination.TotalPages {
			break
		}
	}
	return served
}

// depth counts the deepest nesting of brackets outside strings.
func depth(s string) int {
	d, m, in, esc := 0, 0, false, false
	for _, c := range s {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case in:
		case c == '{' || c == '[':
			d++
			m = max(m, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return m
}

// TestOddDataControl: odd items with an id can be updated and removed;
// those without one cannot be addressed.
func TestOddDataControl(t *testing.T) {
	s := sim.New(sim.Options{Seed: 1, Cards: 10, OddData: true})
	var withID, without sim.Card
	for _, c := range s.Cards() {
		if c.Odd == "uuid-id" {
			withID = c
		}
		if c.Odd == "null-id" {
			without = c
		}
	}
	if !s.UpdateCard(withID.ID) {
		t.Fatal("UpdateCard of an odd item with an id")
	}
	for _, c := range s.Cards() {
		if c.Odd == "uuid-id" && (bytes.Equal(c.JSON(), withID.JSON()) || !strings.Contains(string(c.JSON()), `"rev":2`)) {
			t.Errorf("update did not change the item: %s", c.JSON())
		}
	}
	if s.UpdateCard(without.ID) || s.RemoveCard(without.ID) {
		t.Error("an item without an id was addressed")
	}
	n := len(s.Cards())
	if !s.RemoveCard(withID.ID) || len(s.Cards()) != n-1 {
		t.Error("RemoveCard of an odd item with an id")
	}
}

// TestFloatNoiseAndAccountDrift: number amounts carry PHP float noise as
// text; with drift, every account read after the first moves balance and
// cards_balance, and the truth follows what was served.
func TestFloatNoiseAndAccountDrift(t *testing.T) {
	e := start(t, sim.Options{Seed: 9, FloatNoise: true, AccountDrift: true})
	tok := e.token()
	first := e.get("/account", tok)
	if !bytes.Contains(first.body, []byte(`"balance":1234.5600000000002`)) || !bytes.Contains(first.body, []byte(`"available_recharge_balance":0.30000000000000004`)) {
		t.Fatalf("no float noise: %s", first.body)
	}
	prev := first.body
	for read := 2; read <= 4; read++ {
		r := e.get("/account", tok)
		if bytes.Equal(r.body, prev) || !json.Valid(r.body) {
			t.Fatalf("read %d: account did not drift or is not JSON: %s", read, r.body)
		}
		a := e.sim.Account()
		var got struct {
			Data struct {
				Balance      json.Number `json:"balance"`
				CardsBalance string      `json:"cards_balance"`
			}
		}
		dec := json.NewDecoder(bytes.NewReader(r.body))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got.Data.Balance.String() != *a.Balance || got.Data.CardsBalance != *a.CardsBalance {
			t.Errorf("read %d: served %s / %s, truth %s / %s", read, got.Data.Balance, got.Data.CardsBalance, *a.Balance, *a.CardsBalance)
		}
		prev = r.body
	}
	steady := start(t, sim.Options{Seed: 9})
	tok = steady.token()
	if a, b := steady.get("/account", tok), steady.get("/account", tok); !bytes.Equal(a.body, b.body) {
		t.Error("the account drifts without AccountDrift")
	}
}
