package redact

// The scanner behind PANs and the JSON redaction: runs of digits in any
// script with their separators, the windows of a run that are card numbers,
// and their masking.

import (
	"cmp"
	"slices"
	"unicode"
	"unicode/utf8"
)

// minDigitLead is the smallest first byte of a decimal digit beyond Latin-1
// in UTF-8: the first of them, U+0660 ARABIC-INDIC DIGIT ZERO, is D9 A0.
// Below it only latin1Lead can start a digit (superscripts one to three).
const minDigitLead = 0xD9

// latin1Lead is the first byte of U+0080-U+00BF in UTF-8, which holds the
// superscript digits one, two and three.
const latin1Lead = 0xC2

// mayBeDigit reports whether the byte c can start a digit, so that a byte
// for which it is false is stepped over without decoding a character.
func mayBeDigit(c byte) bool { return c-'0' < 10 || c >= minDigitLead || c == latin1Lead }

// Kinds of characters, for the scanner.
const (
	// kOther ends a run of digit groups: a letter, a number that is not a
	// digit, '*' (a masked digit) or '+' (a separator only between digits,
	// see scanRun).
	kOther = iota
	// kDigit is a digit: a decimal digit of any script (Unicode category
	// Nd) or a digit that NFKC reads as one (see digitValue).
	kDigit
	// kSep is any other character: it may separate digit groups.
	kSep
)

// notDigit returns 0 if the character at t[i] is a digit, or else how far
// to step to the next character that may be one: most bytes are read
// without decoding a character.
func notDigit[T ~string | ~[]byte](t T, i int, json bool) int {
	c := t[i]
	switch {
	case c-'0' < 10:
		return 0
	case json && c == '\\':
		return escLen(t[i+1])
	case !mayBeDigit(c):
		// ASCII, or a byte of a character that is not a digit.
		return 1
	}
	if k, _, w := charAt(t, i, json); k != kDigit {
		return w
	}
	return 0
}

// maxSeps is the most separator characters between two digit groups of a
// card number.
const maxSeps = 4

// charAt returns the kind of the character at t[i], its length in bytes
// and, for a digit, the ASCII digit it stands for. A byte that is not valid
// UTF-8 is a separator of one byte. In JSON mode t is canonical JSON string
// content, and an escape (which stands for '"', '\', a control character or
// a lone surrogate) is one separator.
func charAt[T ~string | ~[]byte](t T, i int, json bool) (kind int, digit byte, width int) {
	c := t[i]
	if c < utf8.RuneSelf {
		switch {
		case c-'0' < 10:
			return kDigit, c, 1
		case json && c == '\\':
			return kSep, 0, escLen(t[i+1])
		case (c|0x20)-'a' < 26, c == '*', c == '+':
			return kOther, 0, 1
		}
		return kSep, 0, 1
	}
	var buf [utf8.UTFMax]byte
	r, w := utf8.DecodeRune(buf[:copy(buf[:], t[i:])])
	if r == utf8.RuneError && w == 1 {
		return kSep, 0, 1
	}
	if d, ok := digitValue(r); ok {
		return kDigit, '0' + d, w
	}
	if unicode.IsLetter(r) || unicode.IsNumber(r) {
		return kOther, 0, w
	}
	return kSep, 0, w
}

