package sim

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/cardsync/cardsync/redact"
)

// Odd items are what Options.OddData mixes into the card list: cards a real
// Laravel/PHP server can send that a client must store or set aside without
// failing its walk. Each is served byte for byte as written here.

// oddItem is one odd item: its name (Card.Odd), the id a client reads from
// it ("" when it has no usable id) and its JSON at a revision (UpdateCard
// bumps the revision of items that have an id).
type oddItem struct {
	name string
	id   string
	json func(rev int) string
}

// rev renders the revision field that UpdateCard changes.
func rev(r int) string { return `"rev":` + strconv.Itoa(r) }

// luhnTimestamp returns the first millisecond timestamp from 1700000000000
// on whose digits pass the Luhn check: a look-alike a naive redactor masks.
func luhnTimestamp() string {
	for n := int64(1700000000000); ; n++ {
		s := strconv.FormatInt(n, 10)
		if redact.LuhnCheckDigit([]byte(s[:len(s)-1])) == s[len(s)-1] {
			return s
		}
	}
}

// nested returns a value nested depth objects deep.
func nested(depth int, leaf string) string {
	return strings.Repeat(`{"n":`, depth) + leaf + strings.Repeat("}", depth)
}

// oddItems lists the odd items in the order they are mixed in.
func oddItems() []oddItem {
	longID := strings.Repeat("card-0123456789-", 13)[:200]
	overlong := strings.Repeat("x", 300)
	longKey := strings.Repeat("k", 300)
	ts := luhnTimestamp()
	fixed := func(s string) func(int) string { return func(int) string { return s } }
	withRev := func(prefix, suffix string) func(int) string {
		return func(r int) string { return prefix + rev(r) + suffix }
	}
	return []oddItem{
		// Valid ids of unusual kinds.
		{"string-id-unicode", "card 42 ✓", withRev(`{"id":"card 42 \u2713",`, `,"status":"active","balance":"10.00"}`)},
		{"base64-id", "YWJj+/==", withRev(`{"id":"YWJj+\/==",`, `,"status":"active","balance":"11.00"}`)},
		{"uuid-id", "6f1c2f5e-8a47-4f0b-9a43-2b8c6d1e0f11", withRev(`{"id":"6f1c2f5e-8a47-4f0b-9a43-2b8c6d1e0f11",`, `,"status":"frozen","balance":"12.00"}`)},
		{"long-id", longID, withRev(`{"id":"`+longID+`",`, `,"status":"active","balance":"13.00"}`)},
		{"big-integer-id", "1234567890123456789012345", withRev(`{"id":1234567890123456789012345,`, `,"status":"active","balance":"14.00"}`)},
		{"negative-id", "-7", withRev(`{"id":-7,`, `,"status":"active","balance":"15.00"}`)},
		// Ids no client can use: the item must be set aside.
		{"overlong-id", "", fixed(`{"id":"` + overlong + `","status":"active"}`)},
		{"control-char-id", "", fixed(`{"id":"ab\u0007c","status":"active"}`)},
		{"null-id", "", fixed(`{"id":null,"status":"active"}`)},
		{"missing-id", "", fixed(`{"status":"active","note":"no id"}`)},
		{"fraction-id", "", fixed(`{"id":12.5,"status":"active"}`)},
		{"boolean-id", "", fixed(`{"id":true,"status":"active"}`)},
		{"object-id", "", fixed(`{"id":{"n":1},"status":"active"}`)},
		{"empty-id", "", fixed(`{"id":"","status":"active"}`)},
		// Items that are not objects.
		{"string-item", "", fixed(`"oops"`)},
		{"number-item", "", fixed(`42`)},
		// Field names a flat view must survive.
		{"odd-field-names", "odd-keys", withRev(`{"id":"odd-keys",`, `,"a\u0000b":"nul","":"empty","Status":"ACTIVE","status":"active",`+
			`"q\"x\\y":"quote and backslash","`+longKey+`":"long key","select":"keyword","limit":{"daily":"5.00"},"a.b":"dot","$":"dollar",`+
			`"caf\u00e9":"cr\u00e8me","url":"https:\/\/example.com\/cards\/odd-keys"}`)},
		// Nesting: storable at 300 levels; deeper than SQLite's 1,000 is not.
		{"nested-300", "nested-300", withRev(`{"id":"nested-300",`, `,"deep":`+nested(300, `"bottom"`)+`}`)},
		{"nested-1100", "nested-1100", withRev(`{"id":"nested-1100",`, `,"deep":`+nested(1100, `"bottom"`)+`}`)},
		// Card data a redactor must find, flags it must keep.
		{"card-numbers", "pan-forms", withRev(`{"id":"pan-forms",`, `,"nbsp":"4111\u00a01111\u00a01111\u00a01111","slash":"5500\/0000\/0000\/0004",`+
			`"reference":4012888888881881,"by_number":{"378282246310005":"amex"},"note":"paid with 5500 0000 0000 0004 today",`+
			`"cardCVV":"123","pinCode":"9876","security_code":"555",`+
			`"pin_verified":true,"has_pin":true,"cvc_status":"pass","spin_count":3,"pinned":false}`)},
		// Look-alikes a redactor must keep exactly.
		{"look-alikes", "look-alikes", withRev(`{"id":"look-alikes",`, `,"created_ms":`+ts+`,"created_ms_text":"`+ts+`","iban":"DE89 3704 0044 0532 0130 00",`+
			`"phone":"+86 138 0013 8000","snowflake":1541815603606036480,"amount":"1234567890123.45"}`)},
	}
}

// mixOdd spreads the odd items through cards: one after every
// ceil(len(cards)/len(odd)) cards, the rest at the end.
func mixOdd(cards []Card) []Card {
	items := oddItems()
	step := (len(cards) + len(items) - 1) / len(items)
	out := make([]Card, 0, len(cards)+len(items))
	k := 0
	for i, c := range cards {
		out = append(out, c)
		if step > 0 && (i+1)%step == 0 && k < len(items) {
			out = append(out, newOddCard(items[k]))
			k++
		}
	}
	for ; k < len(items); k++ {
		out = append(out, newOddCard(items[k]))
	}
	return out
}

func newOddCard(it oddItem) Card {
	c := Card{ID: it.id, Odd: it.name, oddJSON: it.json}
	c.raw = []byte(it.json(1))
	c.oddRev = 1
	return c
}

// Float noise: PHP's json_encode writes a float with 17 significant digits,
// so amounts computed in floating point arrive as 1234.5600000000002.
const (
	noisyBalance  = "1234.5600000000002"
	noisyRecharge = "0.30000000000000004"
)

// driftAccount moves the account's balance and cards_balance by a seeded
// amount (positive or negative, two decimals): read n of /account (n >= 2)
// under Options.AccountDrift.
func driftAccount(a *Account, seed int64, n int) {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(n)^0xD81F7))
	for _, p := range []**string{&a.Balance, &a.CardsBalance} {
		minor := int64(0)
		if *p != nil {
			minor = parseMinor(**p)
		}
		minor += int64(r.IntN(200000)) - 80000
		v := formatMinor(minor)
		*p = &v
	}
}

// parseMinor reads decimal text as minor units (scale 2), dropping further
// decimals; text it cannot read counts as 0.
func parseMinor(s string) int64 {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	frac = (frac + "00")[:2]
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	if neg {
		return -(w*100 + f)
	}
	return w*100 + f
}
