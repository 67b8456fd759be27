package redact

// The fast test of secretKey: the first letters of the words that mark the
// code entries of the vocabulary, which most ASCII keys do not have.

// startWord picks the word of an entry whose first letters mark it in the
// fast test of secretKey: a code word rather than a card or value word
// ("card code" is marked by "card", not by "code", which postal_code has).
func startWord(words []string, v *vocabulary) string {
	best, rank := "", -1
	for _, w := range words {
		r := 3
		switch v.kinds[v.ids[w]] {
		case wValue:
			r = 0
		case wCard:
			r = 1
		case wOther:
			r = 2
		}
		if r > rank || r == rank && len(w) > len(best) {
			best, rank = w, r
		}
	}
	return best
}

func (v *vocabulary) addStart(w string) {
	switch {
	case len(w) >= 3:
		i := startIndex(w[0])*37*37 + startIndex(w[1])*37 + startIndex(w[2])
		v.start3[i/64] |= 1 << (i % 64)
		i /= 37
		v.first2[i/64] |= 1 << (i % 64)
	case len(w) == 2:
		i := startIndex(w[0])*37 + startIndex(w[1])
		v.start2[i/64] |= 1 << (i % 64)
		v.first2[i/64] |= 1 << (i % 64)
	}
}

// startIndexes numbers ASCII letters (either case) 1-26 and digits 27-36;
// anything else is 0.
var startIndexes = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = uint8(c-'0') + 27
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = uint8(c-'a') + 1
		t[c-'a'+'A'] = uint8(c-'a') + 1
	}
	return t
}()

func startIndex(c byte) int { return int(startIndexes[c]) }

// startsCode reports whether k, an ASCII text whose first two bytes have
// index i (see startIndexes) in first2, starts with the first letters of a
// word that marks a code entry.
func (v *vocabulary) startsCode(k []byte, i uint) bool {
	if v.start2[i/64&31]&(1<<(i%64)) != 0 {
		return true
	}
	if len(k) < 3 {
		return false
	}
	i = i*37 + uint(startIndexes[k[2]])
	return v.start3[i/64]&(1<<(i%64)) != 0
}
