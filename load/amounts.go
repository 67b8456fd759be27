package load

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cardsync/cardsync/load/internal/jsonscan"
	"github.com/cardsync/cardsync/money"
)

// DefaultCardAmountScale is [cards] amount_scale's default: the decimals
// of a card's decimal fields when the card names no currency ISO 4217
// knows.
const DefaultCardAmountScale = 2

// CheckCardAmountScale checks [cards] amount_scale: 0 to money.MaxScale
// decimals.
func CheckCardAmountScale(n int) error {
	if n < 0 || n > money.MaxScale {
		return fmt.Errorf("%d decimals: the scale of card amounts is 0 to %d", n, money.MaxScale)
	}
	return nil
}

// CheckCurrencyField checks [cards] currency_field: "" (find the field by
// its name) or a top-level field's name as stored, without surrounding
// spaces or control characters.
func CheckCurrencyField(name string) error {
	if name == "" {
		return nil
	}
	if strings.TrimSpace(name) != name {
		return fmt.Errorf("%q has surrounding spaces", name)
	}
	if strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%q holds a control character", name)
	}
	return nil
}

// AmountRules say at which scale a card's decimal fields are held in
// integer minor units (card_state.minor, cards_flat's _minor columns):
// the ISO 4217 minor unit of the card's own currency when the card names
// one (CardMoney), else Scale ([cards] amount_scale). The scale never
// depends on the values themselves: a value with more decimals is rounded
// half to even and marked (card_fields.rounded, the card's
// amounts_rounded), one beyond int64 minor units is a conflict.
type AmountRules struct {
	// Scale is the decimals of a card without a known currency.
	Scale int
	// CurrencyField is the top-level field that holds a card's currency
	// ([cards] currency_field); "": the field found by its name
	// (IsCurrencyName).
	CurrencyField string
}

// DefaultAmountRules are the rules of a warehouse configured with
// nothing: DefaultCardAmountScale, the currency field found by its name.
func DefaultAmountRules() AmountRules { return AmountRules{Scale: DefaultCardAmountScale} }

// CardMoney is the scale of one card's decimal fields and where it comes
// from.
type CardMoney struct {
	// Scale is the decimals of the card's minor units (card_state.amount_scale).
	Scale int
	// Currency is the ISO 4217 code, upper-case, whose minor unit Scale is
	// (card_state.amount_currency); "" when the rules' default applies.
	Currency string
	// Unknown is the code the card's currency field held that ISO 4217
	// does not know (its text as sent, "" when none): the default applies.
	Unknown string
}

// IsCurrencyName says whether a top-level field called name holds a
// card's currency, by its meaning: its letters, lower-cased, start with
// "currency" (currency, currency_code, CurrencyISO) or are "ccy" or
// "cur". currencyRank 1 marks other names holding the word
// (billing_currency), taken only when no field of rank 0 holds a code.
func IsCurrencyName(name string) bool { return currencyRank(name) >= 0 }

// currencyRank is 0 for a name that is the currency (IsCurrencyName), 1
// for one that holds the word elsewhere, -1 for any other. It allocates
// nothing for a name of up to 48 letters: every written card's keys pass
// here.
func currencyRank(name string) int {
	var buf [48]byte
	letters := buf[:0]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 'a' && c <= 'z' {
			letters = append(letters, c)
		}
	}
	switch {
	case bytes.HasPrefix(letters, []byte("currency")), string(letters) == "ccy", string(letters) == "cur":
		return 0
	case bytes.Contains(letters, []byte("currency")):
		return 1
	}
	return -1
}

// keyIs reports whether a member's key as written (between its quotes)
// is name.
func keyIs(key []byte, name string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key) == name
	}
	return jsonscan.UnquoteKey(string(key)) == name
}

// Of is the money of a card whose stored JSON data (canonical, or
// PostgreSQL's jsonb text) is data: the currency is the string value of
// CurrencyField, or else of the first top-level field that IsCurrencyName
// (rank 0 before rank 1) holding three ASCII letters; a code ISO 4217
// knows gives its minor unit, any other the rules' Scale.
func (r AmountRules) Of(data []byte) CardMoney {
	best, rank := "", 2
	jsonscan.EachMember(data, func(key, raw []byte) {
		if rank == 0 && r.CurrencyField == "" {
			return
		}
		k := 0
		if r.CurrencyField != "" {
			if !keyIs(key, r.CurrencyField) {
				return
			}
		} else if k = currencyRank(string(key)); k < 0 || k >= rank {
			return // an escape in a key is never a letter
		}
		code, ok := currencyCode(raw)
		if !ok {
			return
		}
		best, rank = code, k
	})
	m := CardMoney{Scale: r.Scale}
	if best == "" {
		return m
	}
	if units, ok := money.MinorUnits(best); ok {
		m.Scale, m.Currency = units, strings.ToUpper(best)
	} else {
		m.Unknown = best
	}
	return m
}

// currencyCode is the text of a JSON string of three ASCII letters.
func currencyCode(raw []byte) (string, bool) {
	raw = jsonscan.TrimSpace(raw)
	if len(raw) != 5 || raw[0] != '"' || raw[4] != '"' {
		return "", false
	}
	for _, c := range raw[1:4] {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return "", false
		}
	}
	return string(raw[1:4]), true
}
