package redact

import (
	"slices"
)

// maxPhone is the most digits of an international (E.164) phone number.
const maxPhone = 15

// phoneRun reports whether the run of digits starting at t[i], whose groups
// are gs, follows a '+' and has at most maxPhone digits: an international
// phone number ("+49 1511 2345678"), which can have a card number's prefix,
// length and Luhn digit by chance but is never written so as a card number.
// Such a run is left as it is. A run of more digits after a '+' is no phone
// number ("+4111111111111111" is a card number). A '+' between two digit
// groups is a separator (a space in a form body: "4111+1111+1111+1111").
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

// maskText drops the track data and EMV card tags of b (see dropTracks) and
// masks every card number left in it, and reports the new length of b (b[:n]
// holds the result: a masked digit of several bytes becomes one '*') and
// whether it changed anything; sc is scratch space, and its counts grow by
// what was found. In JSON mode b is canonical JSON string content.
func maskText(b []byte, json bool, sc *scan) (n int, changed bool) {
	sc.cuts = sc.cuts[:0]
	if k := dropTracks(b, json); k > 0 {
		sc.tracks += k
		changed = true
	}
	for i := 0; i < len(b); {
		if c := b[i]; !mayBeDigit(c) && (!json || c != '\\') {
			i++ // the common case, without a call
			continue
		}
		if w := notDigit(b, i, json); w > 0 {
			i += w
			continue
		}
		if i > 0 && encodedSep(b, i-1) > 0 {
			i += 2 // the hex digits of an encoded separator
			continue
		}
		var end int
		sc.groups, end = scanRun(b, i, json, sc.groups)
		if phoneRun(b, i, sc.groups) {
			i = end
			continue
		}
		if runDigits(sc.groups) >= minPAN && maskRegion(b, i, end, json, sc) {
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

// maskRegion masks the card numbers of the run b[start:end] and reports
// whether it masked any.
//
// Masking one window writes '*' into it, which splits its group; the
// digits left next to the stars, now at the edge of a group, can be a card
// number with explained ends. So after each pass the runs of b[start:end]
// are judged again, until a pass masks nothing: the result is a fixed point,
// which is what makes masking idempotent.
func maskRegion(b []byte, start, end int, json bool, sc *scan) bool {
	masked := false
	first := true
	for {
		hit := false
		for i := start; i < end; {
			if c := b[i]; !mayBeDigit(c) && (!json || c != '\\') {
				i++
				continue
			}
			if w := notDigit(b, i, json); w > 0 {
				i += w
				continue
			}
			if i > 0 && encodedSep(b, i-1) > 0 {
				i += 2
				continue
			}
			var runEnd int
			if first {
				runEnd = end // the groups scanned by the caller
				first = false
			} else {
				sc.groups, runEnd = scanRun(b[:end], i, json, sc.groups)
				if phoneRun(b, i, sc.groups) || runDigits(sc.groups) < minPAN {
					i = runEnd
					continue
				}
			}
			// Every card number of the run is found before any is
			// masked, and each loses its own middle: where two
			// overlap, neither keeps more than its first 6 and last
			// 4 digits.
			sc.run.load(b, sc.groups, json)
			sc.wins = sc.wins[:0]
			sc.run.eachPAN(func(s, e int) bool {
				sc.wins = append(sc.wins, span{s, e})
				return true
			})
			for _, w := range sc.wins {
				sc.cuts = maskWindow(b, &sc.run, w.start, w.end, json, sc.cuts)
			}
			sc.pans += len(sc.wins)
			hit = hit || len(sc.wins) > 0
			i = runEnd
		}
		if !hit {
			return masked
		}
		masked = true
	}
}

// maskWindow writes '*' over the digits of the window r.d[s:e] of b except
// its first 6 and last 4 (but those already masked), marks them in r.d, and
// returns cuts with the
// leftover bytes of the multi-byte digits it masked appended.
func maskWindow(b []byte, r *runDigitsBuf, s, e int, json bool, cuts []span) []span {
	for k := s + 6; k < e-4; k++ {
		if r.d[k] == '*' {
			continue // masked for another window
		}
		p := r.at[k].pos
		_, _, w := charAt(b, p, json)
		b[p] = '*'
		if w > 1 {
			cuts = append(cuts, span{p + 1, p + w})
		}
		r.d[k] = '*'
	}
	return cuts
}