// digitValue returns the value of r when r is a digit other than an ASCII
// one: a decimal digit (Unicode category Nd), or one of the other numbers
// (category No) that NFKC turns into a single ASCII digit, the superscript,
// subscript and circled digits. Unicode encodes the decimal digits of each
// script as ten consecutive code points from zero to nine, and the ranges of
// unicode.Nd each start at a zero (TestDigitRanges checks both, and the
// table of the others against NFKC).
func digitValue(r rune) (byte, bool) {
	if r < 0x660 {
		switch r {
		case '\u00b2':
			return 2, true
		case '\u00b3':
			return 3, true
		case '\u00b9':
			return 1, true
		}
		return 0, false
	}
	if r <= 0xFFFF {
		rs := unicode.Nd.R16
		k, _ := slices.BinarySearchFunc(rs, uint16(r), func(rg unicode.Range16, v uint16) int { return cmp.Compare(rg.Hi, v) })
		if k < len(rs) && rune(rs[k].Lo) <= r {
			return byte((r - rune(rs[k].Lo)) % 10), true
		}
		return otherDigit(r)
	}
	rs := unicode.Nd.R32
	k, _ := slices.BinarySearchFunc(rs, uint32(r), func(rg unicode.Range32, v uint32) int { return cmp.Compare(rg.Hi, v) })
	if k < len(rs) && rune(rs[k].Lo) <= r {
		return byte((r - rune(rs[k].Lo)) % 10), true
	}
	return 0, false
}

// otherDigit returns the value of r when r is a number of category No above
// U+065F whose NFKC form is one ASCII digit.
func otherDigit(r rune) (byte, bool) {
	switch {
	case r < 0x2070 || r > 0x24EA:
		return 0, false
	case r == 0x2070: // superscript zero
		return 0, true
	case r >= 0x2074 && r <= 0x2079: // superscript four to nine
		return byte(r - 0x2070), true
	case r >= 0x2080 && r <= 0x2089: // subscript zero to nine
		return byte(r - 0x2080), true
	case r >= 0x2460 && r <= 0x2468: // circled one to nine
		return byte(r - 0x2460 + 1), true
	case r == 0x24EA: // circled zero
		return 0, true
	}
	return 0, false
}

// encodedSep returns 3 when t[j:] starts with the percent-encoding of a
// separator that URLs and form bodies carry between digit groups: %20
// (space), %2D '-', %2E '.', %2F '/' or %5F '_', either case; 0 otherwise.
func encodedSep[T ~string | ~[]byte](t T, j int) int {
	if t[j] != '%' || j+2 >= len(t) {
		return 0
	}
	h, l := t[j+1], t[j+2]|0x20
	switch {
	case h == '2' && (l == '0' || l == 'd' || l == 'e' || l == 'f'), h == '5' && l == 'f':
		return 3
	}
	return 0
}

// group is one run of contiguous digits: t[start:end], n digits.
type group struct{ start, end, n int }

// scan is scratch space for masking, reused between calls, and the counts
// of what masking found (which it adds to and never resets).
type scan struct {
	groups []group
	// cuts are the bytes left over where a multi-byte digit was masked
	// (its first byte became '*'): they are cut once masking is done.
	cuts []span
	// run is the run being judged: its digits as ASCII, and for each
	// its offset and the index of its group.
	run runDigitsBuf
	// wins are the card numbers found in run: digit offsets.
	wins []span

	// pans counts the card numbers masked (every window masked, in
	// every pass of the fixed point).
	pans int
	// tracks counts the track data and EMV card tags dropped whole (see
	// dropTracks).
	tracks int
}

// runDigitsBuf holds the digits of one run.
type runDigitsBuf struct {
	d  []byte    // ASCII digits; '*' once masked in this pass
	at []digitAt // where each digit is
}

// digitAt is where a digit of a run is: its offset, and in the run's
// digits, where its group starts and ends and where the group's first and
// after its last digit that is not '0' are (so that a window's ends are
// judged in constant time).
type digitAt struct {
	pos                   int
	gStart, gEnd, nz, lnz int32
}

// closeGroup fills in the group fields of at[from:], one group's digits
// whose ASCII values are d[from:].
func closeGroup(d []byte, at []digitAt, from int) {
	end := len(d)
	nz, lnz := end, from
	for k := from; k < end; k++ {
		if d[k] != '0' {
			nz = min(nz, k)
			lnz = k + 1
		}
	}
	for k := from; k < end; k++ {
		at[k].gStart, at[k].gEnd, at[k].nz, at[k].lnz = int32(from), int32(end), int32(nz), int32(lnz)
	}
}

