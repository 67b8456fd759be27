// Package redacttest holds test data for code that must not store or log card
// numbers or card codes: a corpus of card numbers of every network, length
// and shape, strings that look like card numbers but are not, keys that name
// a security code or a PIN in every spelling and keys that merely look like
// one.
//
// It is for tests only. It does not import package redact, so that redact's
// own tests can use it and so that its card numbers are built by a second,
// independent implementation of the rules. Everything is deterministic.
package redacttest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Sample is a text that holds one full card number.
type Sample struct {
	// Name says which network, prefix, length and shape: "visa/4/16/dash".
	Name string
	// Text holds the card number, in the shape Name says.
	Text string
	// Digits are the bare digits of the card number in Text: a redacted
	// copy of Text must not contain them.
	Digits string
}

// Network is a card network: the prefixes the corpus uses (the edges of each
// issued range) and the lengths it issues.
type Network struct {
	Name     string
	Prefixes []string
	Lengths  []int
}

// Networks returns the card networks that redact recognises, with the first
// and last prefix of each issued range.
func Networks() []Network {
	return []Network{
		{"visa", []string{"4"}, []int{13, 16, 19}},
		{"mastercard", []string{"51", "53", "55", "2221", "2500", "2720"}, []int{16}},
		{"amex", []string{"34", "37"}, []int{15}},
		{"discover", []string{"6011", "644", "649", "65"}, lengths(16, 19)},
		{"jcb", []string{"3528", "3589"}, lengths(16, 19)},
		{"diners", []string{"300", "305", "36", "38", "39"}, lengths(14, 19)},
		{"unionpay", []string{"62", "81"}, lengths(16, 19)},
		{"maestro", []string{"50", "56", "69"}, lengths(12, 19)},
		{"mir", []string{"2200", "2204"}, lengths(16, 19)},
		{"rupay", []string{"82"}, []int{16}},
		{"troy", []string{"9792"}, []int{16}},
	}
}

func lengths(from, to int) []int {
	var l []int
	for n := from; n <= to; n++ {
		l = append(l, n)
	}
	return l
}

// Number returns a card number of n digits that starts with prefix: the
// prefix, digits from a generator seeded by prefix and n, and a Luhn check
// digit.
func Number(prefix string, n int) string {
	seed := uint64(n)
	for _, c := range prefix {
		seed = seed*31 + uint64(c)
	}
	b := []byte(prefix)
	for len(b) < n-1 {
		seed = seed*6364136223846793005 + 1442695040888963407
		b = append(b, byte('0'+(seed>>33)%10))
	}
	return string(append(b, LuhnDigit(string(b))))
}

// LuhnDigit returns the check digit that makes digits+check pass Luhn.
func LuhnDigit(digits string) byte {
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-1-i)%2 == 0 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

// Luhn reports whether digits pass the Luhn check.
func Luhn(digits string) bool {
	return len(digits) > 1 && LuhnDigit(digits[:len(digits)-1]) == digits[len(digits)-1]
}

// Groups splits a card number the way it is printed: 4-6-5 for 15 digits
// (Amex), 4-6-4 for 14 (Diners), 4-3-3-3 for 13, groups of 4 otherwise.
func Groups(digits string) []string {
	var sizes []int
	switch len(digits) {
	case 13:
		sizes = []int{4, 3, 3, 3}
	case 14:
		sizes = []int{4, 6, 4}
	case 15:
		sizes = []int{4, 6, 5}
	}
	var g []string
	for _, s := range sizes {
		g = append(g, digits[:s])
		digits = digits[s:]
	}
	for len(digits) > 4 {
		g = append(g, digits[:4])
		digits = digits[4:]
	}
	if digits != "" {
		g = append(g, digits)
	}
	return g
}

