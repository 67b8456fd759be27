package cardfield

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/cardsync/cardsync/load"
)

// BalanceField is the card field the report sums per currency.
const BalanceField = "balance"

// Summable says whether the report sums a field of card_fields.type kind:
// decimal (its minor units) and integer (its integers, at scale 0).
func Summable(kind string) bool {
	return kind == KindDecimal.String() || kind == KindInteger.String()
}

// CardSumTally adds up card balances by currency, exactly (math/big on
// minor units; no floating point), by the balance field's type. Each
// warehouse feeds it, grouped, each current card's currency field (JSON
// text), balance field (JSON text) and balance minor units (the integer
// text card_state.minor holds for the balance, nil when none).
type CardSumTally struct {
	field      FieldType
	byCurrency map[string]*currencySum
	err        error
}

type currencySum struct {
	cards, summed, unparsed, noBalance int64
	sum                                big.Int
	// scale is sum's (-1: nothing summed yet).
	scale int
}

// NewCardSumTally returns an empty tally for a balance field of
// card_fields.type kind ("" when card_fields has no row for it) and
// card_fields.scale scale (the scale of a card that stores none).
func NewCardSumTally(kind string, scale int) *CardSumTally {
	t := FieldType{Kind: ParseKind(kind), Scale: scale}
	if t.Kind != KindDecimal {
		t.Scale = 0
	}
	return &CardSumTally{field: t, byCurrency: map[string]*currencySum{}}
}

// Add counts n cards whose currency and balance fields have the JSON text
// currency and balance (nil: the field is absent), whose balance minor
// units in card_state.minor are minor (nil: none) at card_state's
// amount_scale scale (nil: the field's).
func (t *CardSumTally) Add(currency, balance, minor *string, scale *int64, n int64) {
	name := currencyName(currency)
	c := t.byCurrency[name]
	if c == nil {
		c = &currencySum{scale: -1}
		t.byCurrency[name] = c
	}
	c.cards += n
	if balance == nil || *balance == "null" {
		c.noBalance += n
		return
	}
	units, ok := t.units(balance, minor)
	if !ok {
		c.unparsed += n
		return
	}
	c.summed += n
	units.Mul(units, big.NewInt(n))
	at := 0
	if t.field.Kind == KindDecimal {
		at = t.field.Scale
		if scale != nil {
			at = int(*scale)
		}
	}
	// Cards of one currency at several scales are summed at the largest,
	// exactly.
	switch {
	case c.scale < 0:
		c.scale = at
	case at > c.scale:
		c.sum.Mul(&c.sum, pow10(at-c.scale))
		c.scale = at
	case at < c.scale:
		units.Mul(units, pow10(c.scale-at))
	}
	c.sum.Add(&c.sum, units)
}

// pow10 is 10^n.
func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// units is one card's balance in minor units at the field's scale: a
// decimal field's from card_state.minor, an integer field's integer.
func (t *CardSumTally) units(balance, minor *string) (*big.Int, bool) {
	switch t.field.Kind {
	case KindDecimal:
		if minor == nil {
			return nil, false
		}
		v, ok := new(big.Int).SetString(*minor, 10)
		if !ok && t.err == nil {
			t.err = fmt.Errorf("card sums: minor units %q are not an integer", *minor)
		}
		return v, ok
	case KindInteger:
		v := ClassifyValue([]byte(*balance))
		if v.Kind != KindInteger {
			return nil, false
		}
		return new(big.Int).SetString(v.Number, 10)
	}
	return nil, false
}

// currencyName is the currency a card's currency field (JSON text, nil
// when absent) names.
func currencyName(raw *string) string {
	if raw == nil || *raw == "null" {
		return load.NoCurrency
	}
	var s string
	if json.Unmarshal([]byte(*raw), &s) != nil {
		return load.OddCurrency
	}
	return s
}

// Sums returns the tally by currency, bytewise, with the cards without a
// currency last.
func (t *CardSumTally) Sums() ([]load.CardSum, error) {
	if t.err != nil {
		return nil, t.err
	}
	summable := Summable(t.field.Kind.String())
	var out []load.CardSum
	for name, c := range t.byCurrency {
		s := load.CardSum{Currency: name, Cards: c.cards, Summed: c.summed, Unparsed: c.unparsed, NoBalance: c.noBalance}
		if summable {
			s.Scale = max(c.scale, 0)
			if c.scale < 0 && t.field.Kind == KindDecimal {
				s.Scale = t.field.Scale
			}
			s.Sum = bigDecimal(&c.sum, s.Scale)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b load.CardSum) int {
		if (a.Currency == load.NoCurrency) != (b.Currency == load.NoCurrency) {
			if a.Currency == load.NoCurrency {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Currency, b.Currency)
	})
	return out, nil
}

// bigDecimal is the decimal text of minor units at scale ("-0.07").
func bigDecimal(minor *big.Int, scale int) string {
	digits := new(big.Int).Abs(minor).String()
	sign := ""
	if minor.Sign() < 0 {
		sign = "-"
	}
	if scale == 0 {
		return sign + digits
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
}