// scanRun reads the run of digit groups that starts with the digit at t[i]:
// groups of digits joined by 1 to maxSeps separators (a separator is one
// separator character, one percent-encoded separator, see encodedSep, or a
// '+' right after a digit or another '+'). It
// returns gs[:0] with the groups appended, and the offset just after the
// run's last digit.
func scanRun[T ~string | ~[]byte](t T, i int, json bool, gs []group) ([]group, int) {
	gs = gs[:0]
	for {
		start, n := i, 0
		for i < len(t) {
			if isDigit(t[i]) {
				i++
				n++
				continue
			}
			k, _, w := charAt(t, i, json)
			if k != kDigit {
				break
			}
			i += w
			n++
		}
		gs = append(gs, group{start, i, n})
		j, seps := i, 0
		for seps < maxSeps && j < len(t) {
			if c := t[j]; c == ' ' || c == '-' {
				j++
				seps++
				continue
			}
			if w := encodedSep(t, j); w > 0 {
				j += w
				seps++
				continue
			}
			if t[j] == '+' {
				// A space in a form body when it follows a digit
				// or another '+'; else the sign of what follows (a
				// phone number), which starts a run of its own.
				if j > i && t[j-1] != '+' {
					break
				}
				j++
				seps++
				continue
			}
			k, _, w := charAt(t, j, json)
			if k != kSep {
				break
			}
			j += w
			seps++
		}
		if seps == 0 || j >= len(t) || notDigit(t, j, json) > 0 {
			return gs, i
		}
		i = j
	}
}

// runDigits returns the number of digits in the groups.
func runDigits(gs []group) int {
	n := 0
	for _, g := range gs {
		n += g.n
	}
	return n
}

// load fills r with the digits of the groups gs of t.
func (r *runDigitsBuf) load(t []byte, gs []group, json bool) {
	r.d, r.at = r.d[:0], r.at[:0]
	for _, g := range gs {
		from := len(r.d)
		for k := g.start; k < g.end; {
			c, w := t[k], 1
			if !isDigit(c) {
				_, c, w = charAt(t, k, json)
			}
			r.d = append(r.d, c)
			r.at = append(r.at, digitAt{pos: k})
			k += w
		}
		closeGroup(r.d, r.at, from)
	}
}

// The windows of a run that are card numbers.
//
// A run of digits is read as one digit string d, its groups marking where
// the separators were. Every window d[s:e] of minPAN to maxPAN digits that
// is a card number at its length (a network's prefix, Luhn) is a candidate;
// it is masked when the digits around it explain where it starts and where
// it ends, as a field of a record or a message would:
//
//   - it lies in one group, preceded in it by a two-digit length equal to
//     its length (an ISO 8583 LLVAR field "16" + 16 digits, or "016"),
//     which fixes both its ends; or
//   - its start is explained, being the start of its group, preceded only
//     by zeros in it (zero-padding to a fixed width) or only by a date
//     (YYMM, YYMMDD or YYYYMMDD: a record's date field), and so is its end:
//     the end of its group, followed only by zeros in it (padding on the
//     right), by three or four digits to the end of its group (its card
//     code, or its expiry), or by more digits whose first four read as an
//     expiry date, YYMM or MMYY (month 01-12; a card number and its
//     expiry, track data without its separator).
//
// A window glued to other digits on both sides without such a reason (a
// card number between two other fields of a digit string) is not masked:
// every long run of digits has many windows and about one in ten passes
// Luhn, so a rule taking every window would mask most 20-digit order
// numbers and nanosecond timestamps (see TestWindowFalsePositives for the
// measured rates).

// month reports whether the two digits m read as a month, 01 to 12.
func month(m []byte) bool {
	v := int(m[0]-'0')*10 + int(m[1]-'0')
	return v >= 1 && v <= 12
}