// PANCorpus returns card numbers of every network, at every prefix edge and
// every length the network issues, each in every shape: plain digits, printed
// in groups with each separator and pair of separators, inside a sentence, and
// glued to letters; and, at the first prefix and length of each network, in
// every other spelling: other separators and runs of them, digits of other
// scripts, and JSON numbers with a zero fraction or an exponent (see
// JSONNumber). Digits are always ASCII; Fold reads a Text the way redact
// does.
func PANCorpus() []Sample {
	separators := []struct{ name, sep string }{
		{"space", " "},
		{"nbsp", "\u00a0"},
		{"dash", "-"},
		{"dot", "."},
		{"slash", "/"},
		{"underscore", "_"},
		{"dash-space", "- "},
		{"two-spaces", "  "},
		{"space-dot", " ."},
		{"two-nbsp", "\u00a0\u00a0"},
	}
	var out []Sample
	for _, nw := range Networks() {
		for _, p := range nw.Prefixes {
			for _, n := range nw.Lengths {
				d := Number(p, n)
				name := fmt.Sprintf("%s/%s/%d/", nw.Name, p, n)
				out = append(out, Sample{name + "plain", d, d})
				groups := Groups(d)
				for _, s := range separators {
					out = append(out, Sample{name + s.name, strings.Join(groups, s.sep), d})
				}
				out = append(out,
					Sample{name + "sentence", "paid with " + strings.Join(groups, " ") + " yesterday", d},
					Sample{name + "sentence-plain", "card " + d + ", exp 12/29", d},
					Sample{name + "glued", "x" + d + "y", d},
					Sample{name + "glued-dash", "card:" + strings.Join(groups, "-") + ";ok", d},
					Sample{name + "more-groups", strings.Join(groups, " ") + " 2024", d},
					// Negative: as a JSON number, its absolute value.
					Sample{name + "minus", "-" + d, d},
				)
				if n > maxPhone {
					// After a '+', too long for a phone number.
					out = append(out,
						Sample{name + "plus", "+" + d, d},
						Sample{name + "glued-plus", "ref+" + d, d},
						Sample{name + "plus-grouped", "+" + strings.Join(groups, " "), d},
					)
				}
				if p == nw.Prefixes[0] && n == nw.Lengths[0] {
					out = append(out, spellings(name, d)...)
				}
			}
		}
	}
	return out
}

// Zeros of the decimal digits of scripts other than ASCII.
const (
	fullWidthZero      = '\uff10'
	arabicIndicZero    = '\u0660'
	extArabicIndicZero = '\u06f0'
	devanagariZero     = '\u0966'
	mathBoldZero       = '\U0001d7ce'
	mathMonospaceZero  = '\U0001d7f6'
)

// spellings returns the card number d (name is the prefix of the sample
// names) in the spellings that need more than ASCII digits and one or two
// ASCII separators: other separators (tab, runs of up to four spaces, en
// and em dashes, zero-width, thin and ideographic spaces, soft hyphen,
// word joiner), digits of other scripts (full-width, Arabic-Indic,
// extended Arabic-Indic, Devanagari, mathematical), and as a JSON number
// with a zero fraction or an exponent.
func spellings(name, d string) []Sample {
	groups := Groups(d)
	var out []Sample
	for _, s := range []struct{ name, sep string }{
		{"tab", "\t"},
		{"tab-space", "\t "},
		{"three-spaces", "   "},
		{"four-spaces", "    "},
		{"space-dash-space", " - "},
		{"en-dash", "\u2013"},
		{"em-dash", "\u2014"},
		{"spaced-en-dash", " \u2013 "},
		{"zero-width-space", "\u200b"},
		{"zero-width-space-space", "\u200b "},
		{"nbsp-zero-width-space", "\u00a0\u200b"},
		{"thin-space", "\u2009"},
		{"narrow-nbsp", "\u202f"},
		{"ideographic-space", "\u3000"},
		{"soft-hyphen", "\u00ad"},
		{"word-joiner", "\u2060"},
		{"newline", "\n"},
	} {
		out = append(out, Sample{name + s.name, strings.Join(groups, s.sep), d})
	}
	for _, s := range []struct {
		name string
		zero rune
	}{
		{"full-width", fullWidthZero},
		{"arabic-indic", arabicIndicZero},
		{"ext-arabic-indic", extArabicIndicZero},
		{"devanagari", devanagariZero},
		{"math-bold", mathBoldZero},
		{"math-monospace", mathMonospaceZero},
	} {
		script := make([]string, len(groups))
		for k, g := range groups {
			script[k] = InScript(g, s.zero)
		}
		out = append(out,
			Sample{name + s.name, InScript(d, s.zero), d},
			Sample{name + s.name + "-grouped", strings.Join(script, " "), d},
		)
	}
	full := make([]string, len(groups))
	for k, g := range groups {
		full[k] = InScript(g, fullWidthZero)
	}
	out = append(out,
		Sample{name + "full-width-ideographic-space", strings.Join(full, "\u3000"), d},
		Sample{name + "mixed-scripts", InScript(groups[0], arabicIndicZero) + " " + strings.Join(groups[1:], "-"), d},
		Sample{name + "zero-width-between-digits", strings.Join(strings.Split(d, ""), "\u200b"), d},
		Sample{name + "json-zero-fraction", d + ".0", d},
		Sample{name + "json-zero-fraction-2", d + ".00", d},
		Sample{name + "json-exponent", d[:1] + "." + d[1:] + "e" + strconv.Itoa(len(d)-1), d},
		Sample{name + "json-negative-zero-fraction", "-" + d + ".0", d},
		Sample{name + "json-negative-exponent", "-" + d[:1] + "." + d[1:] + "e" + strconv.Itoa(len(d)-1), d},
	)
	return out
}

