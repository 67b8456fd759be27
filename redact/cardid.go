package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CardIDSeparator joins the two parts of a pseudonymous card id (see
// CardID): the masked id before it, the keyed hash after it.
const CardIDSeparator = '~'

// cardIDHashLetters is how many letters of the keyed hash a pseudonymous
// card id carries: 16 letters of 4 bits, 64 bits of HMAC-SHA256.
const cardIDHashLetters = 16

// MinCardIDKey is the shortest key CardID accepts (bytes).
const MinCardIDKey = 16

// HoldsCardNumber reports whether a card id is, or holds, a card number,
// and returns its masked form when it does. An id holds one when:
//   - the text rule (PANs) masks something in it: a card number anywhere
//     in it, in any script's digits, with the separators the text rule
//     accepts; the masked form is then PANs(id);
//   - or it has no letter and its decimal digits, whatever sits between
//     them, form a card number (IsPAN): "4111.1111.1111.1111",
//     "4111/1111/1111/1111", a number id such as 4111111111111111 sent as
//     JSON's number and held as its decimal text. The masked form then
//     keeps every character but the digits after the sixth and before the
//     last four, which become '*'.
//
// Ids with letters around scattered digits (UUIDs, "a4b1c1...") are not
// card numbers unless the text rule finds one.
func HoldsCardNumber(id string) (masked string, ok bool) {
	if countDigits(id) < minPAN {
		return "", false
	}
	if m, changed := maskString(id); changed {
		return m, true
	}
	var digits [maxPAN]byte
	n := 0
	for _, r := range id {
		if unicode.IsLetter(r) {
			return "", false
		}
		v, ok := idDigit(r)
		if !ok {
			continue
		}
		if n == maxPAN {
			return "", false
		}
		digits[n] = '0' + v
		n++
	}
	if !IsPAN(string(digits[:n])) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(id))
	k := 0
	for _, r := range id {
		if _, ok := idDigit(r); ok {
			k++
			if k > 6 && k <= n-4 {
				b.WriteByte('*')
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String(), true
}

// idDigit returns the value of r when r is a decimal digit of any script.
func idDigit(r rune) (byte, bool) {
	if r >= '0' && r <= '9' {
		return byte(r - '0'), true
	}
	return digitValue(r)
}

// CardID returns the form in which a card id is stored: an id that holds a
// card number (HoldsCardNumber) becomes its masked form, CardIDSeparator
// and a keyed hash of the whole id as sent, so the same card keeps the same
// id and two cards with the same masked form keep two; any other id is
// returned unchanged (changed false).
//
// The hash is the first 8 bytes of HMAC-SHA256(key, id), written as 16
// letters 'a' to 'p' (one per 4 bits, high bits first) rather than hex
// digits, so no digit of the hash can join the masked digits into a
// number, and the result is never itself a card number: CardID of a
// result returns it unchanged. key must be at least MinCardIDKey bytes;
// with a shorter key an id holding a card number comes back as its masked
// form alone, with ok false, and must not be stored as an id.
func CardID(key []byte, id string) (stored string, changed, ok bool) {
	masked, holds := HoldsCardNumber(id)
	if !holds {
		return id, false, true
	}
	if len(key) < MinCardIDKey {
		return masked, true, false
	}
	return PseudonymousID(key, id, masked), true, true
}

// PseudonymousID returns masked, CardIDSeparator and the keyed hash of id
// (see CardID), for a caller that found id's masked form by another rule.
// key must be at least MinCardIDKey bytes.
func PseudonymousID(key []byte, id, masked string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	sum := mac.Sum(nil)
	out := make([]byte, 0, len(masked)+1+cardIDHashLetters)
	out = append(out, masked...)
	out = utf8.AppendRune(out, CardIDSeparator)
	for _, c := range sum[:cardIDHashLetters/2] {
		out = append(out, 'a'+c>>4, 'a'+c&0x0f)
	}
	return string(out)
}
