package redact

import (
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/cardsync/cardsync/redact/redacttest"
)

func TestIsPAN(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		n      int
		want   bool
	}{
		{"visa 13", "4", 13, true},
		{"visa 14", "4", 14, false},
		{"visa 15", "4", 15, false},
		{"visa 16", "4", 16, true},
		{"visa 17", "4", 17, false},
		{"visa 18", "4", 18, false},
		{"visa 19", "4", 19, true},
		{"mastercard 51", "51", 16, true},
		{"mastercard 55", "55", 16, true},
		{"mastercard 51 at 15", "51", 15, false},
		{"mastercard 55 at 17", "55", 17, false},
		{"mastercard 55 at 19", "55", 19, false},
		{"2220 is no network", "2220", 16, false},
		{"mastercard 2221", "2221", 16, true},
		{"mastercard 2720", "2720", 16, true},
		{"2721 is no network", "2721", 16, false},
		{"mastercard 2221 at 17", "2221", 17, false},
		{"amex 34", "34", 15, true},
		{"amex 37", "37", 15, true},
		{"amex 34 at 16", "34", 16, false},
		{"amex 37 at 14", "37", 14, false},
		{"discover 6011 at 16", "6011", 16, true},
		{"discover 6011 at 19", "6011", 19, true},
		{"discover 644", "644", 16, true},
		{"discover 649", "649", 17, true},
		{"discover 650", "650", 18, true},
		{"jcb 3527 is no network", "3527", 16, false},
		{"jcb 3528", "3528", 16, true},
		{"jcb 3589", "3589", 19, true},
		{"jcb 3590 is no network", "3590", 16, false},
		{"jcb 3528 at 15", "3528", 15, false},
		{"diners 300 at 14", "300", 14, true},
		{"diners 305 at 19", "305", 19, true},
		{"diners 300 at 13", "300", 13, false},
		{"306 is no network", "306", 14, false},
		{"diners 36", "36", 14, true},
		{"diners 38", "38", 16, true},
		{"diners 39", "39", 14, true},
		{"unionpay 62", "62", 16, true},
		{"unionpay 81", "81", 19, true},
		{"unionpay 81 at 15", "81", 15, false},
		{"maestro 50 at 13", "50", 13, true},
		{"maestro 56 at 13", "56", 13, true},
		{"maestro 69 at 19", "69", 19, true},
		// Maestro's 60-69 at 13-19 digits covers every 6 prefix, so
		// Discover and UnionPay have no edge of their own to test.
		{"maestro 6011 at 15", "6011", 15, true},
		{"mir 2200", "2200", 16, true},
		{"mir 2204", "2204", 19, true},
		{"2199 is no network", "2199", 16, false},
		{"2205 is no network", "2205", 16, false},
		{"rupay 82", "82", 16, true},
		{"rupay 82 at 17", "82", 17, false},
		{"troy 9792", "9792", 16, true},
		{"troy 9792 at 15", "9792", 15, false},
		{"9791 is no network", "9791", 16, false},
		{"prefix 1 (timestamps) at 13", "1", 13, false},
		{"prefix 1 at 16", "1", 16, false},
		{"prefix 1 at 19", "1", 19, false},
		{"prefix 0", "0", 16, false},
		{"prefix 7", "7", 16, false},
		{"prefix 80", "80", 16, false},
		{"12 digits", "4", 12, false},
		{"20 digits", "4", 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := redacttest.Number(tt.prefix, tt.n)
			if got := IsPAN(d); got != tt.want {
				t.Errorf("IsPAN(%s) = %v, want %v", d, got, tt.want)
			}
			if !tt.want {
				return
			}
			// Any other check digit fails Luhn.
			last := d[len(d)-1]
			for c := byte('0'); c <= '9'; c++ {
				if c == last {
					continue
				}
				if bad := d[:len(d)-1] + string(c); IsPAN(bad) {
					t.Errorf("IsPAN(%s) = true, want false (Luhn)", bad)
				}
			}
		})
	}
}

func TestIsPANNotDigits(t *testing.T) {
	for _, s := range []string{"", "4111 1111 1111 1111", "4111-1111-1111-1111", "411111******1111", "+4111111111111111", "4111111111111111\n", "٤١١١١١١١١١١١١١١١"} {
		t.Run(s, func(t *testing.T) {
			if IsPAN(s) {
				t.Errorf("IsPAN(%q) = true, want false", s)
			}
		})
	}
}

// panCase is a text of TestPANs and its masked form.
type panCase struct {
	name, in, want string
}

func TestPANs(t *testing.T) {
	tests := panCases()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PANs(tt.in)
			if got != tt.want {
				t.Errorf("PANs(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := PANs(got); again != got {
				t.Errorf("PANs(%q) = %q, want it unchanged", got, again)
			}
		})
	}
}

