package cardfield

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
)

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
	rules := load.AmountRules{Scale: 5}
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
	want := []load.CardSum{
		{Currency: "JPY", Cards: 2, Summed: 2, Sum: "3000", Scale: 0},
		{Currency: load.NoCurrency, Cards: 3, Summed: 3, Sum: "2.760", Scale: 3},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sums:\n%+v\nwant\n%+v", got, want)
	}
}

// TestCardSumsExact: a decimal balance field is summed per currency from
// its minor units (card_state.minor), exactly at the field's scale where
// float64 is wrong (0.1 + 0.2; cents beyond 2^53 and beyond int64 when
// added); a balance without minor units (12.345, 0.1E1, "n/a": a misfit,
// NULL in balance_minor) is "not an amount", and a card without one is
// counted apart: none is dropped.
func TestCardSumsExact(t *testing.T) {
	tally := NewCardSumTally("decimal", 2)
	s := func(v string) *string { return &v }
	tally.Add(s(`"USD"`), s(`"0.10"`), s("10"), nil, 1)
	tally.Add(s(`"USD"`), s(`0.2`), s("20"), nil, 1)
	tally.Add(s(`"USD"`), s(`"12.345"`), nil, nil, 1)
	tally.Add(s(`"USD"`), s(`"0.1E1"`), nil, nil, 1)
	tally.Add(s(`"EUR"`), s(`"90071992547409.93"`), s("9007199254740993"), nil, 1)
	tally.Add(s(`"EUR"`), s(`"92233720368547758.07"`), s("9223372036854775807"), nil, 2)
	tally.Add(s(`"EUR"`), s(`"0.01"`), s("1"), nil, 2)
	tally.Add(s(`"EUR"`), s(`"abc"`), nil, nil, 1)
	tally.Add(s(`"EUR"`), s(`true`), nil, nil, 1)
	tally.Add(s(`"EUR"`), s(`null`), nil, nil, 1)
	tally.Add(s(`"EUR"`), nil, nil, nil, 1)
	tally.Add(nil, s(`"-5.5"`), s("-550"), nil, 1)
	tally.Add(s(`null`), s(`"1.25"`), s("125"), nil, 1)
	tally.Add(s(`7`), s(`"1"`), s("100"), nil, 1)
	got, err := tally.Sums()
	if err != nil {
		t.Fatal(err)
	}
	want := []load.CardSum{
		{Currency: load.OddCurrency, Cards: 1, Summed: 1, Sum: "1.00", Scale: 2},
		{Currency: "EUR", Cards: 9, Summed: 5, Sum: "184557512729642926.09", Scale: 2, Unparsed: 2, NoBalance: 2},
		{Currency: "USD", Cards: 4, Summed: 2, Sum: "0.30", Scale: 2, Unparsed: 2},
		{Currency: load.NoCurrency, Cards: 2, Summed: 2, Sum: "-4.25", Scale: 2},
	}
	checkSums(t, got, want)

	bad := NewCardSumTally("decimal", 2)
	bad.Add(s(`"USD"`), s(`"1.00"`), s("1.5"), nil, 1)
	if _, err := bad.Sums(); err == nil {
		t.Error("minor units 1.5 summed")
	}
}

// TestCardSumsByType: an integer balance field sums its integers exactly
// at scale 0 (a decimal or text value is not an amount); a text (or
// boolean, object...) field and a field card_fields does not know are
// not summed: their values are counted, Sum is "".
func TestCardSumsByType(t *testing.T) {
	s := func(v string) *string { return &v }
	add := func(tally *CardSumTally) {
		tally.Add(s(`"USD"`), s(`9223372036854775807`), nil, nil, 2)
		tally.Add(s(`"USD"`), s(`"-7"`), nil, nil, 1)
		tally.Add(s(`"USD"`), s(`"1.50"`), nil, nil, 1)
		tally.Add(s(`"USD"`), s(`"n/a"`), nil, nil, 1)
		tally.Add(s(`"USD"`), nil, nil, nil, 1)
	}
	integer := NewCardSumTally("integer", 0)
	add(integer)
	got, err := integer.Sums()
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, got, []load.CardSum{{Currency: "USD", Cards: 6, Summed: 3, Sum: "18446744073709551607", Unparsed: 2, NoBalance: 1}})
	if !Summable("integer") || !Summable("decimal") || Summable("text") || Summable("") {
		t.Error("Summable: only decimal and integer")
	}
	for _, kind := range []string{"text", "boolean", "null", ""} {
		tally := NewCardSumTally(kind, 2)
		add(tally)
		got, err := tally.Sums()
		if err != nil {
			t.Fatal(err)
		}
		checkSums(t, got, []load.CardSum{{Currency: "USD", Cards: 6, Unparsed: 5, NoBalance: 1}})
	}
}

func checkSums(t *testing.T, got, want []load.CardSum) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("sums %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sum %d: %+v, want %+v", i, got[i], want[i])
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
