package postgres

import (
	"reflect"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestReportCardSumsAsSQLite: the report's card sums follow the typed
// rule of cards_flat's balance_minor in both warehouses. A decimal balance
// is summed from card_state.minor at card_fields.scale, beyond int64 when
// added; the values stored later that do not fit it ("0.1E1", "n/a",
// true, minor units beyond int64) are not an amount; cards without a
// balance (absent, null) are counted apart. An integer balance sums its
// integers at scale 0.
func TestReportCardSumsAsSQLite(t *testing.T) {
	cases := []struct {
		name          string
		first, second []load.Card
		kind          string
		want          []load.CardSum
	}{{
		name: "decimal",
		first: []load.Card{
			reportCard("1", `,"currency":"USD","balance":"0.10"`),
			reportCard("2", `,"currency":"USD","balance":0.20`),
			reportCard("3", `,"currency":"EUR","balance":"90071992547409.93"`),
			reportCard("4", `,"currency":"EUR","balance":"92233720368547758.07"`),
			reportCard("5", `,"currency":"EUR","balance":"92233720368547758.07"`),
			reportCard("6", `,"balance":"10.00"`),
			reportCard("7", `,"currency":"USD"`),
			reportCard("8", `,"currency":"USD","balance":null`),
		},
		second: []load.Card{
			reportCard("9", `,"currency":"USD","balance":"0.1E1"`),
			reportCard("10", `,"currency":"USD","balance":"n/a"`),
			reportCard("11", `,"currency":"EUR","balance":true`),
			reportCard("12", `,"currency":"EUR","balance":"92233720368547758.08"`),
		},
		kind: "decimal",
		want: []load.CardSum{
			{Currency: "EUR", Cards: 5, Summed: 3, Sum: "184557512729642926.07", Scale: 2, Unparsed: 2},
			{Currency: "USD", Cards: 6, Summed: 2, Sum: "0.30", Scale: 2, Unparsed: 2, NoBalance: 2},
			{Currency: load.NoCurrency, Cards: 1, Summed: 1, Sum: "10.00", Scale: 2},
		},
	}, {
		name: "integer",
		first: []load.Card{
			reportCard("1", `,"currency":"USD","balance":5`),
			reportCard("2", `,"currency":"USD","balance":"-7"`),
			reportCard("3", `,"currency":"USD","balance":9223372036854775807`),
			reportCard("4", `,"currency":"USD","balance":9223372036854775807`),
			reportCard("5", `,"currency":"USD"`),
		},
		second: []load.Card{
			reportCard("6", `,"currency":"USD","balance":true`),
			reportCard("7", `,"currency":"USD","balance":"n/a"`),
		},
		kind: "integer",
		want: []load.CardSum{{Currency: "USD", Cards: 7, Summed: 4, Sum: "18446744073709551612", Unparsed: 2, NoBalance: 1}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bs := backends(t, 0.5, 0)
			if len(bs) < 2 {
				t.Skip("no PostgreSQL server")
			}
			for _, b := range bs {
				since := b.clk.Now().Add(-time.Hour)
				for _, cards := range [][]load.Card{c.first, append(append([]load.Card(nil), c.first...), c.second...)} {
					run := startRun(t, b.s)
					commit(t, b.s, run, reportPage(cards))
					if _, err := b.s.FinishWalk(t.Context(), run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
						t.Fatal(err)
					}
					b.clk.Advance(time.Minute)
				}
				d, err := b.s.(load.Reporter).ReportData(t.Context(), since, b.clk.Now())
				if err != nil {
					t.Fatalf("%s: %v", b.name, err)
				}
				if !reflect.DeepEqual(d.CardSums, c.want) || d.BalanceType != c.kind {
					t.Errorf("%s: card sums %+v of a %q balance, want %+v of a %s one", b.name, d.CardSums, d.BalanceType, c.want, c.kind)
				}
			}
		})
	}
}