// panCases are the texts TestPANs masks.
func panCases() []panCase {
	return []panCase{
		{"plain", "4111111111111111", "411111******1111"},
		{"13 digits", "4222222222222", "422222***2222"},
		{"19 digits", "6011000000000000001", "601100*********0001"},
		{"amex", "378282246310005", "378282*****0005"},
		{"space", "4111 1111 1111 1111", "4111 11** **** 1111"},
		{"no-break space", "4111\u00a01111\u00a01111\u00a01111", "4111\u00a011**\u00a0****\u00a01111"},
		{"dash", "4111-1111-1111-1111", "4111-11**-****-1111"},
		{"dot", "4111.1111.1111.1111", "4111.11**.****.1111"},
		{"slash", "4111/1111/1111/1111", "4111/11**/****/1111"},
		{"underscore", "4111_1111_1111_1111", "4111_11**_****_1111"},
		{"two spaces", "4111  1111  1111  1111", "4111  11**  ****  1111"},
		{"dash and space", "4111- 1111- 1111- 1111", "4111- 11**- ****- 1111"},
		{"two no-break spaces", "4111\u00a0\u00a01111 1111 1111", "4111\u00a0\u00a011** **** 1111"},
		{"mixed separators", "4111 1111-1111.1111", "4111 11**-****.1111"},
		{"amex groups", "3782 822463 10005", "3782 82**** *0005"},
		{"three spaces", "4111   1111 1111 1111", "4111   11** **** 1111"},
		{"space dash space", "4111 - 1111 - 1111 - 1111", "4111 - 11** - **** - 1111"},
		{"four spaces", "4111    1111    1111    1111", "4111    11**    ****    1111"},
		{"five spaces do not join", "4111     1111     1111     1111", "4111     1111     1111     1111"},
		{"tab", "4111\t1111\t1111\t1111", "4111\t11**\t****\t1111"},
		{"tabs and spaces", "4111 \t 1111\t\t1111 1111", "4111 \t 11**\t\t**** 1111"},
		{"newline", "4111\n1111\n1111\n1111", "4111\n11**\n****\n1111"},
		{"en dash", "4111\u20131111\u20131111\u20131111", "4111\u201311**\u2013****\u20131111"},
		{"em dash", "4111\u20141111\u20141111\u20141111", "4111\u201411**\u2014****\u20141111"},
		{"zero-width space", "4111\u200b1111\u200b1111\u200b1111", "4111\u200b11**\u200b****\u200b1111"},
		{"zero-width spaces between every digit", "4\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1\u200b1", "4\u200b1\u200b1\u200b1\u200b1\u200b1\u200b*\u200b*\u200b*\u200b*\u200b*\u200b*\u200b1\u200b1\u200b1\u200b1"},
		{"soft hyphen and word joiner", "4111\u00ad1111\u20601111\ufeff1111", "4111\u00ad11**\u2060****\ufeff1111"},
		{"ideographic and thin spaces", "4111\u30001111\u20091111\u202f1111", "4111\u300011**\u2009****\u202f1111"},
		{"no-break space and zero-width space", "4111\u00a0\u200b1111\u00a0\u200b1111\u00a0\u200b1111", "4111\u00a0\u200b11**\u00a0\u200b****\u00a0\u200b1111"},
		{"brackets", "(4111) 1111 [1111] 1111", "(4111) 11** [****] 1111"},
		{"full-width digits", "\uff14\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11", "\uff14\uff11\uff11\uff11\uff11\uff11******\uff11\uff11\uff11\uff11"},
		{"full-width digits and space", "\uff14\uff11\uff11\uff11\u3000\uff11\uff11\uff11\uff11\u3000\uff11\uff11\uff11\uff11\u3000\uff11\uff11\uff11\uff11", "\uff14\uff11\uff11\uff11\u3000\uff11\uff11**\u3000****\u3000\uff11\uff11\uff11\uff11"},
		{"Arabic-Indic digits", "\u0664\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661", "\u0664\u0661\u0661\u0661\u0661\u0661******\u0661\u0661\u0661\u0661"},
		{"extended Arabic-Indic digits", "\u06f5\u06f5\u06f0\u06f0\u06f0\u06f0\u06f5\u06f5\u06f5\u06f5\u06f5\u06f5\u06f5\u06f5\u06f5\u06f9", "\u06f5\u06f5\u06f0\u06f0\u06f0\u06f0******\u06f5\u06f5\u06f5\u06f9"},
		{"Devanagari digits", "\u096a\u0967\u0967\u0967-\u0967\u0967\u0967\u0967-\u0967\u0967\u0967\u0967-\u0967\u0967\u0967\u0967", "\u096a\u0967\u0967\u0967-\u0967\u0967**-****-\u0967\u0967\u0967\u0967"},
		{"mathematical digits", "\U0001d7dc\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9", "\U0001d7dc\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9******\U0001d7d9\U0001d7d9\U0001d7d9\U0001d7d9"},
		{"mixed scripts", "4111 \uff11\uff11\uff11\uff11 \u0661\u0661\u0661\u0661 1111", "4111 \uff11\uff11** **** 1111"},
		{"Arabic-Indic look-alike not luhn", "\u0664\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0662", "\u0664\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0662"},
		// Superscript, subscript and circled digits are digits (NFKC
		// makes them ASCII ones).
		{"superscript digits", "\u2074\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9", "\u2074\u00b9\u00b9\u00b9\u00b9\u00b9******\u00b9\u00b9\u00b9\u00b9"},
		{"subscript digits", "\u2084\u2081\u2081\u2081 \u2081\u2081\u2081\u2081 \u2081\u2081\u2081\u2081 \u2081\u2081\u2081\u2081", "\u2084\u2081\u2081\u2081 \u2081\u2081** **** \u2081\u2081\u2081\u2081"},
		{"circled digits", "\u2463\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460\u2460", "\u2463\u2460\u2460\u2460\u2460\u2460******\u2460\u2460\u2460\u2460"},
		{"letters break a run", "4111 a 1111 1111 1111", "4111 a 1111 1111 1111"},
		{"invalid UTF-8 separates", "4111\xff1111\xfe1111 1111", "4111\xff11**\xfe**** 1111"},
		{"inside text", "paid with 5500005555555559 today", "paid with 550000******5559 today"},
		{"glued to letters", "x4111111111111111y", "x411111******1111y"},
		{"glued grouped", "card:4111-1111-1111-1111;ok", "card:4111-11**-****-1111;ok"},
		{"two cards", "4111111111111111,5500005555555559", "411111******1111,550000******5559"},
		{"literal asterisks around", "**4111111111111111**", "**411111******1111**"},
		{"literal asterisk after", "4111111111111111* x", "411111******1111* x"},
		{"more groups after", "4111 1111 1111 1111 2024", "4111 11** **** 1111 2024"},
		{"more groups before", "2024 4111 1111 1111 1111", "2024 4111 11** **** 1111"},
		{"20-digit group before", "12345678901234567890 4111 1111 1111 1111", "12345678901234567890 4111 11** **** 1111"},
		// A card number inside a longer run of digits is masked when
		// its ends are explained: zero-padding, a length before it, an
		// expiry after it, the edges of the run.
		{"zero-padded", "0004111111111111111", "000411111******1111"},
		{"zero-padded on the right", "4111111111111111000", "411111******1111000"},
		{"ISO 8583 length prefix", "164111111111111111", "16411111******1111"},
		{"length prefix then more fields", "0200164111111111111111000000000000010000", "020016411111******1111000000000000010000"},
		{"followed by its expiry", "41111111111111112512", "411111******11112512"},
		{"followed by its expiry and service code", "4111111111111111251210100000", "411111******1111251210100000"},
		{"12-digit Maestro", "501234567896", "501234**7896"},
		{"URL-encoded spaces", "pan=4111+1111+1111+1111", "pan=4111+11**+****+1111"},
		{"percent-encoded spaces", "4111%201111%201111%201111", "4111%2011**%20****%201111"},
		{"percent-encoded dashes", "4111%2D1111%2d1111%2D1111", "4111%2D11**%2d****%2D1111"},
		{"percent-encoded space before", "pan=%204111111111111111", "pan=%20411111******1111"},
		{"21 contiguous digits, nothing explains the window", "411111111111111199999", "411111111111111199999"}, {"a card number and its card code", "4111111111111111123", "411111******1111123"}, {"a date and a card number", "202501014111111111111111", "20250101411111******1111"},
		{"20 contiguous digits, expiry 11/11 after", "41111111111111111111", "411111******11111111"},
		{"not luhn", "4111111111111112", "4111111111111112"},
		{"12 digits of Visa", "411111111111", "411111111111"},
		{"already masked", "411111******1111", "411111******1111"},
		{"already masked grouped", "4111 11** **** 1111", "4111 11** **** 1111"},
		{"masked then digits", "4111 11** **** 1111 0000000000", "4111 11** **** 1111 0000000000"},
		{"trailing dot", "4111111111111111.", "411111******1111."},
		{"ms timestamp passing luhn", "1705312800009", "1705312800009"},
		// A run after '+' is an international phone number: one whose
		// digits happen to be a card number's (prefix, length and Luhn) is
		// left alone.
		{"phone number with a card number's digits", "+49 1511 2345678", "+49 1511 2345678"},
		{"E.164 phone with a card number's digits", "tel:+4915112345678", "tel:+4915112345678"},
		{"card number after a plus sign and a space", "+ 4111 1111 1111 1111", "+ 4111 11** **** 1111"},
		// A phone number has at most 15 digits (E.164): a run of more after
		// '+' is read like any other.
		{"card number right after a plus sign", "+4111111111111111", "+411111******1111"},
		{"card number glued after a plus sign", "ref+4111111111111111", "ref+411111******1111"},
		{"grouped card number after a plus sign", "+4111 1111 1111 1111", "+4111 11** **** 1111"},
		{"19-digit card number after a plus sign", "+4175909818973270278", "+417590*********0278"},
		{"card number after a phone prefix", "+1234 5678 4111111111111111", "+1234 5678 411111******1111"},
		{"15-digit Amex after a plus sign is a phone number", "+378282246310005", "+378282246310005"},
		{"13-digit Visa after a plus sign is a phone number", "+4222222222222", "+4222222222222"},
		{"empty", "", ""},
		{"no digits", "hello, world", "hello, world"},
	}
}

