package contract

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/money"
)

// moneyPage is page n of cards ids whose balance is balances[id] (a JSON
// value, raw) in currency USD or EUR.
func moneyPage(n, total int, ids []int, balances map[int]string) load.Page {
	p := load.Page{Stream: load.StreamCards, Number: n, TotalPages: 3, TotalItems: total}
	for _, id := range ids {
		cur := "USD"
		if id%3 == 0 {
			cur = "EUR"
		}
		p.Cards = append(p.Cards, load.Card{ID: strconv.Itoa(id),
			Data: fmt.Appendf(nil, `{"id":%d,"balance":%s,"currency":%q,"revision":%d,"is_locked":%t,"created_at":"2025-03-%02dT10:00:00Z","notes":null,"labels":["a"],"limit":{"daily":"1.00"}}`,
				id, balances[id], cur, id, id%2 == 0, id%28+1)})
	}
	return p
}

// truth is the exact sum of the balances that are decimals, rounded half
// to even at scale, and the ids in descending balance order (ties by
// id), from the JSON strings themselves.
func truth(t *testing.T, balances map[int]string, scale int) (sum int64, order []string) {
	t.Helper()
	type card struct {
		id    int
		minor int64
	}
	var cards []card
	for id, raw := range balances {
		s, err := strconv.Unquote(raw)
		if err != nil {
			s = raw
		}
		a, _, err := money.ParseRound(s, scale)
		if err != nil {
			continue
		}
		sum += a.Minor()
		cards = append(cards, card{id, a.Minor()})
	}
	slices.SortFunc(cards, func(a, b card) int {
		if a.minor != b.minor {
			return -cmpInt(a.minor, b.minor)
		}
		return cmpInt(int64(a.id), int64(b.id))
	})
	for _, c := range cards {
		order = append(order, strconv.Itoa(c.id))
	}
	return sum, order
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestTypedFields: both warehouses type the fields of the first batch
// holding values (decimal at the most decimals seen, integer, boolean,
// timestamp, array, object; null until a value comes), give a decimal
// field exact integer minor units in cards_flat at the cards' currency's
// scale (SUM and ORDER BY equal the truth computed from the JSON text),
// and keep the type when later values do not fit: "N/A" and 1e400 are
// counted in conflicts, read NULL in balance_minor, fail neither the
// commit nor a view built on cards_flat, through a CommitPage and through
// a WalkWriter's batches. "12.345" is rounded half to even to 12.34 and
// counted in rounded: the scale stays 2 and card 8's int64 extreme still
// fits.
func TestTypedFields(t *testing.T) {
	for _, b := range backends(t, 0, 4) {
		t.Run(b.name, func(t *testing.T) {
			balances := map[int]string{}
			for id := 1; id <= 30; id++ {
				balances[id] = fmt.Sprintf(`"%d.%02d"`, id*137-2000, id*7%100)
			}
			balances[7] = `"-0.07"`
			balances[8] = `"92233720368547758.07"` // the largest int64 in cents
			run := startRun(t, b.s)
			commit(t, b.s, run, moneyPage(1, 30, idRange(1, 10), balances))
			// Pages 2 and 3 through a writer: the first batch records the
			// fields, the next reads their types from the walk's state.
			ww := b.writer(run)
			for n, ids := range [][]int{idRange(11, 20), idRange(21, 30)} {
				if _, err := ww.Add(t.Context(), moneyPage(n+2, 30, ids, balances)); err != nil {
					t.Fatal(err)
				}
			}
			if err := ww.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			types := joined(b.query(t, `SELECT name || ':' || type || ':' || coalesce(scale, -1) || ':' || coalesce(minor_column, '') || ':' || conflicts
				FROM card_fields ORDER BY name`))
			want := "balance:decimal:2:balance_minor:0,created_at:timestamp:-1::0,currency:text:-1::0,id:integer:-1::0,is_locked:boolean:-1::0," +
				"labels:array:-1::0,limit:object:-1::0,notes:null:-1::0,revision:integer:-1::0"
			if types != want {
				t.Errorf("card_fields:\n%s\nwant\n%s", types, want)
			}
			check := func(when string, scale int) {
				t.Helper()
				sum, order := truth(t, balances, scale)
				// Card 8 holds the int64 extreme, which SQLite's SUM would
				// overflow.
				got := one(t, b.query(t, `SELECT CAST(sum(balance_minor) AS TEXT) FROM cards_flat WHERE card_id <> '8'`))
				card8, want8 := int64(92233720368547758_07), "9223372036854775807"
				if want := strconv.FormatInt(sum-card8, 10); got != want {
					t.Errorf("%s: SUM(balance_minor) = %s, want %s", when, got, want)
				}
				if got := joined(b.query(t, `SELECT card_id FROM cards_flat WHERE balance_minor IS NOT NULL ORDER BY balance_minor DESC, length(card_id), card_id`)); got != joined(order) {
					t.Errorf("%s: ORDER BY balance_minor DESC:\n%s\nwant\n%s", when, got, joined(order))
				}
				if got := one(t, b.query(t, `SELECT balance_minor FROM cards_flat WHERE card_id = '8'`)); got != want8 {
					t.Errorf("%s: card 8's balance_minor = %s", when, got)
				}
			}
			check("first walk", 2)
			b.query(t, `CREATE VIEW v AS SELECT card_id, balance_minor FROM cards_flat`)

			// Values that do not fit, a value with more decimals (rounded),
			// values that fit, the null field's first value and a new
			// field: none fails, the types and the scale stay.
			balances[3] = `"N/A"`
			balances[4] = `"12.345"`
			balances[5] = `1e400`
			balances[6] = `12.340`
			balances[9] = `"-5"`
			p := moneyPage(1, 30, idRange(1, 10), balances)
			p.Cards[1].Data = []byte(`{"id":2,"balance":"1.00","notes":"hello","late_amount":"3.5","revision":"x"}`)
			balances[2] = `"1.00"`
			if c := commit(t, b.s, run, p); c.Changed != 6 {
				t.Errorf("second commit: %+v, want 6 changed", c)
			}
			types = joined(b.query(t, `SELECT name || ':' || type || ':' || coalesce(scale, -1) || ':' || coalesce(minor_column, '') || ':' || conflicts || ':' || rounded
				FROM card_fields WHERE name IN ('balance', 'notes', 'late_amount', 'revision') ORDER BY name`))
			want = "balance:decimal:2:balance_minor:2:1,late_amount:decimal:2:late_amount_minor:0:0,notes:text:-1::0:0,revision:integer:-1::1:0"
			if types != want {
				t.Errorf("after conflicts, card_fields:\n%s\nwant\n%s", types, want)
			}
			check("after conflicts", 2)
			if got := joined(b.query(t, `SELECT card_id || '=' || coalesce(balance_minor, -1) FROM v WHERE card_id IN ('3', '4', '5', '6', '8', '9') ORDER BY card_id`)); got != "3=-1,4=1234,5=-1,6=1234,8=9223372036854775807,9=-500" {
				t.Errorf("the view on cards_flat reads %s", got)
			}
			if got := joined(b.query(t, `SELECT card_id || '=' || amounts_rounded FROM cards WHERE card_id IN ('3', '4', '6') ORDER BY card_id`)); got != "3=0,4=1,6=0" {
				t.Errorf("cards.amounts_rounded: %s, want 3=0,4=1,6=0", got)
			}
			if got := one(t, b.query(t, `SELECT late_amount_minor FROM cards_flat WHERE card_id = '2'`)); got != "350" {
				t.Errorf("late_amount_minor = %s, want 350", got)
			}
		})
	}
}

// TestTypedOddNames: decimal fields with names that need quoting or
// escaping (a quote, a backslash, a tab, an apostrophe, non-ASCII) get
// minor columns whose values read right in both warehouses, and a field
// named like a minor column never shares a column with one.
func TestTypedOddNames(t *testing.T) {
	for _, b := range backends(t, 0, 0) {
		t.Run(b.name, func(t *testing.T) {
			run := startRun(t, b.s)
			p := load.Page{Stream: load.StreamCards, Number: 1, TotalPages: 1, TotalItems: 2}
			p.Cards = []load.Card{
				{ID: "1", Data: []byte(`{"id":1,"a\"b":"1.25","c\\d":"-2.50","t\tz":"3.5","it's":"0.01","prix€":"9.99","amt_minor":"7","amt":"1.10"}`)},
				{ID: "2", Data: []byte(`{"id":2,"a\"b":"0.05","amt":"2"}`)},
			}
			commit(t, b.s, run, p)
			minor := b.query(t, `SELECT name || '=' || minor_column FROM card_fields WHERE minor_column IS NOT NULL ORDER BY minor_column`)
			// "amt" comes before "amt_minor" in the card's canonical order,
			// but every field takes its column before minor columns are
			// named: the API's field amt_minor keeps its name, amt's minor
			// column is amt_minor_2.
			want := `a"b=a"b_minor,amt=amt_minor_2,c\d=c\d_minor,it's=it's_minor,prix€=prix€_minor,t` + "\t" + `z=t_z_minor`
			if got := joined(minor); got != want {
				t.Errorf("minor columns:\n%s\nwant\n%s", got, want)
			}
			got := b.query(t, `SELECT card_id || ':' || coalesce(CAST("a""b_minor" AS TEXT), '-') || ':' || coalesce(CAST("c\d_minor" AS TEXT), '-') || ':' ||
				coalesce(CAST(t_z_minor AS TEXT), '-') || ':' || coalesce(CAST("it's_minor" AS TEXT), '-') || ':' || coalesce(CAST("prix€_minor" AS TEXT), '-') || ':' ||
				coalesce(CAST(amt_minor AS TEXT), '-') || ':' || coalesce(CAST(amt_minor_2 AS TEXT), '-') FROM cards_flat ORDER BY card_id`)
			if joined(got) != "1:125:-250:350:1:999:7:110,2:5:-:-:-:-:-:200" {
				t.Errorf("cards_flat reads %q", got)
			}
		})
	}
}
