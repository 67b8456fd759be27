package load

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/cardsync/cardsync/money"
)

// Currency names CardSum gives cards whose currency field is not text.
const (
	// NoCurrency is the currency of cards without one (absent or null).
	NoCurrency = "(none)"
	// OddCurrency is the currency of cards whose currency is not a string.
	OddCurrency = "(not text)"
)

// CardSum is the current cards of one currency (the card's currency
// field) and the exact sum of their balance field.
type CardSum struct {
	Currency string
	// Cards counts the current cards of the currency.
	Cards int64
	// Summed counts the cards whose balance is a decimal (a JSON string or
	// number); Sum is their exact sum as decimal text at Scale, the most
	// decimals any of them has.
	Summed int64
	Sum    string
	Scale  int
	// Unparsed counts the cards whose balance is absent, null or not a
	// decimal: they are in Cards, not in Sum.
	Unparsed int64
}

// CardSumTally adds up card balances by currency, exactly (math/big on
// minor units; no floating point). Each warehouse feeds it the JSON text
// of each current card's currency and balance fields, grouped.
type CardSumTally struct {
	byCurrency map[string]*currencyValues
}

type currencyValues struct {
	cards, unparsed int64
	// values are the balances that parse, with their count and scale.
	values []balanceValue
}

type balanceValue struct {
	text  string
	n     int64
	scale int
}

// NewCardSumTally returns an empty tally.
func NewCardSumTally() *CardSumTally {
	return &CardSumTally{byCurrency: map[string]*currencyValues{}}
}

// Add counts n cards whose currency and balance fields have the JSON text
// currency and balance (nil: the field is absent).
func (t *CardSumTally) Add(currency, balance *string, n int64) {
	name := currencyName(currency)
	c := t.byCurrency[name]
	if c == nil {
		c = &currencyValues{}
		t.byCurrency[name] = c
	}
	c.cards += n
	text, scale, ok := decimalOf(balance)
	if !ok {
		c.unparsed += n
		return
	}
	c.values = append(c.values, balanceValue{text: text, n: n, scale: scale})
}

// currencyName is the currency a card's currency field (JSON text, nil
// when absent) names.
func currencyName(raw *string) string {
	if raw == nil || *raw == "null" {
		return NoCurrency
	}
	var s string
	if json.Unmarshal([]byte(*raw), &s) != nil {
		return OddCurrency
	}
	return s
}

// decimalOf reads a balance field's JSON text: a string of decimal text or
// a number, with the fewest decimals that hold it exactly.
func decimalOf(raw *string) (text string, scale int, ok bool) {
	if raw == nil || *raw == "" {
		return "", 0, false
	}
	text = *raw
	if text[0] == '"' {
		if json.Unmarshal([]byte(*raw), &text) != nil {
			return "", 0, false
		}
	} else if !json.Valid([]byte(text)) || strings.ContainsAny(text[:1], "tfn[{") {
		return "", 0, false
	}
	scale = writtenScale(text)
	if _, err := money.Parse(text, scale); err != nil {
		return "", 0, false
	}
	return text, scale, true
}

// writtenScale is the number of decimals text is written with ("10.00":
// 2, "1.5e1": 0), at most money.MaxScale+1 (which money.Parse refuses).
func writtenScale(text string) int {
	mant, exp, _ := strings.Cut(strings.ToLower(text), "e")
	_, frac, _ := strings.Cut(mant, ".")
	e, err := strconv.Atoi(strings.TrimPrefix(exp, "+"))
	if err != nil || e > money.MaxScale+1 || e < -money.MaxScale-1 {
		e = 0
	}
	return min(max(len(frac)-e, 0), money.MaxScale+1)
}

// Sums returns the tally by currency, bytewise, with the cards without a
// currency last.
func (t *CardSumTally) Sums() ([]CardSum, error) {
	var out []CardSum
	for name, c := range t.byCurrency {
		s := CardSum{Currency: name, Cards: c.cards, Unparsed: c.unparsed}
		for _, v := range c.values {
			s.Scale = max(s.Scale, v.scale)
		}
		sum := new(big.Int)
		for _, v := range c.values {
			a, err := money.Parse(v.text, s.Scale)
			if err != nil {
				return nil, fmt.Errorf("card sums: %s balance %q: %w", name, v.text, err)
			}
			sum.Add(sum, new(big.Int).Mul(big.NewInt(a.Minor()), big.NewInt(v.n)))
			s.Summed += v.n
		}
		s.Sum = bigDecimal(sum, s.Scale)
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b CardSum) int {
		if (a.Currency == NoCurrency) != (b.Currency == NoCurrency) {
			if a.Currency == NoCurrency {
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
