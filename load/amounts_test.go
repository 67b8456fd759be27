package load

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCardMoney: a card's scale comes from the ISO 4217 code of its
// currency field, found by the field's meaning (or the configured field),
// else the rules' scale; an unknown code is reported.
func TestCardMoney(t *testing.T) {
	def := AmountRules{Scale: 2}
	for _, c := range []struct {
		rules AmountRules
		data  string
		want  CardMoney
	}{
		{def, `{"balance":"1.00","currency":"USD"}`, CardMoney{Scale: 2, Currency: "USD"}},
		{def, `{"currency":"JPY"}`, CardMoney{Scale: 0, Currency: "JPY"}},
		{def, `{"currency":"kwd"}`, CardMoney{Scale: 3, Currency: "KWD"}},
		{def, `{"currency_code":"CLF"}`, CardMoney{Scale: 4, Currency: "CLF"}},
		{def, `{"CurrencyISO":"JPY"}`, CardMoney{Scale: 0, Currency: "JPY"}},
		{def, `{"ccy":"BHD"}`, CardMoney{Scale: 3, Currency: "BHD"}},
		{def, `{"Currency-Code":"EUR"}`, CardMoney{Scale: 2, Currency: "EUR"}},
		// The card's own currency before another that holds the word.
		{def, `{"billing_currency":"JPY","currency":"KWD"}`, CardMoney{Scale: 3, Currency: "KWD"}},
		{def, `{"billing_currency":"JPY"}`, CardMoney{Scale: 0, Currency: "JPY"}},
		// A field named like a currency that holds no code is passed over.
		{def, `{"currency_symbol":"$","currency":"JPY"}`, CardMoney{Scale: 0, Currency: "JPY"}},
		{def, `{"currency":"US Dollar"}`, CardMoney{Scale: 2}},
		{def, `{"currency":null,"balance":"1.5"}`, CardMoney{Scale: 2}},
		{def, `{"currency":840}`, CardMoney{Scale: 2}},
		{def, `{"balance":"1.5"}`, CardMoney{Scale: 2}},
		{def, `{"recurrency":"JPY"}`, CardMoney{Scale: 0, Currency: "JPY"}}, // holds the word
		{def, `{"cursor":"JPY"}`, CardMoney{Scale: 2}},
		// Codes ISO 4217 does not know, or gives no minor unit: the default.
		{def, `{"currency":"XYZ"}`, CardMoney{Scale: 2, Unknown: "XYZ"}},
		{def, `{"currency":"XAU"}`, CardMoney{Scale: 2, Unknown: "XAU"}},
		{AmountRules{Scale: 3}, `{"currency":"XYZ"}`, CardMoney{Scale: 3, Unknown: "XYZ"}},
		{AmountRules{Scale: 0}, `{"balance":"1.5"}`, CardMoney{Scale: 0}},
		// The configured field, and no other.
		{AmountRules{Scale: 2, CurrencyField: "money_unit"}, `{"currency":"KWD","money_unit":"JPY"}`, CardMoney{Scale: 0, Currency: "JPY"}},
		{AmountRules{Scale: 2, CurrencyField: "money_unit"}, `{"currency":"KWD"}`, CardMoney{Scale: 2}},
		// jsonb's text reads alike.
		{def, `{"balance": "1.5", "currency": "JPY"}`, CardMoney{Scale: 0, Currency: "JPY"}},
	} {
		if got := c.rules.Of([]byte(c.data)); got != c.want {
			t.Errorf("%+v %s: %+v, want %+v", c.rules, c.data, got, c.want)
		}
	}
}

