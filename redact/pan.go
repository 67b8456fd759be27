package redact

// Card numbers have 13 to 19 digits.
const (
	minPAN = 13
	maxPAN = 19
)

// Masks of valid lengths: bit n is set when a card number may have n digits.
const (
	len13     = 1 << 13
	len14     = 1 << 14
	len15     = 1 << 15
	len16     = 1 << 16
	len19     = 1 << 19
	len13to19 = 1<<13 | 1<<14 | 1<<15 | 1<<16 | 1<<17 | 1<<18 | 1<<19
	len14to19 = len13to19 &^ len13
	len16to19 = len14to19 &^ (len14 | len15)
)

// IsPAN reports whether digits, a string of ASCII digits and nothing else, is
// a full card number: 13 to 19 digits, a valid Luhn check digit, and a prefix
// issued to a card network at a length valid for it:
//
//	Visa        4                      13, 16, 19
//	Mastercard  51-55, 2221-2720       16
//	Amex        34, 37                 15
//	Discover    6011, 644-649, 65      16-19
//	JCB         3528-3589              16-19
//	Diners      300-305, 36, 38-39     14-19
//	UnionPay    62, 81                 16-19
//	Maestro     50, 56-69              13-19
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
	for i := 0; i < n; i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return false
		}
		d[i] = c
	}
	return networkLengths(d[:4])&(1<<n) != 0 && luhn(d[:n])
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
			m |= len13to19
		}
	case 6:
		// Maestro's 60-69 at 13-19 digits covers Discover (6011, 644-649,
		// 65) and UnionPay (62) at 16-19.
		m |= len13to19
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

// PANs returns s with every card number in it masked (see the package
// documentation). It returns s itself when there is nothing to mask.
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
	gs := arr[:0]
	var at int
	if gs, at = firstPAN(s, false, gs); at < 0 {
		return s, false
	}
	b := []byte(s)
	maskText(b[at:], false, gs)
	return string(b), true
}

func countDigits[T ~string | ~[]byte](t T) int {
	n := 0
	for i := 0; i < len(t); i++ {
		if t[i]-'0' < 10 {
			n++
		}
	}
	return n
}

func isDigit(c byte) bool { return c-'0' < 10 }

// group is one run of contiguous digits: t[start:end].
type group struct{ start, end int }

// sepWidth returns the byte length of the separator character at t[j] (1, or
// 2 for a UTF-8 no-break space), or 0 if t[j] is not a separator.
func sepWidth[T ~string | ~[]byte](t T, j int) int {
	switch t[j] {
	case ' ', '-', '.', '/', '_':
		return 1
	case 0xC2:
		if j+1 < len(t) && t[j+1] == 0xA0 {
			return 2
		}
	}
	return 0
}

// scanRun reads the run of digit groups that starts with the digit at t[i]:
// groups of digits joined by one or two separator characters. It returns
// gs[:0] with the groups appended, and the offset just after the run's last
// digit.
func scanRun[T ~string | ~[]byte](t T, i int, gs []group) ([]group, int) {
	gs = gs[:0]
	for {
		start := i
		for i < len(t) && isDigit(t[i]) {
			i++
		}
		gs = append(gs, group{start, i})
		j, seps := i, 0
		for seps < 2 && j < len(t) {
			w := sepWidth(t, j)
			if w == 0 {
				break
			}
			j += w
			seps++
		}
		if seps == 0 || j >= len(t) || !isDigit(t[j]) {
			return gs, i
		}
		i = j
	}
}

// runDigits returns the number of digits in the groups.
func runDigits(gs []group) int {
	n := 0
	for _, g := range gs {
		n += g.end - g.start
	}
	return n
}

// eachPAN calls fn(from, to, n) for every group-aligned window
// gs[from..to] (inclusive) of the run whose n digits are a card number, and
// stops early when fn returns false.
func eachPAN[T ~string | ~[]byte](t T, gs []group, fn func(from, to, n int) bool) {
	var d [maxPAN]byte
windows:
	for from := range gs {
		n := 0
		var lengths uint32
		for to := from; to < len(gs); to++ {
			g := gs[to]
			if n+g.end-g.start > maxPAN {
				break
			}
			for k := g.start; k < g.end; k++ {
				if !isDigit(t[k]) {
					// Masked by an earlier window of this pass: the
					// next pass judges what is left.
					continue windows
				}
				d[n] = t[k]
				n++
			}
			if n < minPAN {
				continue
			}
			if lengths == 0 {
				if lengths = networkLengths(d[:4]); lengths == 0 {
					break // no window from here has a network's prefix
				}
			}
			if lengths&(1<<n) != 0 && luhn(d[:n]) && !fn(from, to, n) {
				return
			}
		}
	}
}

