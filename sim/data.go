package sim

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cardsync/cardsync/redact"
)

// Card is the truth about one card as the simulator serves it. Cards
// returned by the Server are copies; changing them changes nothing.
type Card struct {
	// ID is the card id as text ("1003"), whether served as a JSON integer
	// or, with Options.StringIDs, as a JSON string.
	ID string
	// Number is the numeric id.
	Number int64
	// MaskedNumber is the served "masked_number", e.g. "411111******1111".
	MaskedNumber string
	// PAN and CVV are the full card number and security code; they are only
	// served with Options.IncludePAN.
	PAN, CVV string
	// Brand is "visa" or "mastercard".
	Brand string
	// Status is one of "active", "frozen", "cancelled", "pending".
	Status string
	// Balance is the served decimal string with two decimals, e.g. "123.45".
	Balance string
	// Currency is an ISO 4217 code.
	Currency string
	// Label is the nullable label.
	Label *string
	// HolderName and HolderEmail are the served holder.name and holder.email.
	HolderName, HolderEmail string
	// CreatedAt and UpdatedAt are the served timestamps (UTC, whole seconds).
	CreatedAt, UpdatedAt time.Time
	// Odd names the oddity of an item mixed in by Options.OddData
	// ("null-id", "nested-1100", ...); it is empty for ordinary cards. An odd
	// item's ID is the id a client reads from it, "" when it has none a
	// client can use, and only JSON is meaningful among the other fields.
	Odd string

	balance int64 // minor units
	raw     []byte
	// index is the card's place in the generated list (UniqueFields).
	index int
	// oddJSON renders an odd item at a revision (UpdateCard bumps it).
	oddJSON func(rev int) string
	oddRev  int
}

// JSON returns the exact bytes the simulator serves for this card inside
// the "data" array.
func (c Card) JSON() []byte { return slices.Clone(c.raw) }

func (c Card) clone() Card {
	if c.Label != nil {
		l := *c.Label
		c.Label = &l
	}
	c.raw = slices.Clone(c.raw)
	return c
}

// Account is the truth about the account resource. String amounts hold the
// exact served text ("98765.40"); Balance and AvailableRechargeBalance hold
// the exact text of a JSON number ("98765.4") and are served verbatim, so
// they must be valid JSON numbers. A nil field is served as null.
type Account struct {
	Name, Email, Timezone                       *string
	TransferAmount, ReachAmount, Authorizations *string
	Balance                                     *string
	CardsBalance                                *string
	AvailableRechargeBalance                    *string
	AvailableToApplyCardCount, AppliedCardCount *int64
}

func (a Account) clone() Account {
	cs := func(p *string) *string {
		if p == nil {
			return nil
		}
		v := *p
		return &v
	}
	ci := func(p *int64) *int64 {
		if p == nil {
			return nil
		}
		v := *p
		return &v
	}
	return Account{
		Name: cs(a.Name), Email: cs(a.Email), Timezone: cs(a.Timezone),
		TransferAmount: cs(a.TransferAmount), ReachAmount: cs(a.ReachAmount), Authorizations: cs(a.Authorizations),
		Balance: cs(a.Balance), CardsBalance: cs(a.CardsBalance), AvailableRechargeBalance: cs(a.AvailableRechargeBalance),
		AvailableToApplyCardCount: ci(a.AvailableToApplyCardCount), AppliedCardCount: ci(a.AppliedCardCount),
	}
}

func ptr[T any](v T) *T { return &v }

// defaultAccount is an interesting mix: a null amount, a negative amount,
// a number with a dropped trailing zero and one with 16 significant digits.
func defaultAccount(o Options) Account {
	a := Account{
		Name:                      ptr("Acme Growth Ltd"),
		Email:                     ptr(o.Email),
		Timezone:                  ptr("Asia/Shanghai"),
		TransferAmount:            ptr("125000.00"),
		ReachAmount:               ptr("123750.00"),
		Authorizations:            nil,
		Balance:                   ptr("98765.4"),
		CardsBalance:              ptr("-12.07"),
		AvailableRechargeBalance:  ptr("12345678901234.56"),
		AvailableToApplyCardCount: ptr(int64(42)),
		AppliedCardCount:          ptr(int64(o.Cards)),
	}
	if o.FloatNoise {
		a.Balance, a.AvailableRechargeBalance = ptr(noisyBalance), ptr(noisyRecharge)
	}
	return a
}