// TestPANsOverlapping checks that every card number of a run is masked, even
// where two card numbers share groups: no window of the output is one.
func TestPANsOverlapping(t *testing.T) {
	a := redacttest.Number("4", 16)
	b := redacttest.Number("5", 16)
	// Groups a0 a1 a2 a3 b0 b1 b2 b3 hold two cards; so may a2 a3 b0 b1.
	in := strings.Join(redacttest.Groups(a), " ") + " " + strings.Join(redacttest.Groups(b), " ")
	got := PANs(in)
	if left := remainingPANs(got); len(left) > 0 {
		t.Errorf("PANs(%q) = %q, still holds %q", in, got, left)
	}
	for _, d := range []string{a, b} {
		if strings.Contains(strings.ReplaceAll(got, " ", ""), d) {
			t.Errorf("PANs(%q) = %q, still holds %s", in, got, d)
		}
	}
}

// TestPANsLongRun checks a long run of short groups is handled (and fast
// enough not to time out).
func TestPANsLongRun(t *testing.T) {
	in := strings.Repeat("4 ", 100000) + "4111111111111111"
	got := PANs(in)
	if left := remainingPANs(got); len(left) > 0 {
		t.Errorf("still holds %q", left)
	}
}

func TestPANsZeroAllocs(t *testing.T) {
	text := "card crd_8f3a2b1c9d declined at 2024-01-15T10:00:00Z (ref ORD-2024-000123456789)"
	if n := testing.AllocsPerRun(100, func() { PANs(text) }); n != 0 {
		t.Errorf("PANs allocates %v times on text without a card number, want 0", n)
	}
}