// firstPAN returns the offset of the first run in t that holds a card
// number, or -1. In JSON mode t is canonical JSON string content and
// backslash escapes are skipped.
func firstPAN[T ~string | ~[]byte](t T, json bool, gs []group) ([]group, int) {
	for i := 0; i < len(t); {
		c := t[i]
		if json && c == '\\' {
			i += escLen(t[i+1])
			continue
		}
		if !isDigit(c) {
			i++
			continue
		}
		var end int
		gs, end = scanRun(t, i, gs)
		if phoneRun(t, i) {
			i = end
			continue
		}
		if runDigits(gs) >= minPAN {
			found := false
			eachPAN(t, gs, func(int, int, int) bool { found = true; return false })
			if found {
				return gs, i
			}
		}
		i = end
	}
	return gs, -1
}

// phoneRun reports whether the run of digits starting at t[i] follows a
// '+': an international phone number ("+49 1511 2345678"), which can have
// a card number's prefix, length and Luhn digit by chance but is never
// written so as a card number. Such a run is left as it is.
func phoneRun[T ~string | ~[]byte](t T, i int) bool { return i > 0 && t[i-1] == '+' }

// escLen returns the length of a canonical JSON escape whose second byte is
// c: \uXXXX or a two-byte escape.
func escLen(c byte) int {
	if c == 'u' {
		return 6
	}
	return 2
}

// maskText masks every card number in b in place and reports whether it
// changed anything; gs is scratch space, returned for reuse. In JSON mode b is canonical JSON string content and
// backslash escapes are skipped (they stand for characters that are neither
// digits nor separators).
func maskText(b []byte, json bool, gs []group) ([]group, bool) {
	changed := false
	for i := 0; i < len(b); {
		c := b[i]
		if json && c == '\\' {
			i += escLen(b[i+1])
			continue
		}
		if !isDigit(c) {
			i++
			continue
		}
		var end int
		gs, end = scanRun(b, i, gs)
		if phoneRun(b, i) {
			i = end
			continue
		}
		if runDigits(gs) >= minPAN {
			var masked bool
			if gs, masked = maskRegion(b[:end], i, gs); masked {
				changed = true
			}
		}
		i = end
	}
	return gs, changed
}

// reach bounds how far, in bytes, a card number can reach from one end to
// the other: 19 digits with up to two separators of up to two bytes between
// each two.
const reach = maxPAN + (maxPAN-1)*4

// maskRegion masks the card numbers of the run b[start:].
//
// Masking one window writes '*' into its groups, which splits them; the
// digits left next to the stars can form a new card number with their
// neighbours. So after each pass the part of the run that the stars can
// have changed is scanned again, until a pass masks nothing: the result is a
// fixed point, which is what makes masking idempotent. A new card number
// must contain a digit next to a star written by the last pass, so it lies
// within reach of the windows that pass masked.
func maskRegion(b []byte, start int, gs []group) ([]group, bool) {
	masked := false
	from, to := start, len(b)
	for {
		lo, hi := len(b), -1
		for i := from; i < to; {
			if !isDigit(b[i]) {
				i++
				continue
			}
			var end int
			gs, end = scanRun(b[:to], i, gs)
			if phoneRun(b, i) {
				i = end
				continue
			}
			if runDigits(gs) >= minPAN {
				eachPAN(b, gs, func(first, last, n int) bool {
					maskWindow(b, gs[first:last+1], n)
					lo = min(lo, gs[first].start)
					hi = max(hi, gs[last].end)
					return true
				})
			}
			i = end
		}
		if hi < 0 {
			return gs, masked
		}
		masked = true
		// Scan again from the first group that starts within reach
		// before the masked windows (a group starts after a non-digit,
		// so groups stay aligned) to the end of the group within reach
		// after them.
		from = max(start, lo-reach)
		for from > start && from < len(b) && isDigit(b[from]) && isDigit(b[from-1]) {
			from++
		}
		to = min(len(b), hi+reach)
		for to < len(b) && isDigit(b[to]) {
			to++
		}
	}
}

// maskWindow writes '*' over the digits of the window gs (n digits) except
// its first 6 and last 4.
func maskWindow(b []byte, gs []group, n int) {
	k := 0
	for _, g := range gs {
		for p := g.start; p < g.end; p++ {
			if k >= 6 && k < n-4 {
				b[p] = '*'
			}
			k++
		}
	}
}