// InScript returns the ASCII digits of s written with the digits of the
// script whose zero is zero (U+FF10 for full-width digits, U+0660 for
// Arabic-Indic ones); other characters are kept.
func InScript(s string, zero rune) string {
	var b strings.Builder
	for _, c := range s {
		if c >= '0' && c <= '9' {
			c = zero + c - '0'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Fold returns s with every decimal digit of any script (Unicode category
// Nd) as its ASCII digit, and without the characters that may separate the
// digit groups of a card number: what is left of a text once read for card
// numbers. A test looks for a sample's Digits in it.
func Fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Nd, r):
			// The digits of a script are ten consecutive code points
			// from zero: count back to the first.
			zero := r
			for unicode.Is(unicode.Nd, zero-1) {
				zero--
			}
			b.WriteByte(byte('0' + (r-zero)%10))
		case unicode.IsLetter(r), unicode.IsNumber(r), r == '*', r == '+':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// JSONNumber reports whether s is a JSON number that redact reads as the
// integer it stands for: an optional '-', digits, then a fraction, an
// exponent or both ("4111111111111111.0", "4.111111111111111e15",
// "-4.111111111111111e15"). Integers are JSONInt.
func JSONNumber(s string) bool {
	if JSONInt(s) {
		return false
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, hasFrac := strings.Cut(mant, ".")
	if !hasExp && !hasFrac || !JSONInt(intPart) || hasFrac && !allDigits(frac) {
		return false
	}
	exp = strings.TrimPrefix(strings.TrimPrefix(exp, "+"), "-")
	return !hasExp || allDigits(exp)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// LookAlikes returns strings that look like card numbers but hold none:
// Unix timestamps in s, ms, µs and ns (some passing Luhn), dates and times,
// phone numbers, IBANs, amounts, snowflake ids, UUIDs, references, runs of
// more than 19 digits, masked card numbers, and numbers that miss one rule
// (Luhn, length, or prefix at the edges of the issued ranges).
func LookAlikes() []string {
	l := []string{
		// Unix timestamps.
		"1705312800", "1705312800123", "1705312800123456", "1705312800123456789",
		"1999999999999", "1000000000000000000",
		// Dates and times.
		"20240115", "2024-01-15", "2024/01/15", "15.01.2024", "01/15/2024",
		"2024-01-15T10:00:00Z", "2024-01-15T10:00:00.123456789Z", "2024-01-15T10:00:00.123+01:00",
		"2024-01-15 10:00:00.123456", "2024-01-15 10:00:00", "Mon, 15 Jan 2024 10:00:00 GMT",
		"20240115T100000Z", "2024-01-15/2024-02-15", "2024 01 15 10 00 00",
		// Phone numbers.
		"+86 138 0013 8000", "+8613800138000", "+1 (415) 555-2671", "+14155552671",
		"(415) 555-2671", "415-555-2671", "+44 7911 123456", "+447911123456",
		"+33 1 42 68 53 00", "+7 495 123-45-67", "+91 98765 43210", "+55 11 91234-5678",
		"+61 2 9876 5432", "+49 30 901820", "+1-800-555-0199",
		// IBANs.
		"DE89 3704 0044 0532 0130 00", "DE89370400440532013000", "GB82WEST12345698765432",
		"GB82 WEST 1234 5698 7654 32", "FR14 2004 1010 0505 0001 3M02 606", "NL91ABNA0417164300",
		"CH93 0076 2011 6238 5295 7", "ES91 2100 0418 4502 0005 1332",
		"IT60 X054 2811 1010 0000 0123 456",
		// Amounts.
		"1234567890123.45", "12,345,678.90", "1 234 567 890 123,45", "USD 98765432101234.00",
		"0.0000000000000001", "4,111,111,111,111.11",
		// Snowflake ids (Twitter, Discord).
		"1745218931273891840", "1194372458129330216", "175928847299117063",
		// UUIDs.
		"550e8400-e29b-41d4-a716-446655440000", "123e4567-e89b-12d3-a456-426614174000",
		"00000000-0000-0000-0000-000000000000", "12345678-1234-5678-1234-567812345678",
		// References.
		"ORD-2024-000123456789", "INV/2024/00012345", "PO-1234567890123", "TXN_20240115_000000123",
		"ref 1000 2000 3000 4000",
		// More than 19 contiguous digits with a card number inside whose
		// ends nothing explains (not followed by an expiry, zeros or
		// the end of the run; no zero-padding or length before it).
		"411111111111111199999", "12345678901234567890123",
		"98765432109876543210",
		// Masked card numbers.
		"411111******1111", "4111 11** **** 1111", "5500 00** **** 5559", "**** **** **** 1111",
		"XXXX-XXXX-XXXX-1111", "411111XXXXXX1111", "3782 82**** *0005",
		// Luhn fails.
		"4111111111111112", "5500005555555550", "378282246310006",
		// Five separators do not join groups.
		"4111     1111 1111 1111", "4111 -- - 1111 - 1111 - 1111",
		"4111\u200b\u200b\u200b\u200b\u200b1111 1111 1111",
		// Letters break a run.
		"4111 x 1111 1111 1111", "4111o1111o1111o1111",
		// Digits of other scripts: Luhn fails, or no network's prefix.
		"\uff14\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff12",
		"\u0661\u0667\u0660\u0665\u0663\u0661\u0662\u0668\u0660\u0660\u0660\u0660\u0669",
		"\u0967\u0969\u096b\u096d \u0968\u096f\u0967\u0966 \u0966\u0967\u0967\u0969 \u096e\u0966\u0967\u0968",
		// Superscript and circled digits (read as digits, as NFKC
		// does) failing Luhn; Roman numerals and parenthesised digits
		// are not digits.
		"\u2074\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b2",
		"\u2463\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2461",
		"\u2163\u2160\u2160\u2160\u2160\u2160\u2160\u2160\u2160\u2160\u2160\u2160\u2160\u2160\u2160\u2160",
		"\u2477\u2474\u2474\u2474\u2474\u2474\u2474\u2474\u2474\u2474\u2474\u2474\u2474\u2474\u2474\u2474",
		// A phone number after '+', with en dashes.
		"+49\u20131511\u20132345678",
		// Phone numbers of at most 15 digits after '+' whose digits
		// happen to be a card number's.
		"+49 1511 2345678", "+4915112345678", "tel:+4915112345678", "+378282246310005",
		"+37 8282 2463 10005", "+4222222222222", "call +4222222222222 now",
	}
	// A Luhn-valid number at a length or prefix no network issues.
	for _, c := range []struct {
		prefix string
		n      int
	}{
		{"4", 14}, {"4", 15}, {"4", 17}, {"4", 18}, {"4", 12}, {"4", 20},
		{"51", 15}, {"51", 17}, {"55", 19},
		{"2220", 16}, {"2721", 16}, {"2205", 16}, {"2199", 16},
		{"34", 16}, {"37", 14}, {"3527", 16}, {"3590", 16}, {"306", 14}, {"31", 16},
		{"82", 17}, {"9792", 15}, {"9791", 16}, {"80", 16}, {"83", 16}, {"7", 16},
		{"1", 13}, {"1", 16}, {"1", 19}, {"0", 16},
	} {
		l = append(l, Number(c.prefix, c.n))
	}
	// Millisecond and nanosecond timestamps that pass Luhn: prefix 1 is no
	// network's.
	for _, base := range []int64{1705312800000, 1735689600000, 1705312800000000000} {
		v := base
		for found := 0; found < 2; v++ {
			if s := strconv.FormatInt(v, 10); Luhn(s) {
				l = append(l, s)
				found++
			}
		}
	}
	return l
}

// maxPhone is the most digits of an international (E.164) phone number:
// a run of at most so many digits right after a '+' is left alone.
const maxPhone = 15

// JSONInt reports whether s is a JSON integer as redact treats it: an
// optional '-' (redact reads a negative number by its absolute value), then
// digits only, no fraction or exponent, and no leading zero (except "0").
func JSONInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// SecretKeys returns object keys that name a card security code or a PIN, in
// every spelling: redact drops them with their value, whatever its type but
// a boolean or null.
func SecretKeys() []string {
	return []string{
		"cvv", "CVV", "cvc", "cvv2", "CVV2", "cvc2", "cvn", "cav2", "csc", "pin", "PIN",
		"card_cvv", "cardCVV", "card-cvc", "card.cvc2", "card cvn", "cardPIN", "new-pin", "cardcvv",
		"cvv_number", "cvvNumber", "cvv_value", "cvv2_value", "CVV2Code", "cvv2Code", "cvvcode", "cvccode",
		"cvv_code", "CVVCode", "cvc_data", "cvv_2",
		"card_verification", "card_verification_value", "card_verification_code", "cardVerificationValue",
		"verification_value", "cardverificationvalue",
		"security_code", "securityCode", "SecurityCode", "security-code", "securitycode", "security_code_number",
		"pin_number", "pinNumber", "pin_code", "PINCode", "pincode", "pin_block", "PINBlock", "pinblock",
		"pin_data", "pin2", "card_cid", "cc_cid", "amex_cid", "cardCID", "pin_hash",
		// Spelled with other characters.
		"card\u00a0cvv", "security\u00a0code", "card\u3000pin", "c\u200bvv", "cv\u200cv", "cv\u200dv",
		"p\u2060in", "\ufeffcvv", "c\u00advv", "cvv\u200b_number",
		"\uff43\uff56\uff56", "\uff23\uff36\uff36", "card_\uff43\uff56\uff43", "\uff30\uff29\uff2e\uff23\uff4f\uff44\uff45",
		"cvv\u2013number",
		// In mixed case, read also as one folded word.
		"cVV", "cvV", "CVv", "PiN", "pIN", "piN", "CvC", "cVc", "cSc", "CvV2", "cvV2", "cvVNumber",
		"CVVcode", "CARDcvv", "cardVERIFICATIONvalue",
		// Names gateways and other languages use, and a Cyrillic look-alike.
		"cardCode", "card_code", "cv2", "ccv", "cvd", "icvv", "pvv", "4dbc", "cvv_hash", "pinblock_enc",
		"cryptogramme_visuel", "código de seguridad", "Kartenprüfnummer", "セキュリティコード", "\u0441vv",
	}
}

// LookAlikeKeys returns object keys that mention a card code or a PIN but
// name a flag, a counter, an outcome or something else: redact keeps them.
func LookAlikeKeys() []string {
	return []string{
		"cvc_check", "cvcCheck", "cvc_status", "cvc_checked", "cvv_result", "cvvResult", "cvv_present",
		"cvv_match", "cvv_provided", "pin_verified", "pinVerified", "pin_status", "pin_set", "pin_count",
		"pin_enabled", "pin_required", "pin_attempts", "pinAttempts", "pinverified",
		"spin_count", "spin", "pinned", "pins", "PINs", "pinyin", "spinCode", "shipping",
		"cid", "customer_cid", "cid_number", "cid_card",
		"verification", "verification_code", "email_verification_code", "verification_status",
		"card_verification_status", "security", "security_number", "social_security_number",
		"code", "postal_code", "zip_code", "country_code", "number", "card_number", "code_value", "cardno",
		"pin\u00a0verified", "cvc\u200b_check", "\uff50\uff49\uff4e\uff4e\uff45\uff44", "sp\u200bin",
		// Kept however they are cased.
		"spinCount", "PINNED", "Pinned", "SPIN", "pinVERIFIED", "CVCcheck", "cvvRESULT",
		// Code words that need a card word beside them, alone.
		"security_question", "nip", "clave", "senha", "\u9a8c\u8bc1\u7801", "\u5bc6\u7801",
	}
}