// halfEven is the oracle: the decimal text s (a JSON number or a plain
// decimal) times 10^scale, rounded half to even, by math/big's exact
// rationals; ok is false when it is beyond int64 or not a number.
func halfEven(s string, scale int) (minor int64, rounded, ok bool) {
	x, good := new(big.Rat).SetString(s)
	if !good {
		return 0, false, false
	}
	x.Mul(x, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if m.Sign() != 0 {
		rounded = true
		twice := new(big.Int).Abs(new(big.Int).Lsh(m, 1))
		if c := twice.Cmp(x.Denom()); c > 0 || c == 0 && q.Bit(0) == 1 {
			q.Add(q, big.NewInt(int64(x.Sign())))
		}
	}
	if !q.IsInt64() {
		return 0, false, false
	}
	return q.Int64(), rounded, true
}

// genDecimal is a random amount's JSON text: a string or a number, up to
// 14 whole digits and 25 decimals (float noise such as
// 0.30000000000000004 among them), some numbers with an exponent.
func genDecimal(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(4) == 0 {
		b.WriteByte('-')
	}
	whole := r.IntN(15)
	if whole == 0 {
		b.WriteByte('0')
	} else {
		b.WriteByte(byte('1' + r.IntN(9)))
		for range whole - 1 {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if frac := r.IntN(26); frac > 0 {
		b.WriteByte('.')
		for i := range frac {
			d := r.IntN(10)
			if r.IntN(3) == 0 && i > 1 { // runs of zeros and a last digit: float noise
				d = 0
			}
			b.WriteByte(byte('0' + d))
		}
	}
	s := b.String()
	switch r.IntN(3) {
	case 0:
		return `"` + s + `"`
	case 1:
		if e := r.IntN(9) - 4; e != 0 {
			return fmt.Sprintf("%se%d", s, e)
		}
	}
	return s
}

// TestCardMinorProperty: for generated decimal texts and currencies, a
// decimal field's minor units are the exact half-to-even rounding of the
// text at the card's currency's scale (rounded marked when it changed
// the value), NULL and a conflict when that is beyond int64; the same
// whatever else the page holds.
func TestCardMinorProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 1))
	currencies := []struct {
		json  string
		scale int
	}{{`"USD"`, 2}, {`"JPY"`, 0}, {`"KWD"`, 3}, {`"CLF"`, 4}, {`"XYZ"`, 5}, {`null`, 5}}
	rules := AmountRules{Scale: 5}
	types := map[string]FieldType{"balance": {Kind: KindDecimal, Scale: 5}}
	for range 5000 {
		raw := genDecimal(r)
		cur := currencies[r.IntN(len(currencies))]
		data := fmt.Sprintf(`{"balance":%s,"currency":%s}`, raw, cur.json)
		m := rules.Of([]byte(data))
		if m.Scale != cur.scale {
			t.Fatalf("%s: scale %d, want %d", data, m.Scale, cur.scale)
		}
		conflicts, rounded := map[string]int{}, map[string]int{}
		got, anyRounded := MinorJSON(DataValues([]byte(data)), types, m.Scale, conflicts, rounded)
		want, wantRounded, ok := halfEven(strings.Trim(raw, `"`), m.Scale)
		switch {
		case !ok && (got != "" || conflicts["balance"] != 1):
			t.Fatalf("%s: minor %q, conflicts %v; want NULL and a conflict", data, got, conflicts)
		case ok && (got != fmt.Sprintf(`{"balance":%d}`, want) || anyRounded != wantRounded || (rounded["balance"] == 1) != wantRounded):
			t.Fatalf("%s at scale %d: minor %q rounded %v; want %d rounded %v", data, m.Scale, got, anyRounded, want, wantRounded)
		}
	}
}

// TestCardSumTallyScales: the report sums each card's minor units at its
// own scale (card_state.amount_scale); the cards of one currency held at
// several scales (accounts configured apart) are summed exactly at the
// largest, and a card without a stored scale takes the field's.
func TestCardSumTallyScales(t *testing.T) {
	s := func(v string) *string { return &v }
	at := func(n int64) *int64 { return &n }
	tally := NewCardSumTally("decimal", 2)
	tally.Add(s(`"JPY"`), s(`"1500"`), s("1500"), at(0), 2)
	tally.Add(nil, s(`"1.5"`), s("150"), at(2), 1)
	tally.Add(nil, s(`"1.25"`), s("1250"), at(3), 1)
	tally.Add(nil, s(`"0.01"`), s("1"), nil, 1)
	got, err := tally.Sums()
	if err != nil {
		t.Fatal(err)
	}
	want := []CardSum{
		{Currency: "JPY", Cards: 2, Summed: 2, Sum: "3000", Scale: 0},
		{Currency: NoCurrency, Cards: 3, Summed: 3, Sum: "2.760", Scale: 3},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sums:\n%+v\nwant\n%+v", got, want)
	}
}
