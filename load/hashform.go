package load

import (
	"bytes"
	"encoding/json"
	"math/big"
	"slices"
	"strconv"
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

// plainCanonical is a quick yes for the usual numbers already in their
// canonical form: an integer not starting with 0 and with at most
// plainZeros trailing zeros (-7, 1003), or a decimal whose integer part
// does not start with 0 and whose fraction does not end in 0 (12.5). Any
// other number is left to canonicalNumber.
func plainCanonical(t []byte) bool {
	i := 0
	if i < len(t) && t[i] == '-' {
		i++
	}
	if i >= len(t) || t[i] < '1' || t[i] > '9' {
		return false
	}
	zeros := 0
	for ; i < len(t) && t[i] >= '0' && t[i] <= '9'; i++ {
		if t[i] == '0' {
			zeros++
		} else {
			zeros = 0
		}
	}
	if i == len(t) {
		return zeros <= plainZeros
	}
	if t[i] != '.' {
		return false
	}
	i++
	fs := i
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i == len(t) && i > fs && t[i-1] != '0'
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// canonicalNumber appends to dst the hash form of the JSON number t, a
// function of its exact value ±D×10^E (D the significant digits, without
// leading or trailing zeros): 0 for any zero (-0, 0.0, 0e5); D and E zeros
// for an integer with at most plainZeros trailing zeros (100, 1e2 and
// 100.0 are 100); D with a decimal point for a fraction with at most
// plainZeros zeros after the point before its digits (1.5, 0.005); and
// D, 'e' and E otherwise (1e33, 15e39, 1e-40), the exponent computed
// exactly however many digits it has. ok is false when t is not a JSON
// number.
func canonicalNumber(dst, t []byte) (_ []byte, ok bool) {
	i := 0
	neg := i < len(t) && t[i] == '-'
	if neg {
		i++
	}
	is := i
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	intPart := t[is:i]
	if len(intPart) == 0 || len(intPart) > 1 && intPart[0] == '0' {
		return dst, false
	}
	var frac []byte
	if i < len(t) && t[i] == '.' {
		i++
		fs := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if frac = t[fs:i]; len(frac) == 0 {
			return dst, false
		}
	}
	var exp []byte
	expNeg := false
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			expNeg = t[i] == '-'
			i++
		}
		es := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if exp = t[es:i]; len(exp) == 0 {
			return dst, false
		}
	}
	if i != len(t) {
		return dst, false
	}
	// The significant digits: intPart then frac, without leading zeros
	// (lead counts them) or trailing ones (trail).
	n := len(intPart) + len(frac)
	at := func(k int) byte {
		if k < len(intPart) {
			return intPart[k]
		}
		return frac[k-len(intPart)]
	}
	lead := 0
	for lead < n && at(lead) == '0' {
		lead++
	}
	if lead == n {
		return append(dst, '0'), true
	}
	trail := 0
	for at(n-1-trail) == '0' {
		trail++
	}
	digits := n - lead - trail
	if neg {
		dst = append(dst, '-')
	}
	appendDigits := func(dst []byte) []byte {
		for k := lead; k < n-trail; k++ {
			dst = append(dst, at(k))
		}
		return dst
	}
	// E = exp - len(frac) + trail, in an int64 while exp has at most 15
	// digits (after its leading zeros), else exactly in a big.Int.
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	shift := int64(trail) - int64(len(frac))
	if len(exp) > 15 {
		e := new(big.Int)
		e.SetString(string(exp), 10)
		if expNeg {
			e.Neg(e)
		}
		e.Add(e, big.NewInt(shift))
		dst = appendDigits(dst)
		dst = append(dst, 'e')
		return e.Append(dst, 10), true
	}
	var e int64 // 0 for no exponent
	for _, c := range exp {
		e = e*10 + int64(c-'0')
	}
	if expNeg {
		e = -e
	}
	e += shift
	switch {
	case e >= 0 && e <= plainZeros:
		dst = appendDigits(dst)
		for range e {
			dst = append(dst, '0')
		}
	case e < 0 && -e < int64(digits):
		point := n - trail + int(e)
		for k := lead; k < n-trail; k++ {
			if k == point {
				dst = append(dst, '.')
			}
			dst = append(dst, at(k))
		}
	case e < 0 && -e-int64(digits) <= plainZeros:
		dst = append(dst, '0', '.')
		for range -e - int64(digits) {
			dst = append(dst, '0')
		}
		dst = appendDigits(dst)
	default:
		dst = appendDigits(dst)
		dst = append(dst, 'e')
		dst = strconv.AppendInt(dst, e, 10)
	}
	return dst, true
}

