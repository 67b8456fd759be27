package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// defaultRedactFields are JSON keys dropped at any depth (case-insensitive).
// Keys merely named like them are dropped too: see secretKey.
var defaultRedactFields = []string{"cvv", "cvc", "cvv2", "cvc2", "pin", "security_code", "securitycode"}

// secretWords are words that make a key secret wherever they appear in it
// ("card_cvv", "cvvCode", "pin_code", "security-code").
var secretWords = map[string]bool{"cvv": true, "cvv2": true, "cvc": true, "cvc2": true, "cvn": true, "pin": true, "pincode": true}

// keyWords splits a JSON key into lower-case words at non-alphanumerics
// and at lower-to-upper case changes: "cardCVV2" → card, cvv2.
func keyWords(key string) []string {
	var words []string
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum {
			flush()
			continue
		}
		if c >= 'A' && c <= 'Z' && i > 0 && key[i-1] >= 'a' && key[i-1] <= 'z' {
			flush()
		}
		cur = append(cur, c)
	}
	flush()
	return words
}

// secretKey reports whether a key names a security code or PIN: an exact
// configured name, or a key with a secret word ("card_cvv", "cvvCode",
// "pin_code") or the words security+code ("security-code", "securityCode").
func (r *redactor) secretKey(key string) bool {
	if r.drop[strings.ToLower(key)] {
		return true
	}
	words := keyWords(key)
	for i, w := range words {
		if secretWords[w] || strings.Contains(w, "cvv") || strings.Contains(w, "cvc") || w == "securitycode" {
			return true
		}
		if w == "security" && i+1 < len(words) && words[i+1] == "code" {
			return true
		}
	}
	return false
}

// cardNumberKey reports whether a key names a card number, so that a JSON
// number under it is masked. Numbers elsewhere (large ids, millisecond
// timestamps) are left alone: a Luhn-valid 13-19 digit number is common.
func cardNumberKey(key string) bool {
	words := keyWords(key)
	joined := strings.Join(words, "")
	for _, w := range words {
		if w == "pan" {
			return true
		}
	}
	for _, k := range []string{"cardnumber", "cardno", "cardnum", "accountnumber", "primaryaccountnumber"} {
		if strings.Contains(joined, k) {
			return true
		}
	}
	return joined == "number" || joined == "card"
}

// maxDepth bounds JSON nesting, so a hostile body cannot exhaust the stack.
const maxDepth = 256

// redactor masks card numbers and drops secret fields in JSON documents. It
// rewrites the document compactly, keeping key order and the exact text of
// every number it does not mask (no float64 round trip).
type redactor struct {
	drop map[string]bool
}

func newRedactor(extra []string) *redactor {
	r := &redactor{drop: map[string]bool{}}
	for _, f := range defaultRedactFields {
		r.drop[f] = true
	}
	for _, f := range extra {
		if f = strings.TrimSpace(f); f != "" {
			r.drop[strings.ToLower(f)] = true
		}
	}
	return r
}

// field is a top-level key and the JSON type of its (redacted) value.
type field struct {
	name, typ string
}

// Redact returns the redacted compact JSON and, when doc is an object, its
// top-level fields in order.
func (r *redactor) Redact(doc []byte) ([]byte, []field, error) {
	if !json.Valid(doc) {
		return nil, nil, errors.New("invalid JSON")
	}
	p := &jsonWalker{in: doc, r: r, out: make([]byte, 0, len(doc))}
	p.ws()
	if err := p.value(0, ""); err != nil {
		return nil, nil, err
	}
	return p.out, p.fields, nil
}

type jsonWalker struct {
	in     []byte
	i      int
	out    []byte
	r      *redactor
	fields []field
}

