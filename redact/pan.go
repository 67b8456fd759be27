package redact

// Card numbers have 12 (Maestro) to 19 digits.
const (
	minPAN = 12
	maxPAN = 19
)

// Masks of valid lengths: bit n is set when a card number may have n digits.
const (
	len12     = 1 << 12
	len13     = 1 << 13
	len14     = 1 << 14
	len15     = 1 << 15
	len16     = 1 << 16
	len19     = 1 << 19
	len13to19 = 1<<13 | 1<<14 | 1<<15 | 1<<16 | 1<<17 | 1<<18 | 1<<19
	len14to19 = len13to19 &^ len13
	len16to19 = len14to19 &^ (len14 | len15)
	len12to19 = len13to19 | len12
)

// IsPAN reports whether digits, a string of ASCII digits and nothing else, is
// a full card number: 12 to 19 digits, a valid Luhn check digit, and a prefix
// issued to a card network at a length valid for it:
//
//	Visa        4                      13, 16, 19
//	Mastercard  51-55, 2221-2720       16
//	Amex        34, 37                 15
//	Discover    6011, 644-649, 65      16-19
//	JCB         3528-3589              16-19
//	Diners      300-305, 36, 38-39     14-19
//	UnionPay    62, 81                 16-19
//	Maestro     50, 56-69              12-19
//	Mir         2200-2204              16-19
//	RuPay       82                     16
//	Troy        9792                   16
//
// Where networks overlap, a number is a card number if any of them accepts it.
// Prefix 1 belongs to no network, which keeps millisecond, microsecond and
// nanosecond Unix timestamps (and today's snowflake ids) out.
func IsPAN(digits string) bool {
	n := len(digits)
	if n < minPAN || n > maxPAN {
		return false
	}
	var d [maxPAN]byte
	return isPANDigits(d[:copy(d[:], digits)])
}

// isPANDigits is IsPAN for bytes.
func isPANDigits(d []byte) bool {
	n := len(d)
	if n < minPAN || n > maxPAN {
		return false
	}
	for _, c := range d {
		if !isDigit(c) {
			return false
		}
	}
	return networkLengths(d[:4])&(1<<n) != 0 && luhn(d)
}

// networkLengths returns the mask of lengths (bit n for n digits) at which
// some network issues card numbers that start with the 4 digits in p.
func networkLengths(p []byte) uint32 {
	_ = p[3]
	d1 := int(p[0] - '0')
	d2 := d1*10 + int(p[1]-'0')
	d3 := d2*10 + int(p[2]-'0')
	d4 := d3*10 + int(p[3]-'0')
	var m uint32
	switch d1 {
	case 2:
		if d4 >= 2221 && d4 <= 2720 { // Mastercard 2-series
			m |= len16
		}
		if d4 >= 2200 && d4 <= 2204 { // Mir
			m |= len16to19
		}
	case 3:
		if d2 == 34 || d2 == 37 { // Amex
			m |= len15
		}
		if d4 >= 3528 && d4 <= 3589 { // JCB
			m |= len16to19
		}
		if d3 >= 300 && d3 <= 305 || d2 == 36 || d2 == 38 || d2 == 39 { // Diners
			m |= len14to19
		}
	case 4: // Visa
		m |= len13 | len16 | len19
	case 5:
		if d2 >= 51 && d2 <= 55 { // Mastercard
			m |= len16
		}
		if d2 == 50 || d2 >= 56 { // Maestro
			m |= len12to19
		}
	case 6:
		// Maestro's 60-69 at 12-19 digits covers Discover (6011, 644-649,
		// 65) and UnionPay (62) at 16-19.
		m |= len12to19
	case 8:
		if d2 == 81 { // UnionPay
			m |= len16to19
		}
		if d2 == 82 { // RuPay
			m |= len16
		}
	case 9:
		if d4 == 9792 { // Troy
			m |= len16
		}
	}
	return m
}

// luhn reports whether the ASCII digits in d pass the Luhn check.
func luhn(d []byte) bool { return luhnSum(d, false)%10 == 0 }

// LuhnCheckDigit returns the Luhn check digit that completes the ASCII
// digits d (the simulator makes its card numbers with it).
func LuhnCheckDigit(d []byte) byte { return byte('0' + (10-luhnSum(d, true)%10)%10) }

// luhnSum is the Luhn sum of the ASCII digits d from the right, doubling
// the rightmost digit when double is true (a number still missing its
// check digit).
func luhnSum(d []byte, double bool) int {
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum
}

// PANs returns s with every card number in it masked and its track data
// and EMV card tags dropped. It returns s itself when there is nothing to
// mask.
//
// A digit is a decimal digit of any script (Unicode Nd) or a superscript,
// subscript or circled digit (what NFKC turns into one ASCII digit). A run
// is digit groups joined by 1 to 4 separators: characters that are neither
// letters nor numbers nor '*', the percent-encoded %20 %2D %2E %2F %5F, and
// '+' right after a digit or another '+' (a form body's space). Every window
// of 12 to 19 digits of a run that passes Luhn and a network's prefix at
// its length (IsPAN) is masked, wherever it starts, when its ends are
// explained (see eachPAN): it fills its groups, or is zero-padded, or
// follows a two-digit length equal to its own, or is followed by an expiry
// YYMM. Masking keeps a window's first 6 and last 4 digits. Track 1, track
// 2 and EMV tags 5A and 57 become '*' whole (see dropTracks).
func PANs(s string) string {
	out, _ := maskString(s)
	return out
}

// maskString is PANs that also reports whether it masked anything.
func maskString(s string) (string, bool) {
	if countDigits(s) < minPAN {
		return s, false
	}
	var arr [32]group
	at := firstPAN(s, false, arr[:0])
	if tr, _ := nextTrack(s, 0); tr >= 0 && (at < 0 || tr < at) {
		at = tr
	}
	if at < 0 {
		return s, false
	}
	// Masking allocates the result anyway; its scratch space is not
	// arr, which would then live on the heap on every call.
	b := []byte(s)
	// The scratch space of a short text, in one allocation.
	var bufs struct {
		gs   [16]group
		d    [32]byte
		ats  [32]digitAt
		wins [4]span
	}
	sc := scan{groups: bufs.gs[:0], run: runDigitsBuf{d: bufs.d[:0], at: bufs.ats[:0]}, wins: bufs.wins[:0]}
	n, changed := maskText(b[at:], false, &sc)
	if !changed {
		return s, false
	}
	return string(b[:at+n]), true
}

// countDigits counts the digits of t, of any script.
func countDigits[T ~string | ~[]byte](t T) int {
	n := 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c-'0' < 10:
			n++
		case mayBeDigit(c):
			if k, _, _ := charAt(t, i, false); k == kDigit {
				n++
			}
		}
	}
	return n
}

func isDigit(c byte) bool { return c-'0' < 10 }