// datePrefix reports whether p, the digits before a window in its group,
// read as a date: YYMM, YYMMDD or YYYYMMDD (month 01-12, day 01-31).
func datePrefix(p []byte) bool {
	day := func(d []byte) bool { v := int(d[0]-'0')*10 + int(d[1]-'0'); return v >= 1 && v <= 31 }
	switch len(p) {
	case 4:
		return month(p[2:4])
	case 6:
		return month(p[2:4]) && day(p[4:6])
	case 8:
		return month(p[4:6]) && day(p[6:8])
	}
	return false
}

// explained reports whether the window r.d[s:e] has explained ends (see
// above).
func (r *runDigitsBuf) explained(s, e int) bool {
	d := r.d
	first, last := r.at[s], r.at[e-1]
	if int(first.gStart) <= s-2 && first.gStart == last.gStart && int(d[s-2]-'0')*10+int(d[s-1]-'0') == e-s {
		return true // a length prefix, and the field in one group
	}
	if int(first.nz) < s && !datePrefix(d[first.gStart:s]) {
		return false // digits other than zeros or a date before it in its group
	}
	switch after := int(last.gEnd) - e; {
	case after == 3 || after == 4:
		return true // followed by a card code or an expiry, to its group's end
	case after > 4 && (month(d[e+2:e+4]) || month(d[e:e+2])):
		return true // followed by an expiry, YYMM or MMYY, and more
	}
	return int(last.lnz) <= e // nothing but zeros after it in its group
}

// eachPAN calls fn(s, e) for every window r.d[s:e] of the run that is a
// card number with explained ends, and stops early when fn returns false.
func (r *runDigitsBuf) eachPAN(fn func(s, e int) bool) {
	d := r.d
	for s := 0; s+minPAN <= len(d); s++ {
		if c := d[s]; c < '1' || c > '9' {
			continue // no network's prefix starts with 0
		}
		lengths := networkLengths(d[s : s+4])
		if lengths == 0 {
			continue
		}
		for e := s + minPAN; e <= len(d) && e-s <= maxPAN; e++ {
			if lengths&(1<<(e-s)) != 0 && luhn(d[s:e]) && r.explained(s, e) && !fn(s, e) {
				return
			}
		}
	}
}

// hasPAN reports whether the run of groups gs of t may hold a card number:
// true when one of its windows is one, or when the run is longer than buf
// can hold (maskText decides then). It does not allocate.
func hasPAN[T ~string | ~[]byte](t T, gs []group, json bool) bool {
	var d [40]byte
	var at [40]digitAt
	n := 0
	for _, g := range gs {
		from := n
		for k := g.start; k < g.end; {
			if n == len(d) {
				return true
			}
			c, w := t[k], 1
			if !isDigit(c) {
				_, c, w = charAt(t, k, json)
			}
			d[n], at[n] = c, digitAt{pos: k}
			n++
			k += w
		}
		closeGroup(d[:n], at[:n], from)
	}
	r := runDigitsBuf{d: d[:n], at: at[:n]}
	found := false
	r.eachPAN(func(int, int) bool { found = true; return false })
	return found
}

// firstPAN returns the offset of the first run in t that may hold a card
// number, or -1; gs is scratch space. In JSON mode t is canonical JSON
// string content.
func firstPAN[T ~string | ~[]byte](t T, json bool, gs []group) int {
	for i := 0; i < len(t); {
		if c := t[i]; !mayBeDigit(c) && (!json || c != '\\') {
			i++ // the common case, without a call
			continue
		}
		if w := notDigit(t, i, json); w > 0 {
			i += w
			continue
		}
		if i > 0 && encodedSep(t, i-1) > 0 {
			i += 2 // the hex digits of an encoded separator
			continue
		}
		var end int
		gs, end = scanRun(t, i, json, gs)
		if phoneRun(t, i, gs) {
			i = end
			continue
		}
		if runDigits(gs) >= minPAN && hasPAN(t, gs, json) {
			return i
		}
		i = end
	}
	return -1
}
