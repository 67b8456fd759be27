package redact

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Generated tests for card numbers inside runs of digits: random card
// numbers of every network and length, embedded the ways records and
// messages embed them, in random spellings, checked against the oracle
// (remainingPANs); and random look-alikes, whose false-positive rate is
// measured and bounded.

// testNetworks are the issued ranges, written independently of
// networkLengths: a prefix range [lo, hi] of a number of digits, and the
// lengths issued.
var testNetworks = []struct {
	name    string
	lo, hi  int
	lengths []int
}{
	{"visa", 4, 4, []int{13, 16, 19}},
	{"mastercard", 51, 55, []int{16}},
	{"mastercard2", 2221, 2720, []int{16}},
	{"amex", 34, 34, []int{15}},
	{"amex37", 37, 37, []int{15}},
	{"discover", 6011, 6011, []int{16, 17, 18, 19}},
	{"discover644", 644, 649, []int{16, 17, 18, 19}},
	{"discover65", 65, 65, []int{16, 17, 18, 19}},
	{"jcb", 3528, 3589, []int{16, 17, 18, 19}},
	{"unionpay", 62, 62, []int{16, 17, 18, 19}},
	{"diners", 300, 305, []int{14, 15, 16, 17, 18, 19}},
	{"diners36", 36, 36, []int{14, 15, 16, 17, 18, 19}},
	{"diners38", 38, 38, []int{14, 15, 16, 17, 18, 19}},
	{"maestro50", 50, 50, []int{12, 13, 14, 15, 16, 17, 18, 19}},
	{"maestro", 56, 69, []int{12, 13, 14, 15, 16, 17, 18, 19}},
	{"mir", 2200, 2204, []int{16, 17, 18, 19}},
}

