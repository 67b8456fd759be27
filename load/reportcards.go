package load

// Currency names CardSum gives cards whose currency field is not text.
const (
	// NoCurrency is the currency of cards without one (absent or null).
	NoCurrency = "(none)"
	// OddCurrency is the currency of cards whose currency is not a string.
	OddCurrency = "(not text)"
)

// CardSum is the current cards of one currency (the card's currency
// field) and the exact sum of their balance field, by the typed rule of
// cards_flat's balance_minor: what card_fields types it.
type CardSum struct {
	Currency string
	// Cards counts the current cards of the currency: Summed + Unparsed +
	// NoBalance.
	Cards int64
	// Summed counts the cards whose balance fits its field's type: for a
	// decimal field, the cards with minor units in card_state.minor; for an
	// integer field, the integers. Sum is their exact sum as decimal text
	// at Scale (the cards' card_state.amount_scale: the currency's ISO 4217
	// minor unit, else [cards] amount_scale, the largest when the cards of
	// one currency have several; 0 for an integer field), "" when the
	// field is neither decimal nor integer (nothing is summed).
	Summed int64
	Sum    string
	Scale  int
	// Unparsed counts the cards with a balance (not null) that is not
	// summed: a value that does not fit the field's type (balance_minor is
	// NULL), or any value of a field that is neither decimal nor integer.
	Unparsed int64
	// NoBalance counts the cards whose balance is absent or null.
	NoBalance int64
}
