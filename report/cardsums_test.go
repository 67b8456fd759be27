package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestRenderCardSums: the cards table says by which rule the balances
// were summed (the balance field's card_fields type): a decimal's sum at
// its scale, an integer's at scale 0, and for any other type no sum but
// that it is not summed; misfits and cards without a balance have columns
// of their own.
func TestRenderCardSums(t *testing.T) {
	tests := []struct {
		kind string
		sums []load.CardSum
		want []string
	}{
		{"decimal", []load.CardSum{{Currency: "HKD", Cards: 4, Summed: 2, Sum: "7.77", Scale: 2, Unparsed: 1, NoBalance: 1}},
			[]string{">7.77<", "cards.amount_scale", "card_fields.minor_column", "no balance", "Not an amount"}},
		{"integer", []load.CardSum{{Currency: "USD", Cards: 2, Summed: 2, Sum: "18446744073709551612"}},
			[]string{">18446744073709551612<", "integer", "at scale 0"}},
		{"text", []load.CardSum{{Currency: "USD", Cards: 2, Unparsed: 2}},
			[]string{">not summed<", "The balance field is text", "neither decimal nor integer"}},
		{"", []load.CardSum{{Currency: load.NoCurrency, Cards: 1, NoBalance: 1}},
			[]string{">not summed<", "No card has a balance yet"}},
	}
	for _, tt := range tests {
		d := extremeData(100, 200)
		d.CardSums, d.BalanceType = tt.sums, tt.kind
		var b bytes.Buffer
		if err := Render(&b, d); err != nil {
			t.Fatal(err)
		}
		page := strings.ReplaceAll(b.String(), "&#34;", `"`)
		for _, w := range tt.want {
			if !strings.Contains(page, w) {
				t.Errorf("%q balance: the page lacks %q", tt.kind, w)
			}
		}
	}
}
