// Package redacttest holds test data for code that must not store or log card
// numbers: a corpus of card numbers of every network, length and shape, and
// strings that look like card numbers but are not.
//
// It is for tests only. It does not import package redact, so that redact's
// own tests can use it and so that its card numbers are built by a second,
// independent implementation of the rules. Everything is deterministic.
package redacttest

import (
	"fmt"
	"strconv"
	"strings"
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
		{"maestro", []string{"50", "56", "69"}, lengths(13, 19)},
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
// glued to letters.
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
				)
			}
		}
	}
	return out
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
		// More than 19 contiguous digits.
		"41111111111111111111", "411111111111111111111111", "12345678901234567890123",
		"x55000055555555590000y",
		// Masked card numbers.
		"411111******1111", "4111 11** **** 1111", "5500 00** **** 5559", "**** **** **** 1111",
		"XXXX-XXXX-XXXX-1111", "411111XXXXXX1111", "3782 82**** *0005",
		// Luhn fails.
		"4111111111111112", "5500005555555550", "378282246310006",
		// Three separators do not join groups.
		"4111   1111 1111 1111", "4111 - 1111 - 1111 - 1111",
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

// JSONInt reports whether s is a JSON integer as redact treats it: digits
// only, no sign, fraction or exponent, and no leading zero (except "0").
func JSONInt(s string) bool {
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
