package redact

import (
	"bytes"
	"strings"
)

// SecretKey reports whether a JSON object key names a security code or a
// PIN, or is one of the policy's extra keys. Policy.JSON drops such a key and
// its value; for the built-in rule only when the value is a string or a
// number (a boolean flag such as "has_pin", or an object, is kept), for an
// extra key whatever the value.
//
// The built-in rule looks at the key's words: the key is split at every
// character that is not an ASCII letter or digit ('_', '-', ' ', '.', ...)
// and at camelCase boundaries, acronyms included ("cardCVV" is card cvv,
// "PINCode" is pin code, "CVV2" is cvv2), and the words are compared without
// regard to case. The key is secret when its last word is cvv, cvc, cvv2, cvc2,
// cvn, pin, securitycode, pincode, cvvcode or cvccode, or its last two words
// are security code, pin code, cvv code or cvc code. So "card_cvv2",
// "securityCode" and "pin-code" are secret, while flags and counters that
// merely mention one ("cvc_check", "pin_verified", "pinned", "spin_count",
// "pin_attempts") are not.
//
// Extra keys match the whole key exactly, without regard to case.
func (p *Policy) SecretKey(key string) bool {
	return p.extraKey([]byte(key)) || secretWords([]byte(key))
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

// secretWords applies the built-in word rule of SecretKey to key.
func secretWords(key []byte) bool {
	e := len(key)
	for e > 0 && class(key[e-1]) == clSep {
		e--
	}
	// Every secret last word ends in one of these letters: most keys are
	// rejected here.
	if e < 3 {
		return false
	}
	switch key[e-1] | 0x20 {
	case 'v', 'c', 'n', '2', 'e':
	default:
		return false
	}
	s, e := lastWord(key, e)
	last := key[s:e]
	switch {
	case eqWord(last, "cvv"), eqWord(last, "cvc"), eqWord(last, "cvv2"), eqWord(last, "cvc2"),
		eqWord(last, "cvn"), eqWord(last, "pin"),
		// The two-word forms written as one word.
		eqWord(last, "securitycode"), eqWord(last, "pincode"), eqWord(last, "cvvcode"), eqWord(last, "cvccode"):
		return true
	case eqWord(last, "code"):
		ps, pe := lastWord(key, s)
		prev := key[ps:pe]
		return eqWord(prev, "security") || eqWord(prev, "pin") || eqWord(prev, "cvv") || eqWord(prev, "cvc")
	}
	return false
}

// eqWord reports whether w is the lower-case ASCII word want, in any case.
func eqWord(w []byte, want string) bool {
	if len(w) != len(want) {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}

// Character classes for word splitting. Bytes of multi-byte UTF-8
// characters count as lower-case letters: they are part of words but never
// start a new one.
const (
	clSep = iota
	clLower
	clUpper
	clDigit
)

func class(c byte) int {
	switch {
	case c >= 'a' && c <= 'z', c >= 0x80:
		return clLower
	case c >= 'A' && c <= 'Z':
		return clUpper
	case c >= '0' && c <= '9':
		return clDigit
	}
	return clSep
}

// lastWord returns the bounds [s, e) of the last word of key[:end] (s == e
// when there is none). Words are split at separators (anything but ASCII
// letters, digits and non-ASCII bytes), before an upper-case letter that
// follows a lower-case letter or a digit ("cardCvv", "cvv2Code"), and
// before the last upper-case letter of an acronym that a lower-case letter
// follows ("PINCode" is PIN, Code). Digits stay with the word they follow
// ("CVV2"). Each boundary depends only on the bytes around it, so the key
// can be read backwards from its end.
func lastWord(key []byte, end int) (s, e int) {
	e = end
	for e > 0 && class(key[e-1]) == clSep {
		e--
	}
	if e == 0 {
		return 0, 0
	}
	s = e - 1
	for s > 0 && !boundary(key, s) {
		s--
	}
	return s, e
}

// boundary reports whether a word starts at key[i], i > 0, given that
// key[i] is not a separator.
func boundary(key []byte, i int) bool {
	prev := class(key[i-1])
	if prev == clSep {
		return true
	}
	if class(key[i]) != clUpper {
		return false
	}
	if prev == clUpper {
		return i+1 < len(key) && class(key[i+1]) == clLower
	}
	return true // after a lower-case letter or a digit
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
