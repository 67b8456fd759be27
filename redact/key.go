package redact

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// SecretKey reports whether a JSON object key names a card security code
// (CVV and its kin) or a PIN, or is one of the policy's extra keys.
// Policy.JSON drops such a key with its value, whatever the value's type;
// for the built-in rule, except a boolean or null value, which can never be
// a code (so a flag such as "has_pin": true is kept).
//
// The built-in rule reads the key's words:
//
//   - The key is normalised first: invisible characters (Unicode category
//     Cf, such as the soft hyphen U+00AD, zero-width space, non-joiner and
//     joiner U+200B-U+200D, word joiner U+2060 and U+FEFF; variation
//     selectors; U+034F) are removed, and the rest is put in Unicode
//     normalisation form NFKC, which turns full-width letters ("ｃｖｖ") into
//     ASCII ones and U+00A0 and other spaces into ' '. Keys of ASCII
//     characters only need none of this.
//   - It is split into words at every character that is not a letter or a
//     digit (any Unicode space, punctuation or symbol) and at camelCase
//     boundaries, acronyms included ("cardCVV" is card cvv, "PINCode" is
//     pin code); digits stay with the word they follow ("CVV2"). Words are
//     compared after simple case folding.
//   - A word made only of words of the vocabulary below, written together,
//     counts as those words: "cvvcode" is cvv code, "cardcvv" card cvv,
//     "pinblock" pin block, "securitycode" security code; "pinned", "spin"
//     and "pins" are no such word.
//   - The key is also read a second way: split only at characters that are
//     not letters or digits, not at camelCase boundaries, every word case
//     folded and read as above. The key is secret when it is secret under
//     either reading. So a code in mixed case, which camelCase splitting
//     would cut apart, is secret without regard to case: "cVV", "PiN",
//     "CvV2", "cvVNumber" (cvvnumber: cvv number), "CVVcode", "CARDcvv",
//     "cardVERIFICATIONvalue"; while "pinVerified", "spinCount", "PINNED"
//     and "SPIN" are kept under both readings.
//
// A code word is one of cvv, cvc, cvv2, cvc2, cvn, cav2, csc and pin;
// "cid" when the key also has a card word (card, cc, credit or amex:
// "card_cid", while a lone "cid" is a customer id); "security" right before
// "code"; "verification" right after "card" or right before "value" ("card
// verification", "verification value", but not an e-mail's
// "verification_code"). A value word is one of number, num, no, nr, value,
// val, code, data, block, digit, digits, or a number ("pin_2").
//
// The key is secret when its last word that is not a value word is a code
// word: "cvv", "card_cvv2", "CVV2Code", "cvv_number", "pin_block",
// "card_verification_value" and "securityCode" are secret, while keys that
// merely mention a code before another word, flags, counters and outcomes,
// are not: "pin_verified", "cvc_check", "cvv_result", "pin_attempts",
// "spin_count", "pinned", "postal_code". Extra keys match the whole key
// exactly, without regard to case, and without normalisation.
func (p *Policy) SecretKey(key string) bool {
	return p.extraKey([]byte(key)) || secretKey([]byte(key))
}

// extraKey reports whether key is one of the policy's extra keys.
func (p *Policy) extraKey(key []byte) bool {
	for _, k := range p.extra {
		if bytes.EqualFold(key, k) {
			return true
		}
	}
	return false
}

// secretKey applies the built-in rule of SecretKey to key.
func secretKey(key []byte) bool {
	for i, c := range key {
		if c >= utf8.RuneSelf {
			return secretReadings(foldKey(key))
		}
		if i+2 < len(key) && codeStart(key[i:]) {
			// Check the rest for non-ASCII characters: they need
			// normalising first.
			for _, c := range key[i:] {
				if c >= utf8.RuneSelf {
					return secretReadings(foldKey(key))
				}
			}
			return secretReadings(key)
		}
	}
	return false
}