// formParser writes the hash form of any JSON document (whitespace,
// escapes, members in any order): the slow path of hashForm.
type formParser struct {
	b []byte
	i int
}

func (p *formParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

// value appends the hash form of the value at p.i to out.
func (p *formParser) value(out []byte) ([]byte, bool) {
	if p.i >= len(p.b) {
		return out, false
	}
	switch c := p.b[p.i]; c {
	case '{':
		return p.object(out)
	case '[':
		return p.array(out)
	case '"':
		s, ok := p.str()
		if !ok {
			return out, false
		}
		return appendCanonicalString(out, s), true
	case 't', 'f', 'n':
		for _, w := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.b[p.i:], []byte(w)) {
				p.i += len(w)
				return append(out, w...), true
			}
		}
		return out, false
	}
	j := p.i
	for j < len(p.b) && isNumberByte(p.b[j]) {
		j++
	}
	out, ok := canonicalNumber(out, p.b[p.i:j])
	p.i = j
	return out, ok
}

// str reads a string: its text decoded (encoding/json's rules: invalid
// UTF-8 and lone surrogates become U+FFFD) and put in NFC.
func (p *formParser) str() (string, bool) {
	i := p.i + 1
	for ; i < len(p.b) && p.b[i] != '"'; i++ {
		if p.b[i] == '\\' {
			i++
		}
	}
	if i >= len(p.b) {
		return "", false
	}
	var s string
	if err := json.Unmarshal(p.b[p.i:i+1], &s); err != nil {
		return "", false
	}
	p.i = i + 1
	return norm.NFC.String(s), true
}

func (p *formParser) array(out []byte) ([]byte, bool) {
	p.i++
	out = append(out, '[')
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return append(out, ']'), true
	}
	for {
		var ok bool
		p.space()
		if out, ok = p.value(out); !ok {
			return out, false
		}
		p.space()
		if p.i >= len(p.b) {
			return out, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			out = append(out, ',')
		case ']':
			p.i++
			return append(out, ']'), true
		default:
			return out, false
		}
	}
}

// formMember is an object member in hash form: its key's text between
// the quotes, and its value.
type formMember struct{ key, value []byte }

func (p *formParser) object(out []byte) ([]byte, bool) {
	p.i++
	var ms []formMember
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return append(out, '{', '}'), true
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return out, false
		}
		k, ok := p.str()
		if !ok {
			return out, false
		}
		key := appendCanonicalString(nil, k)
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return out, false
		}
		p.i++
		p.space()
		v, ok := p.value(nil)
		if !ok {
			return out, false
		}
		ms = append(ms, formMember{key: key[1 : len(key)-1], value: v})
		p.space()
		if p.i >= len(p.b) {
			return out, false
		}
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.b[p.i] != '}' {
			return out, false
		}
		p.i++
		break
	}
	slices.SortFunc(ms, func(a, b formMember) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		return bytes.Compare(a.value, b.value)
	})
	out = append(out, '{')
	for k, m := range ms {
		if k > 0 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, m.key...)
		out = append(out, '"', ':')
		out = append(out, m.value...)
	}
	return append(out, '}'), true
}