// randPAN returns a random card number of a random network and length.
func randPAN(r *rand.Rand) string {
	nw := testNetworks[r.IntN(len(testNetworks))]
	n := nw.lengths[r.IntN(len(nw.lengths))]
	b := []byte(strconv.Itoa(nw.lo + r.IntN(nw.hi-nw.lo+1)))
	for len(b) < n-1 {
		b = append(b, byte('0'+r.IntN(10)))
	}
	// The Luhn check digit, computed from the right.
	sum := 0
	for i := len(b) - 1; i >= 0; i-- {
		v := int(b[i] - '0')
		if (len(b)-1-i)%2 == 0 {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return string(append(b, byte('0'+(10-sum%10)%10)))
}

// randDigits returns n random ASCII digits.
func randDigits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// randExpiry returns a random YYMM.
func randExpiry(r *rand.Rand) string {
	return fmt.Sprintf("%02d%02d", r.IntN(100), 1+r.IntN(12))
}

// embed returns pan inside a run of digits in one of the forms whose ends
// are explained, and a name for it.
func embed(r *rand.Rand, pan string) (string, string) {
	switch r.IntN(7) {
	case 0:
		return strings.Repeat("0", 1+r.IntN(8)) + pan, "zero-padded"
	case 1:
		return pan + strings.Repeat("0", 1+r.IntN(8)), "zero-padded right"
	case 2:
		l := strconv.Itoa(len(pan))
		if r.IntN(2) == 0 {
			l = "0" + l
		}
		return randDigits(r, r.IntN(12)) + l + pan + randDigits(r, r.IntN(24)), "length-prefixed"
	case 3:
		return strings.Repeat("0", r.IntN(3)) + pan + randExpiry(r) + randDigits(r, r.IntN(20)), "expiry after"
	case 4:
		// Random digits around, split off by separators.
		return randDigits(r, 1+r.IntN(20)) + randSep(r) + pan + randSep(r) + randDigits(r, 1+r.IntN(20)), "digits around"
	case 5:
		// Printed in groups.
		var b strings.Builder
		for i := 0; i < len(pan); {
			if i > 0 {
				b.WriteString(randSep(r))
			}
			k := min(len(pan), i+1+r.IntN(6))
			b.WriteString(pan[i:k])
			i = k
		}
		return b.String(), "grouped"
	}
	return pan, "plain"
}

// testSeps are separators between digit groups, URL-encoded ones
// included.
var testSeps = []string{" ", "-", ".", "/", "_", "\u00a0", "\u2013", "\u200b", "\t", "%20", "%2D", "%2e", "%2F", "%5F", "+", "  ", " - ", "%20%20"}

func randSep(r *rand.Rand) string { return testSeps[r.IntN(len(testSeps))] }

// testZeros are the zeros of digit sets: ASCII, full-width,
// Arabic-Indic, Devanagari, mathematical bold.
var testZeros = []rune{'0', '\uff10', '\u0660', '\u0966', '\U0001d7ce'}

// superscripts and subscripts of 0-9 (NFKC reads them as digits).
var (
	superscripts = []rune("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")
	subscripts   = []rune("\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089")
)

// respell writes the ASCII digits of s (but those of a percent-encoded
// separator) in a random script, or each digit in a random one.
func respell(r *rand.Rand, s string) string {
	mode := r.IntN(5)
	zero := testZeros[r.IntN(len(testZeros))]
	var b strings.Builder
	for i, c := range s {
		if c < '0' || c > '9' || i > 0 && s[i-1] == '%' || i > 1 && s[i-2] == '%' {
			b.WriteRune(c) // not a digit, or one of an encoded separator
			continue
		}
		switch mode {
		case 0, 1:
			b.WriteRune(c)
		case 2:
			b.WriteRune(zero + c - '0')
		case 3:
			b.WriteRune(superscripts[c-'0'])
		default:
			switch r.IntN(4) {
			case 0:
				b.WriteRune(subscripts[c-'0'])
			case 1:
				b.WriteRune(testZeros[r.IntN(len(testZeros))] + c - '0')
			default:
				b.WriteRune(c)
			}
		}
	}
	return b.String()
}

// randWords returns random text of lowercase words: no digits.
func randWords(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(" ,;:()"[r.IntN(6)])
		}
		for k := 1 + r.IntN(8); k > 0; k-- {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
	}
	return b.String()
}

// visible returns the digits of s as the oracle reads them, with '*' for a
// star and '.' for any other character that is not a separator: what is
// left to read of a card number once separators are taken out.
func visible(s string) string {
	var b strings.Builder
	for _, t := range oracleTokens(s) {
		switch t.kind {
		case 'd':
			b.WriteByte(t.digit)
		case '*':
			b.WriteByte('*')
		case 'o':
			b.WriteByte('.')
		}
	}
	return b.String()
}

// leaks reports whether the digits of s show more than 10 digits of pan
// at its place anywhere: first 6 and last 4 is the most masking leaves.
func leaks(s, pan string) bool {
	v := visible(s)
	for at := 0; at+len(pan) <= len(v); at++ {
		same := 0
		for k := 0; k < len(pan); k++ {
			if v[at+k] == pan[k] {
				same++
			}
		}
		if same > 10 {
			return true
		}
	}
	return false
}

// TestWindowsProperty embeds random card numbers in random runs of digits
// and text and checks that none is left: no window of the output is a card
// number the oracle finds, the card number's digits are gone, and masking
// again changes nothing.
func TestWindowsProperty(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 33))
	for i := 0; i < 3000; i++ {
		pan := randPAN(r)
		run, form := embed(r, pan)
		in := randWords(r, r.IntN(4)) + " " + respell(r, run) + " " + randWords(r, r.IntN(4))
		out := PANs(in)
		if left := remainingPANs(out); len(left) > 0 {
			t.Fatalf("seed %d: PANs(%q) = %q (%s), still holds %v", seed, in, out, form, left)
		}
		if leaks(out, pan) {
			t.Fatalf("seed %d: PANs(%q) = %q (%s), shows more of %s than its first 6 and last 4", seed, in, out, form, pan)
		}
		if !onlyStars(in, out) {
			t.Fatalf("seed %d: PANs(%q) = %q, changed more than digits", seed, in, out)
		}
		if again := PANs(out); again != out {
			t.Fatalf("seed %d: PANs(%q) = %q, want it unchanged", seed, out, again)
		}
		// The same in a JSON string, and as a JSON number when it is
		// one.
		doc := fmt.Sprintf(`{"v":%q}`, in)
		got, _, err := NewPolicy(nil).JSON([]byte(doc))
		if err != nil {
			t.Fatalf("seed %d: JSON(%s): %v", seed, doc, err)
		}
		if leaks(string(got), pan) {
			t.Fatalf("seed %d: JSON(%s) = %s, still holds %s", seed, doc, got, pan)
		}
		if run[0] != '0' && strings.Trim(run, "0123456789") == "" {
			doc := `{"n":` + run + `}`
			got, _, err := NewPolicy(nil).JSON([]byte(doc))
			if err != nil || strings.Contains(string(got), pan) {
				t.Fatalf("seed %d: JSON(%s) = %s, %v; still holds %s", seed, doc, got, err, pan)
			}
		}
	}
}