func appendAccountJSON(b []byte, a Account, php bool) []byte {
	// Each value appends itself, or null when absent.
	str := func(v *string) func([]byte) []byte {
		return func(b []byte) []byte { return appendString(b, *v, php) }
	}
	num := func(v *string) func([]byte) []byte {
		return func(b []byte) []byte { return append(b, *v...) }
	}
	cnt := func(v *int64) func([]byte) []byte {
		return func(b []byte) []byte { return strconv.AppendInt(b, *v, 10) }
	}
	b = append(b, `{"data":{`...)
	for i, f := range []struct {
		key    string
		absent bool
		put    func([]byte) []byte
	}{
		{"name", a.Name == nil, str(a.Name)},
		{"email", a.Email == nil, str(a.Email)},
		{"timezone", a.Timezone == nil, str(a.Timezone)},
		{"transfer_amount", a.TransferAmount == nil, str(a.TransferAmount)},
		{"reach_amount", a.ReachAmount == nil, str(a.ReachAmount)},
		{"authorizations", a.Authorizations == nil, str(a.Authorizations)},
		{"balance", a.Balance == nil, num(a.Balance)},
		{"cards_balance", a.CardsBalance == nil, str(a.CardsBalance)},
		{"available_recharge_balance", a.AvailableRechargeBalance == nil, num(a.AvailableRechargeBalance)},
		{"available_to_apply_card_count", a.AvailableToApplyCardCount == nil, cnt(a.AvailableToApplyCardCount)},
		{"applied_card_count", a.AppliedCardCount == nil, cnt(a.AppliedCardCount)},
	} {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), f.key...), `":`...)
		if f.absent {
			b = append(b, "null"...)
		} else {
			b = f.put(b)
		}
	}
	return append(b, "}}"...)
}

var (
	firstNames = []string{"Ana", "Wei", "José", "Zoë", "Liam", "Fatima", "Ólafur", "Mei", "Noah", "Priya", "王", "Chloé", "Omar", "Sven", "Aiko", "Lucas"}
	lastNames  = []string{"Silva", "Zhang", "Müller", "O'Brien", "Nguyen", "Kowalski", "Haddad", "伟", "Rossi", "Tanaka", "Dubois", "Smith", "García", "Patel", "Johansson", "Kim"}
	labels     = []string{"Facebook Ads", "TikTok campaign Q3", "Google Ads / EU", `Team "growth"`, "Travel & expenses", "Meta — retargeting", "SaaS tools", "Test card", "Agency <main>"}
	cities     = []struct{ country, city string }{{"US", "Austin"}, {"HK", "Hong Kong"}, {"GB", "London"}, {"DE", "Berlin"}, {"SG", "Singapore"}, {"BR", "São Paulo"}}
	visaBINs   = []string{"411111", "453201", "485932", "402400"}
	mcBINs     = []string{"522222", "531993", "555555", "545454"}
	baseTime   = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
)

// cardRNG is the generator for the card with the given index: card i is the
// same whatever the number of cards.
// pick draws r.IntN(n) once and returns the value of the first bound the
// draw is under, or the last value: pick(r, 10, []int{7, 9}, "a", "b", "c")
// is "a" 70% of the time, "b" 20%, "c" 10%.
func pick(r *rand.Rand, n int, bounds []int, values ...string) string {
	p := r.IntN(n)
	for i, b := range bounds {
		if p < b {
			return values[i]
		}
	}
	return values[len(values)-1]
}

func cardRNG(seed int64, index int) *rand.Rand {
	return rand.New(rand.NewPCG(splitmix(uint64(seed)^splitmix(uint64(index))), splitmix(uint64(index)+0x632BE59BD9B4E019)))
}

// splitmix is the SplitMix64 finaliser: it turns nearby inputs into
// unrelated generator seeds.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return x ^ x>>31
}

// nextGap returns the distance from the previous id for the card with
// this index: mostly 1, sometimes more, so ids have gaps.
func nextGap(seed int64, index int) int64 {
	r := rand.New(rand.NewPCG(splitmix(uint64(seed)^0xA5A5A5A5), splitmix(uint64(index))))
	if r.IntN(10) < 7 {
		return 1
	}
	return 2 + int64(r.IntN(5))
}

// generateCard builds the card with this index and id; created is used
// when non-zero (cards added later), otherwise a seeded time.
func generateCard(seed int64, index int, id int64, created time.Time) Card {
	r := cardRNG(seed, index)
	c := Card{Number: id, ID: strconv.FormatInt(id, 10), index: index}
	bins := visaBINs
	c.Brand = "visa"
	if r.IntN(3) == 0 {
		bins, c.Brand = mcBINs, "mastercard"
	}
	pan := []byte(bins[r.IntN(len(bins))])
	for len(pan) < 15 {
		pan = append(pan, byte('0'+r.IntN(10)))
	}
	pan = append(pan, redact.LuhnCheckDigit(pan))
	c.PAN = string(pan)
	c.MaskedNumber = c.PAN[:6] + "******" + c.PAN[12:]
	c.CVV = strconv.Itoa(100 + r.IntN(900))
	c.Status = pick(r, 100, []int{70, 85, 95}, "active", "frozen", "cancelled", "pending")
	switch p := r.IntN(100); {
	case p < 5:
		c.balance = 0
	case p < 8:
		c.balance = -int64(1 + r.IntN(5000))
	default:
		c.balance = int64(r.IntN(500000))
	}
	c.Balance = formatMinor(c.balance)
	c.Currency = pick(r, 10, []int{7, 9}, "USD", "EUR", "HKD")
	c.HolderName = firstNames[r.IntN(len(firstNames))] + " " + lastNames[r.IntN(len(lastNames))]
	c.HolderEmail = "holder" + c.ID + "@example.com"
	if r.IntN(10) < 6 {
		c.Label = ptr(labels[r.IntN(len(labels))])
	}
	if created.IsZero() {
		created = baseTime.Add(time.Duration(index)*6*time.Hour + time.Duration(r.IntN(6*3600))*time.Second)
	}
	c.CreatedAt = created.UTC().Truncate(time.Second)
	c.UpdatedAt = c.CreatedAt
	if r.IntN(2) == 0 {
		c.UpdatedAt = c.CreatedAt.Add(time.Duration(r.IntN(90*24*3600)) * time.Second)
	}
	return c
}

