package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// defaultRedactFields are JSON keys dropped at any depth (case-insensitive).
var defaultRedactFields = []string{"cvv", "cvc", "cvv2", "cvc2", "pin", "security_code", "securitycode"}

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
	if err := p.value(0); err != nil {
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

// value copies (and redacts) one JSON value at p.i. The input is known to be
// valid JSON, so the walker only needs to find token boundaries.
func (p *jsonWalker) value(depth int) error {
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
			if p.r.drop[strings.ToLower(key)] {
				saved := p.out
				if err := p.value(depth + 1); err != nil {
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
			if err := p.value(depth + 1); err != nil {
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
			if err := p.value(depth + 1); err != nil {
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
		if isDigits(num) && len(num) >= 13 && len(num) <= 19 && luhn(num) {
			p.out = appendJSONString(p.out, maskDigits(num))
			return nil
		}
		p.out = append(p.out, num...)
	}
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
// separated by single spaces or dashes, that passes Luhn. The first 6 and
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
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			groups = append(groups, [2]int{gs, j})
			if j+1 < len(b) && (b[j] == ' ' || b[j] == '-') && b[j+1] >= '0' && b[j+1] <= '9' {
				j++
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

// maskRun masks, in place, the whole run if it is a PAN, else the longest
// group-aligned sub-run that is one. It reports whether it masked anything.
func maskRun(b []byte, groups [][2]int) bool {
	digitsOf := func(from, to int) []int { // byte offsets of digits in groups[from..to]
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
			pos := digitsOf(from, to)
			if len(pos) < 13 || len(pos) > 19 {
				continue
			}
			d := make([]byte, len(pos))
			for k, p := range pos {
				d[k] = b[p]
			}
			if !luhn(string(d)) {
				continue
			}
			for k := 6; k < len(pos)-4; k++ {
				b[pos[k]] = '*'
			}
			masked = true
			from = to // continue after this PAN
			break
		}
	}
	return masked
}