// TestWindowsRandomRuns checks random runs of digits against the oracle:
// every window it finds is masked, nothing else is changed.
func TestWindowsRandomRuns(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 34))
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for g := 1 + r.IntN(4); g > 0; g-- {
			if b.Len() > 0 {
				b.WriteString(randSep(r))
			}
			d := randDigits(r, 1+r.IntN(24))
			if r.IntN(4) == 0 {
				d = strings.Repeat("0", r.IntN(4)) + randPAN(r) + randDigits(r, r.IntN(6))
			}
			b.WriteString(d)
		}
		in := respell(r, b.String())
		out := PANs(in)
		if left := remainingPANs(out); len(left) > 0 {
			t.Fatalf("seed %d: PANs(%q) = %q, still holds %v", seed, in, out, left)
		}
		if len(remainingPANs(in)) == 0 && out != in {
			t.Fatalf("seed %d: PANs(%q) = %q, but the oracle finds no card number", seed, in, out)
		}
		if again := PANs(out); again != out {
			t.Fatalf("seed %d: PANs(%q) = %q, want it unchanged", seed, out, again)
		}
	}
}

// TestWindowFalsePositives measures how often look-alikes are masked:
// random runs of 13 to 40 digits, Unix timestamps of 2020-2030 in s, ms, µs
// and ns, 20-digit order numbers, compact ISO date-times. Each rate is
// logged (go test -v) and bounded: a run of random digits is masked about
// as often as a random 13-19-digit number is a card number (2-5%); long
// runs add a few points for the length prefixes they hold by chance.
func TestWindowFalsePositives(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 400
	rate := func(gen func() string) float64 {
		masked := 0
		for i := 0; i < n; i++ {
			if s := gen(); PANs(s) != s {
				masked++
			}
		}
		return float64(masked) / n
	}
	for l := 13; l <= 40; l++ {
		got := rate(func() string { return strconv.Itoa(1+r.IntN(9)) + randDigits(r, l-1) })
		t.Logf("random run of %d digits: %.1f%% masked", l, 100*got)
		if got > 0.15 {
			t.Errorf("random runs of %d digits: %.1f%% masked, want at most 15%%", l, 100*got)
		}
	}
	from, to := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for _, unit := range []struct {
		name string
		mul  int64
		max  float64
	}{{"s", 1, 0}, {"ms", 1e3, 0.01}, {"µs", 1e6, 0.01}, {"ns", 1e9, 0.05}} {
		got := rate(func() string {
			return strconv.FormatInt((from+r.Int64N(to-from))*unit.mul+r.Int64N(unit.mul), 10)
		})
		t.Logf("Unix time in %s: %.1f%% masked", unit.name, 100*got)
		if got > unit.max {
			t.Errorf("Unix time in %s: %.1f%% masked, want at most %.0f%%", unit.name, 100*got, 100*unit.max)
		}
	}
	for _, c := range []struct {
		name string
		gen  func() string
		max  float64
	}{
		{"20-digit order number", func() string { return strconv.Itoa(1+r.IntN(9)) + randDigits(r, 19) }, 0.12},
		{"ORD- and 20 digits", func() string { return "ORD-" + randDigits(r, 20) }, 0.12},
		{"compact ISO date-time with ms", func() string {
			tm := time.Unix(from+r.Int64N(to-from), 0).UTC()
			return tm.Format("20060102150405") + randDigits(r, 3)
		}, 0.02},
		{"date and amount in cents", func() string {
			tm := time.Unix(from+r.Int64N(to-from), 0).UTC()
			return tm.Format("20060102") + fmt.Sprintf("%012d", r.IntN(1e9))
		}, 0.05},
	} {
		got := rate(c.gen)
		t.Logf("%s: %.1f%% masked", c.name, 100*got)
		if got > c.max {
			t.Errorf("%s: %.1f%% masked, want at most %.0f%%", c.name, 100*got, 100*c.max)
		}
	}
}

// FuzzWindows checks masking on digit runs built from the fuzzer's input:
// no window the oracle finds survives and masking is idempotent.
func FuzzWindows(f *testing.F) {
	for _, seed := range []string{
		"0004111111111111111", "164111111111111111", "41111111111111112512", "pan=4111+1111+1111+1111",
		"4111%201111%201111%201111", "\u2074\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9\u00b9",
		"501234567896", "0200164111111111111111000000000000010000", "1705312800123456789",
		"5A084111111111111111", "57134111111111111111D25121010000000000F",
		"%B4111111111111111^DOE/JOHN^25121010000000000000?", ";4111111111111111=25121010000000000?",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := PANs(in)
		if left := remainingPANs(out); len(left) > 0 {
			t.Fatalf("PANs(%q) = %q, still holds %v", in, out, left)
		}
		if again := PANs(out); again != out {
			t.Fatalf("PANs(%q) = %q, want it unchanged", out, again)
		}
		if s, _ := nextTrack(in, 0); s < 0 && !onlyStars(in, out) {
			t.Fatalf("PANs(%q) = %q, changed more than digits", in, out)
		}
	})
}