// extras derived from the card (stable across renders).
func (c *Card) render(o Options) {
	php := o.PHPEscaping
	r := cardRNG(o.Seed, int(c.Number)+1<<20) // extras and holder details
	b := make([]byte, 0, 512)
	b = append(b, `{"id":`...)
	if o.StringIDs {
		b = appendString(b, c.ID, php)
	} else {
		b = append(b, c.ID...)
	}
	b = appendField(b, `,"masked_number":`, c.MaskedNumber, php)
	if o.IncludePAN {
		b = appendField(b, `,"card_number":`, c.PAN, php)
		b = appendField(b, `,"cvv":`, c.CVV, php)
	}
	b = appendField(b, `,"brand":`, c.Brand, php)
	b = appendField(b, `,"status":`, c.Status, php)
	b = appendField(b, `,"balance":`, c.Balance, php)
	b = appendField(b, `,"currency":`, c.Currency, php)
	b = appendField(b, `,"holder":{"name":`, c.HolderName, php)
	b = appendField(b, `,"email":`, c.HolderEmail, php)
	b = append(b, `,"phone":`...)
	if r.IntN(2) == 0 {
		b = append(b, "null"...)
	} else {
		b = appendString(b, "+1-555-01"+strconv.Itoa(10+r.IntN(90)), php)
	}
	loc := cities[r.IntN(len(cities))]
	b = appendField(b, `,"address":{"country":`, loc.country, php)
	b = appendField(b, `,"city":`, loc.city, php)
	b = append(b, `}},"label":`...)
	if c.Label == nil {
		b = append(b, "null"...)
	} else {
		b = appendString(b, *c.Label, php)
	}
	b = append(b, `,"expiry_month":`...)
	b = strconv.AppendInt(b, int64(1+r.IntN(12)), 10)
	b = append(b, `,"expiry_year":`...)
	b = strconv.AppendInt(b, int64(2026+r.IntN(5)), 10)
	if o.ExtraFields {
		b = appendField(b, `,"purpose":["FACEBOOK","TIKTOK"],"spend_controls":{"daily_limit":`, formatMinor(int64(10000*(1+r.IntN(50)))), php)
		b = append(b, `,"monthly_limit":null,"mcc_blocklist":[7995,6011],"velocity":{"window":"24h","max_txn":`...)
		b = strconv.AppendInt(b, int64(5+r.IntN(50)), 10)
		b = append(b, `}},"risk_score":0.`...)
		b = strconv.AppendInt(b, int64(10+r.IntN(89)), 10)
		b = appendField(b, `,"metadata":{"source":"api","tags":[],"x_internal_ref":`, "ref-"+strconv.FormatUint(r.Uint64()%1e12, 36), php)
		b = append(b, `}`...)
	}
	if o.UniqueFields > 0 && o.Cards > 0 {
		for j := c.index; j < o.UniqueFields; j += o.Cards {
			b = appendString(append(b, ','), uniqueFieldName(j, o.FieldNameBytes), php)
			b = strconv.AppendInt(append(b, ':'), int64(j), 10)
		}
	}
	b = appendField(b, `,"created_at":`, c.CreatedAt.Format(timeLayout), php)
	b = appendField(b, `,"updated_at":`, c.UpdatedAt.Format(timeLayout), php)
	b = append(b, '}')
	c.raw = b
}

const timeLayout = "2006-01-02T15:04:05Z"

// uniqueFieldName is Options.UniqueFields' name number j: "u<j>_" padded
// with "x" to size bytes.
func uniqueFieldName(j, size int) string {
	name := "u" + strconv.Itoa(j) + "_"
	if len(name) < size {
		name += strings.Repeat("x", size-len(name))
	}
	return name
}

// formatMinor formats minor units (scale 2) as "-12.07".
func formatMinor(m int64) string {
	neg := m < 0
	u := uint64(m)
	if neg {
		u = uint64(-m)
	}
	s := strconv.FormatUint(u/100, 10) + "." + string([]byte{byte('0' + u%100/10), byte('0' + u%10)})
	if neg {
		return "-" + s
	}
	return s
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. With php it escapes like PHP's
// json_encode defaults ("\/" and \uXXXX for non-ASCII).
// appendField appends key (the JSON text before a value, such as
// `,"brand":`) and s as a JSON string.
func appendField(b []byte, key, s string, php bool) []byte {
	return appendString(append(b, key...), s, php)
}

func appendString(b []byte, s string, php bool) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '/' && php:
				b = append(b, '\\', '/')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			r = utf8.RuneError
		}
		if php || r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				b = appendU(appendU(b, r1), r2)
			} else {
				b = appendU(b, r)
			}
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}