// codeStart reports whether k, an ASCII text of at least three bytes,
// starts with the first letters of a code word (cv, csc, cav, cid, pin, sec
// for security, ver for verification), in any case. A key of ASCII letters
// without one names no code: most keys are rejected by this test alone.
func codeStart(k []byte) bool {
	c1, c2 := k[1]|0x20, k[2]|0x20
	switch k[0] | 0x20 {
	case 'c':
		return c1 == 'v' || c1 == 's' && c2 == 'c' || c1 == 'a' && c2 == 'v' || c1 == 'i' && c2 == 'd'
	case 'p':
		return c1 == 'i' && c2 == 'n'
	case 's':
		return c1 == 'e' && c2 == 'c'
	case 'v':
		return c1 == 'e' && c2 == 'r'
	}
	return false
}

// foldKey returns key without invisible characters, in NFKC.
func foldKey(key []byte) []byte {
	visible := make([]byte, 0, len(key))
	for i := 0; i < len(key); {
		r, n := utf8.DecodeRune(key[i:])
		if !invisible(r) {
			visible = append(visible, key[i:i+n]...)
		}
		i += n
	}
	return norm.NFKC.Bytes(visible)
}

// invisible reports whether r is a character that shows nothing and is
// dropped from keys: a format character (Cf), a variation selector or the
// combining grapheme joiner.
func invisible(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r == 0x34F, r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// Kinds of words, for the rule of SecretKey.
const (
	wOther = iota
	wCode  // cvv, cvc, cvv2, cvc2, cvn, cav2, csc, pin
	wCID   // cid: a code word beside a card word
	wCard  // card, cc, credit, amex
	wSecurity
	wVerification
	wCodeValue // code: a value word that makes "security" a code word
	wValValue  // value: a value word that makes "verification" a code word
	wValue     // number, num, no, nr, val, data, block, digit, digits, a number
)

// wordKind returns the kind of w, a lower-case word of the vocabulary, or
// wOther.
func wordKind(w []byte) int {
	switch string(w) {
	case "cvv", "cvc", "cvv2", "cvc2", "cvn", "cav2", "csc", "pin":
		return wCode
	case "cid":
		return wCID
	case "card", "cc", "credit", "amex":
		return wCard
	case "security":
		return wSecurity
	case "verification":
		return wVerification
	case "code":
		return wCodeValue
	case "value":
		return wValValue
	case "number", "num", "no", "nr", "val", "data", "block", "digit", "digits":
		return wValue
	}
	if allDigits(w) {
		return wValue
	}
	return wOther
}

func allDigits(w []byte) bool {
	for _, c := range w {
		if !isDigit(c) {
			return false
		}
	}
	return len(w) > 0
}

// maxCompound bounds the words of the vocabulary one written-together word
// may be made of, and the length of such a word.
const (
	maxCompound    = 6
	maxCompoundLen = 48
)

// compound appends to kinds the kinds of the vocabulary words w is made of,
// written together ("cvvcode": cvv, code; "pin2": pin, 2), and reports
// whether it is made of such words; kinds is unchanged when it is not.
func compound(w []byte, kinds []int) ([]int, bool) {
	if len(w) > maxCompoundLen {
		return kinds, false
	}
	return splitCompound(w, kinds, 0)
}

func splitCompound(w []byte, kinds []int, depth int) ([]int, bool) {
	if len(w) == 0 {
		return kinds, true
	}
	if depth == maxCompound {
		return kinds, false
	}
	// A number: all of its digits at once.
	if isDigit(w[0]) {
		n := 1
		for n < len(w) && isDigit(w[n]) {
			n++
		}
		if out, ok := splitCompound(w[n:], append(kinds, wValue), depth+1); ok {
			return out, true
		}
		return kinds, false
	}
	// The longest vocabulary word first ("cvv2" before "cvv").
	for n := min(len(w), len("verification")); n >= 2; n-- {
		k := wordKind(w[:n])
		if k == wOther || allDigits(w[:n]) {
			continue
		}
		if out, ok := splitCompound(w[n:], append(kinds, k), depth+1); ok {
			return out, true
		}
	}
	return kinds, false
}

// secretReadings reports whether key, a normalised key, is secret under
// either reading of SecretKey: split at camelCase boundaries too, or only
// at characters that are not letters or digits, so that a code written in
// mixed case ("cVV", "PiN", "CVVcode") is read as the folded word it is.
func secretReadings(key []byte) bool {
	return secretWords(key, true) || secretWords(key, false)
}

// secretWords applies the word rule of SecretKey to key, a normalised key,
// split into words at camelCase boundaries too when camel is set.
func secretWords(key []byte, camel bool) bool {
	var kindsArr [16]int
	kinds := kindsArr[:0]
	var wordArr [maxCompoundLen * utf8.UTFMax]byte
	for i := 0; i < len(key); {
		s, e := nextWord(key, i, camel)
		if s == e {
			break
		}
		i = e
		if e-s > len(wordArr) {
			// Too long to be a word of the vocabulary or made of
			// them, even after folding.
			kinds = append(kinds, wOther)
			continue
		}
		w := fold(wordArr[:0], key[s:e])
		if k := wordKind(w); k != wOther {
			kinds = append(kinds, k)
			continue
		}
		var ok bool
		if kinds, ok = compound(w, kinds); !ok {
			kinds = append(kinds, wOther)
		}
	}
	// The last word that is not a value word.
	j := len(kinds) - 1
	for j >= 0 && (kinds[j] == wValue || kinds[j] == wCodeValue || kinds[j] == wValValue) {
		j--
	}
	if j < 0 {
		return false
	}
	switch kinds[j] {
	case wCode:
		return true
	case wCID:
		for _, k := range kinds {
			if k == wCard {
				return true
			}
		}
	case wSecurity:
		return j+1 < len(kinds) && kinds[j+1] == wCodeValue
	case wVerification:
		return j > 0 && kinds[j-1] == wCard || j+1 < len(kinds) && kinds[j+1] == wValValue
	}
	return false
}

// fold appends w to dst with simple case folding: ASCII letters in lower
// case, other letters as the lower case of their upper case ("ſ" is "s").
func fold(dst, w []byte) []byte {
	for i := 0; i < len(w); {
		c := w[i]
		if c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(w[i:])
		dst = utf8.AppendRune(dst, unicode.ToLower(unicode.ToUpper(r)))
		i += n
	}
	return dst
}

// Character classes for word splitting.
const (
	clSep = iota
	clLower
	clUpper
	clDigit
)

// classAt returns the class of the character at key[i] and its length in
// bytes. Letters without case (and marks) count as lower-case letters: they
// are part of words but never start a new one.
func classAt(key []byte, i int) (int, int) {
	c := key[i]
	if c < utf8.RuneSelf {
		switch {
		case c >= 'a' && c <= 'z':
			return clLower, 1
		case c >= 'A' && c <= 'Z':
			return clUpper, 1
		case c >= '0' && c <= '9':
			return clDigit, 1
		}
		return clSep, 1
	}
	r, n := utf8.DecodeRune(key[i:])
	switch {
	case unicode.IsUpper(r), unicode.IsTitle(r):
		return clUpper, n
	case unicode.IsLetter(r), unicode.IsMark(r):
		return clLower, n
	case unicode.IsNumber(r):
		return clDigit, n
	}
	return clSep, n
}

// nextWord returns the bounds [s, e) of the first word of key[i:] (s == e
// when there is none). Words are split at separators (anything but letters,
// marks and digits), before an upper-case letter that follows a lower-case
// letter or a digit ("cardCvv", "cvv2Code"), and before the last
// upper-case letter of an acronym that a lower-case letter follows
// ("PINCode" is PIN, Code). Digits stay with the word they follow ("CVV2").
// Without camel, words are split at separators only.
func nextWord(key []byte, i int, camel bool) (s, e int) {
	for i < len(key) {
		cl, n := classAt(key, i)
		if cl != clSep {
			break
		}
		i += n
	}
	s = i
	if i == len(key) {
		return s, s
	}
	prev, n := classAt(key, i)
	i += n
	for i < len(key) {
		cl, n := classAt(key, i)
		if cl == clSep {
			break
		}
		if cl == clUpper && camel {
			if prev == clLower || prev == clDigit {
				break
			}
			if prev == clUpper && i+n < len(key) {
				if next, _ := classAt(key, i+n); next == clLower {
					break
				}
			}
		}
		prev = cl
		i += n
	}
	return s, i
}

// normalizeKeys trims the extra key names and drops empty ones.
func normalizeKeys(keys []string) [][]byte {
	var out [][]byte
	for _, k := range keys {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, []byte(k))
		}
	}
	return out
}