func (p *jsonWalker) ws() {
	for p.i < len(p.in) {
		switch p.in[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value copies (and redacts) one JSON value at p.i, the value of key (""
// at the top; array elements inherit their array's key). The input is known
// to be valid JSON, so the walker only needs to find token boundaries.
//
// The top-level "id" is never masked: it is the card's identity in every
// table, and masking could merge two cards.
func (p *jsonWalker) value(depth int, key string) error {
	if depth > maxDepth {
		return fmt.Errorf("JSON nested deeper than %d", maxDepth)
	}
	switch c := p.in[p.i]; {
	case c == '{':
		p.i++
		p.out = append(p.out, '{')
		first := true
		for {
			p.ws()
			if p.in[p.i] == '}' {
				p.i++
				break
			}
			if p.in[p.i] == ',' {
				p.i++
				p.ws()
			}
			start := p.i
			p.skipString()
			rawKey := p.in[start:p.i]
			var key string
			if err := json.Unmarshal(rawKey, &key); err != nil {
				return fmt.Errorf("object key: %w", err)
			}
			p.ws()
			p.i++ // ':'
			p.ws()
			if p.r.secretKey(key) {
				saved := p.out
				if err := p.value(depth+1, key); err != nil {
					return err
				}
				p.out = saved
				continue
			}
			if !first {
				p.out = append(p.out, ',')
			}
			first = false
			p.out = append(p.out, rawKey...)
			p.out = append(p.out, ':')
			vstart := len(p.out)
			if depth == 0 && key == "id" {
				if err := p.verbatim(); err != nil {
					return err
				}
			} else if err := p.value(depth+1, key); err != nil {
				return err
			}
			if depth == 0 {
				p.fields = append(p.fields, field{name: key, typ: jsonType(p.out[vstart])})
			}
		}
		p.out = append(p.out, '}')
	case c == '[':
		p.i++
		p.out = append(p.out, '[')
		first := true
		for {
			p.ws()
			if p.in[p.i] == ']' {
				p.i++
				break
			}
			if p.in[p.i] == ',' {
				p.i++
				p.ws()
			}
			if !first {
				p.out = append(p.out, ',')
			}
			first = false
			if err := p.value(depth+1, key); err != nil {
				return err
			}
		}
		p.out = append(p.out, ']')
	case c == '"':
		start := p.i
		p.skipString()
		raw := p.in[start:p.i]
		if !hasDigitRun(raw) {
			p.out = append(p.out, raw...)
			return nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("string: %w", err)
		}
		masked, changed := maskPANs(s)
		if !changed {
			p.out = append(p.out, raw...)
			return nil
		}
		p.out = appendJSONString(p.out, masked)
	case c == 't' || c == 'f' || c == 'n':
		start := p.i
		for p.i < len(p.in) && p.in[p.i] >= 'a' && p.in[p.i] <= 'z' {
			p.i++
		}
		p.out = append(p.out, p.in[start:p.i]...)
	default: // number
		start := p.i
		for p.i < len(p.in) && strings.IndexByte("+-.0123456789eE", p.in[p.i]) >= 0 {
			p.i++
		}
		num := string(p.in[start:p.i])
		if cardNumberKey(key) && isDigits(num) && len(num) >= 13 && len(num) <= 19 && luhn(num) {
			p.out = appendJSONString(p.out, maskDigits(num))
			return nil
		}
		p.out = append(p.out, num...)
	}
	return nil
}

// verbatim copies one scalar value unchanged (the top-level id); a
// composite id is copied through the normal walk.
func (p *jsonWalker) verbatim() error {
	start := p.i
	switch c := p.in[p.i]; {
	case c == '{' || c == '[':
		return p.value(1, "id")
	case c == '"':
		p.skipString()
	default:
		for p.i < len(p.in) && strings.IndexByte(" \t\r\n,}]", p.in[p.i]) < 0 {
			p.i++
		}
	}
	p.out = append(p.out, p.in[start:p.i]...)
	return nil
}

// skipString advances past the JSON string starting at p.i.
func (p *jsonWalker) skipString() {
	p.i++ // opening quote
	for p.i < len(p.in) {
		switch p.in[p.i] {
		case '\\':
			p.i += 2
		case '"':
			p.i++
			return
		default:
			p.i++
		}
	}
}

func jsonType(first byte) string {
	switch first {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

func appendJSONString(out []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a Go string always encodes
	return append(out, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// hasDigitRun is a cheap pre-check: at least 13 digits in the raw string.
func hasDigitRun(raw []byte) bool {
	n := 0
	for _, c := range raw {
		if c >= '0' && c <= '9' {
			n++
			if n >= 13 {
				return true
			}
		}
	}
	return false
}

// luhn reports whether the digit string passes the Luhn check.
func luhn(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// maskDigits keeps the first 6 and last 4 digits of a plain digit string.
func maskDigits(d string) string {
	return d[:6] + strings.Repeat("*", len(d)-10) + d[len(d)-4:]
}

// maskPANs masks every card number in s: a run of 13 to 19 digits, optionally
// separated by up to two spaces, dashes, dots or underscores, that passes Luhn. The first 6 and
// last 4 digits stay; separators stay in place. A longer run (for example a
// PAN followed by more digit groups) is searched for a PAN that starts and
// ends on group boundaries.
func maskPANs(s string) (string, bool) {
	b := []byte(s)
	changed := false
	for i := 0; i < len(b); {
		if b[i] < '0' || b[i] > '9' {
			i++
			continue
		}
		// A run: digits with single separators between digits.
		// groups holds [start, end) byte offsets of each digit group.
		var groups [][2]int
		j := i
		gs := i
		for {
			for j < len(b) && digitLike(b, j) {
				j++
			}
			groups = append(groups, [2]int{gs, j})
			k := j
			for k < len(b) && k-j < 2 && isPANSeparator(b[k]) {
				k++
			}
			if k > j && k < len(b) && digitLike(b, k) {
				j = k
				gs = j
				continue
			}
			break
		}
		if maskRun(b, groups) {
			changed = true
		}
		i = j
	}
	return string(b), changed
}

func isPANSeparator(c byte) bool { return c == ' ' || c == '-' || c == '.' || c == '_' }

// digitLike reports whether b[i] can be part of a card number's digit
// group: a digit, or an asterisk of an already masked number
// ("411111******1111"), so that redacting twice changes nothing.
func digitLike(b []byte, i int) bool { return b[i] >= '0' && b[i] <= '9' || b[i] == '*' }

// maskRun masks, in place, the whole run if it is a PAN, else the longest
// group-aligned sub-run that is one. A sub-run that is already masked (first
// 6 and last 4 digits, asterisks between) is skipped over as if it had been
// masked now. It reports whether it masked anything.
func maskRun(b []byte, groups [][2]int) bool {
	// Asterisks that end the whole run belong to the text, not to a
	// number ("4111111111111111*"). A literal asterisk glued to a card
	// number that more digit groups follow is the one form left unmasked.
	last := len(groups) - 1
	for groups[last][1] > groups[last][0] && b[groups[last][1]-1] == '*' {
		groups[last][1]--
	}
	// candidate returns the offsets of the digit-like bytes of groups[from..to].
	candidate := func(from, to int) []int {
		var pos []int
		for g := from; g <= to; g++ {
			for k := groups[g][0]; k < groups[g][1]; k++ {
				pos = append(pos, k)
			}
		}
		return pos
	}
	masked := false
	for from := 0; from < len(groups); from++ {
		for to := len(groups) - 1; to >= from; to-- {
			pos := candidate(from, to)
			n := len(pos)
			if n < 13 || n > 19 {
				continue
			}
			stars, maskedForm := 0, true
			d := make([]byte, n)
			for k, p := range pos {
				d[k] = b[p]
				if b[p] == '*' {
					stars++
					if k < 6 || k >= n-4 {
						maskedForm = false
					}
				}
			}
			if stars > 0 {
				if maskedForm && stars == n-10 {
					from = to // already masked: go on after it
					break
				}
				continue
			}
			if !luhn(string(d)) {
				continue
			}
			for k := 6; k < n-4; k++ {
				b[pos[k]] = '*'
			}
			masked = true
			from = to // continue after this PAN
			break
		}
	}
	return masked
}
