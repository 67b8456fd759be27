// Package hashform holds the hash form of a card's JSON and the change hash
// taken of it (card_state.data_hash): one value, however an upstream spells
// it, hashes alike. Both warehouses store Hash; package load's rescan and
// the dialects' commits call it. It imports nothing of this module.
package hashform

import (
	"bytes"
	"crypto/sha256"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The change hash (card_state.data_hash) is taken of a card's hash form:
// its JSON with every value that means the same written the same, so that
// an upstream that re-serialises an unchanged card (1.0 for 1, 1e2 for
// 100, 1.50 for 1.5, -0 for 0, a string in NFD for one in NFC) makes no
// new version. The stored data keeps the text as received; only the hash
// reads the hash form. It is package redact's canonical form (no
// whitespace, strings with the fewest escapes) and, on top:
//   - every string, keys included, at any depth, in Unicode NFC;
//   - every number by its exact value (canonicalNumber): no float64, so
//     two numbers hash alike only when they are equal, digit for digit;
//   - every object's members sorted bytewise by key, then by value (two
//     keys that differ only in their normalisation become one key, and
//     both members are kept, in an order that does not depend on the
//     order received).
//
// A document redact wrote that is already in hash form (the usual case:
// integers, decimals without trailing zeros, ASCII or NFC text) is hashed
// as it is, so its hash is the one releases before the hash form wrote.

// HashLen is how many bytes of SHA-256 card_state.data_hash keeps: 128 bits
// tell two versions of a card apart with no practical chance of a collision.
const HashLen = 16

// Hash is the first HashLen bytes of the SHA-256 of data's hash form
// (numbers by exact value, strings in NFC), so that an upstream
// re-serialising an unchanged card makes no version.
func Hash(data []byte) []byte {
	sum := sha256.Sum256(hashForm(data))
	return sum[:HashLen:HashLen]
}

// plainZeros is the most zeros the hash form writes out in a number
// (canonicalNumber): beyond it a number takes an exponent, so 1e999999
// costs as little as 1e9.
const plainZeros = 32

// hashForm returns doc's hash form: doc itself when it is already in that
// form, else a new slice; a doc that is not JSON is returned as it is.
func hashForm(doc []byte) []byte {
	s := formScan{b: doc}
	if s.value() && s.i == len(s.b) {
		return doc
	}
	p := formParser{b: doc}
	p.space()
	out, ok := p.value(nil)
	p.space()
	if !ok || p.i != len(p.b) {
		return doc
	}
	return out
}

// formScan checks, in one pass without allocating, that a document is in
// hash form.
type formScan struct {
	b   []byte
	i   int
	num []byte // scratch for a number's canonical text
}

func (s *formScan) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '{':
		return s.object()
	case '[':
		return s.array()
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	}
	return s.number()
}

func (s *formScan) lit(w string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		return false
	}
	s.i += len(w)
	return true
}

func (s *formScan) object() bool {
	s.i++
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	var prev []byte
	for first := true; ; first = false {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		k, ok := s.str()
		if !ok || !first && bytes.Compare(prev, k) >= 0 {
			return false
		}
		prev = k
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		if !s.value() || s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *formScan) array() bool {
	s.i++
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value() || s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string in hash form and returns its text between the
// quotes: only '"', '\' and control characters escaped, as redact writes
// them, and UTF-8 in NFC. A string that holds both an escape and
// non-ASCII text is left to the parser (an escaped control character may
// stand before a combining mark).
func (s *formScan) str() ([]byte, bool) {
	start := s.i + 1
	escaped, wide := false, false
	b := s.b
	for i := start; i < len(b); i++ {
		for i < len(b) && b[i] >= 0x20 && b[i] < utf8.RuneSelf && b[i] != '"' && b[i] != '\\' {
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			t := s.b[start:i]
			if wide && (escaped || !utf8.Valid(t) || !norm.NFC.IsNormal(t)) {
				return nil, false
			}
			return t, true
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			wide = true
		case c == '\\':
			escaped = true
			if i+1 >= len(s.b) {
				return nil, false
			}
			switch s.b[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				// \u00XX, lower-case hex, for a control character without
				// a short escape.
				if i+5 >= len(s.b) || s.b[i+2] != '0' || s.b[i+3] != '0' || s.b[i+4] > '1' || s.b[i+4] < '0' {
					return nil, false
				}
				switch h := s.b[i+5]; {
				case h >= '0' && h <= '9', h >= 'a' && h <= 'f':
				default:
					return nil, false
				}
				switch v := (s.b[i+4]-'0')<<4 | hexValue(s.b[i+5]); v {
				case '\b', '\f', '\n', '\r', '\t':
					return nil, false
				}
				i += 5
			default:
				return nil, false
			}
		}
	}
	return nil, false
}

func hexValue(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// number reads a number and checks it is written in its canonical form.
func (s *formScan) number() bool {
	j := s.i
	for j < len(s.b) && isNumberByte(s.b[j]) {
		j++
	}
	t := s.b[s.i:j]
	if plainCanonical(t) {
		s.i = j
		return true
	}
	var ok bool
	s.num, ok = canonicalNumber(s.num[:0], t)
	if !ok || !bytes.Equal(s.num, t) {
		return false
	}
	s.i = j
	return true
}
