package redact

// The scanner behind PANs and the JSON redaction: runs of digits in any
// script with their separators, and the masking of the card numbers in them.

import (
	"cmp"
	"slices"
	"unicode"
	"unicode/utf8"
)

// minDigitLead is the smallest first byte of a non-ASCII decimal digit in
// UTF-8: the first of them, U+0660 ARABIC-INDIC DIGIT ZERO, is D9 A0.
const minDigitLead = 0xD9

// Kinds of characters, for the scanner.
const (
	// kOther ends a run of digit groups: a letter, a number that is not a
	// decimal digit, '*' (a masked digit) or '+' (see phoneRun).
	kOther = iota
	// kDigit is a decimal digit of any script (Unicode category Nd).
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
	case c < minDigitLead:
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

// digitValue returns the value of r when r is a decimal digit (Unicode
// category Nd) other than an ASCII one. Unicode encodes the digits of each
// script as ten consecutive code points from zero to nine, and the ranges
// of unicode.Nd each start at a zero (TestDigitRanges checks both).
func digitValue(r rune) (byte, bool) {
	if r < 0x660 {
		return 0, false
	}
	if r <= 0xFFFF {
		rs := unicode.Nd.R16
		k, _ := slices.BinarySearchFunc(rs, uint16(r), func(rg unicode.Range16, v uint16) int { return cmp.Compare(rg.Hi, v) })
		if k < len(rs) && rune(rs[k].Lo) <= r {
			return byte((r - rune(rs[k].Lo)) % 10), true
		}
		return 0, false
	}
	rs := unicode.Nd.R32
	k, _ := slices.BinarySearchFunc(rs, uint32(r), func(rg unicode.Range32, v uint32) int { return cmp.Compare(rg.Hi, v) })
	if k < len(rs) && rune(rs[k].Lo) <= r {
		return byte((r - rune(rs[k].Lo)) % 10), true
	}
	return 0, false
}

// group is one run of contiguous digits: t[start:end], n digits.
type group struct{ start, end, n int }

// scan is scratch space for masking, reused between calls.
type scan struct {
	groups []group
	// cuts are the bytes left over where a multi-byte digit was masked
	// (its first byte became '*'): they are cut once masking is done.
	cuts []span
}

// scanRun reads the run of digit groups that starts with the digit at t[i]:
// groups of digits joined by 1 to maxSeps separator characters. It returns
// gs[:0] with the groups appended, and the offset just after the run's last
// digit.
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
			if n+g.n > maxPAN {
				break
			}
			for k := g.start; k < g.end; {
				if c := t[k]; isDigit(c) {
					d[n] = c
					n++
					k++
					continue
				}
				kind, digit, w := charAt(t, k, false)
				if kind != kDigit {
					// Masked by an earlier window of this pass: the
					// next pass judges what is left.
					continue windows
				}
				d[n] = digit
				n++
				k += w
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
// number, or -1; gs is scratch space. In JSON mode t is canonical JSON
// string content.
func firstPAN[T ~string | ~[]byte](t T, json bool, gs []group) int {
	for i := 0; i < len(t); {
		if c := t[i]; c-'0' >= 10 && c < minDigitLead && (!json || c != '\\') {
			i++ // the common case, without a call
			continue
		}
		if w := notDigit(t, i, json); w > 0 {
			i += w
			continue
		}
		var end int
		gs, end = scanRun(t, i, json, gs)
		if phoneRun(t, i, gs) {
			i = end
			continue
		}
		if runDigits(gs) >= minPAN {
			found := false
			eachPAN(t, gs, func(int, int, int) bool { found = true; return false })
			if found {
				return i
			}
		}
		i = end
	}
	return -1
}

// maxPhone is the most digits of an international (E.164) phone number.
const maxPhone = 15

// phoneRun reports whether the run of digits starting at t[i], whose groups
// are gs, follows a '+' and has at most maxPhone digits: an international
// phone number ("+49 1511 2345678"), which can have a card number's prefix,
// length and Luhn digit by chance but is never written so as a card number.
// Such a run is left as it is. A run of more digits after a '+' is no phone
// number ("+4111111111111111" is a card number).
func phoneRun[T ~string | ~[]byte](t T, i int, gs []group) bool {
	return i > 0 && t[i-1] == '+' && runDigits(gs) <= maxPhone
}

// escLen returns the length of a canonical JSON escape whose second byte is
// c: \uXXXX or a two-byte escape.
func escLen(c byte) int {
	if c == 'u' {
		return 6
	}
	return 2
}

// maskText masks every card number in b and reports the new length of b
// (b[:n] holds the result: a masked digit of several bytes becomes one '*')
// and whether it changed anything; sc is scratch space. In JSON mode b is
// canonical JSON string content.
func maskText(b []byte, json bool, sc *scan) (n int, changed bool) {
	sc.cuts = sc.cuts[:0]
	for i := 0; i < len(b); {
		if c := b[i]; c-'0' >= 10 && c < minDigitLead && (!json || c != '\\') {
			i++ // the common case, without a call
			continue
		}
		if w := notDigit(b, i, json); w > 0 {
			i += w
			continue
		}
		var end int
		sc.groups, end = scanRun(b, i, json, sc.groups)
		if phoneRun(b, i, sc.groups) {
			i = end
			continue
		}
		if runDigits(sc.groups) >= minPAN && maskRegion(b[:end], i, json, sc) {
			changed = true
		}
		i = end
	}
	if len(sc.cuts) == 0 {
		return len(b), changed
	}
	slices.SortFunc(sc.cuts, func(a, b span) int { return a.start - b.start })
	n, last := 0, 0
	for _, c := range sc.cuts {
		n += copy(b[n:], b[last:c.start])
		last = c.end
	}
	n += copy(b[n:], b[last:])
	return n, changed
}

// reach bounds how far, in bytes, a card number can reach from one end to
// the other: 19 digits of up to 4 bytes with up to maxSeps separators of up
// to 6 bytes (a JSON \u escape) between each two.
const reach = maxPAN*utf8.UTFMax + (maxPAN-1)*maxSeps*6

// maskRegion masks the card numbers of the run b[start:] and reports
// whether it masked any.
//
// Masking one window writes '*' into its groups, which splits them; the
// digits left next to the stars can form a new card number with their
// neighbours. So after each pass the part of the run that the stars can
// have changed is scanned again, until a pass masks nothing: the result is a
// fixed point, which is what makes masking idempotent. A new card number
// must contain a digit next to a star written by the last pass, so it lies
// within reach of the windows that pass masked.
func maskRegion(b []byte, start int, json bool, sc *scan) bool {
	masked := false
	from, to := start, len(b)
	for {
		lo, hi := len(b), -1
		for i := from; i < to; {
			if c := b[i]; c-'0' >= 10 && c < minDigitLead && (!json || c != '\\') {
				i++
				continue
			}
			if w := notDigit(b, i, json); w > 0 {
				i += w
				continue
			}
			var end int
			sc.groups, end = scanRun(b[:to], i, json, sc.groups)
			if phoneRun(b, i, sc.groups) {
				i = end
				continue
			}
			if runDigits(sc.groups) >= minPAN {
				gs := sc.groups
				eachPAN(b, gs, func(first, last, n int) bool {
					sc.cuts = maskWindow(b, gs[first:last+1], n, sc.cuts)
					lo = min(lo, gs[first].start)
					hi = max(hi, gs[last].end)
					return true
				})
			}
			i = end
		}
		if hi < 0 {
			return masked
		}
		masked = true
		// Scan again from the first group that starts within reach
		// before the masked windows to the end of the group within
		// reach after them. Characters are stepped over from the start
		// of the run (a JSON escape or a multi-byte character cannot be
		// entered in the middle), and a group is never entered in the
		// middle, so groups stay aligned.
		from = skipTo(b, start, lo-reach, json)
		to = skipTo(b, hi, hi+reach, json)
	}
}

// skipTo steps over the characters of b from i, a character boundary
// outside a digit group, to the first offset at or after at that is not in
// the middle of a digit group, or len(b).
func skipTo(b []byte, i, at int, json bool) int {
	prev := kOther
	for i < len(b) {
		k, w := kOther, 1
		if c := b[i]; c < utf8.RuneSelf && (!json || c != '\\') {
			switch {
			case isDigit(c):
				k = kDigit
			case (c|0x20)-'a' >= 26 && c != '*' && c != '+':
				k = kSep
			}
		} else {
			k, _, w = charAt(b, i, json)
		}
		if i >= at && (prev != kDigit || k != kDigit) {
			return i
		}
		prev = k
		i += w
	}
	return len(b)
}

// maskWindow writes '*' over the digits of the window gs (n digits) except
// its first 6 and last 4, and returns cuts with the leftover bytes of the
// multi-byte digits it masked appended.
func maskWindow(b []byte, gs []group, n int, cuts []span) []span {
	k := 0
	for _, g := range gs {
		for p := g.start; p < g.end; {
			_, _, w := charAt(b, p, false)
			if k >= 6 && k < n-4 {
				b[p] = '*'
				if w > 1 {
					cuts = append(cuts, span{p + 1, p + w})
				}
			}
			k++
			p += w
		}
	}
	return cuts
}