// TestDigitRanges checks what digitValue relies on: every range of
// unicode.Nd above ASCII has stride 1 and holds whole sets of ten digits, so
// each starts at a zero.
func TestDigitRanges(t *testing.T) {
	check := func(lo, hi, stride uint32) {
		if lo < 0x80 {
			return
		}
		if stride != 1 || (hi-lo+1)%10 != 0 {
			t.Errorf("unicode.Nd range %U-%U stride %d: not whole sets of ten digits", lo, hi, stride)
		}
	}
	for _, r := range unicode.Nd.R16 {
		check(uint32(r.Lo), uint32(r.Hi), uint32(r.Stride))
	}
	for _, r := range unicode.Nd.R32 {
		check(r.Lo, r.Hi, r.Stride)
	}
	for _, tt := range []struct {
		r    rune
		want byte
	}{
		{'\u0660', 0}, {'\u0669', 9}, {'\u06f4', 4}, {'\u096d', 7}, {'\uff10', 0}, {'\uff19', 9},
		{'\U0001d7ce', 0}, {'\U0001d7d7', 9}, {'\U0001d7d8', 0}, {'\U0001d7ff', 9},
	} {
		if got, ok := digitValue(tt.r); !ok || got != tt.want {
			t.Errorf("digitValue(%U) = %d, %v; want %d, true", tt.r, got, ok, tt.want)
		}
	}
	for _, r := range []rune{'0', '9', 'a', '\u2474', '\u2488', '\u2163', '\u065f', '\u066a', '\uff1a', '\U0010ffff'} {
		if _, ok := digitValue(r); ok {
			t.Errorf("digitValue(%U) is a digit", r)
		}
	}
	// Every Nd digit is one, with the value its place in its set of ten
	// gives, and so is every other number whose NFKC form is one ASCII
	// digit, with that value.
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		v, ok := digitValue(r)
		want := unicode.Is(unicode.Nd, r)
		if f := norm.NFKC.String(string(r)); !want && unicode.IsNumber(r) && len(f) == 1 && f[0] >= '0' && f[0] <= '9' {
			want = true
			if ok && v != f[0]-'0' {
				t.Errorf("digitValue(%U) = %d, NFKC says %s", r, v, f)
			}
		}
		if ok != want {
			t.Fatalf("digitValue(%U) ok = %v, want %v", r, ok, want)
		}
	}
}
