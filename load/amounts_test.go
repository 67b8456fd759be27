package load

import (
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
