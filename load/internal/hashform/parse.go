package hashform

import (
	"bytes"
	"encoding/json"
	"slices"

	"golang.org/x/text/unicode/norm"
)

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
		return AppendString(out, s), true
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
		key := AppendString(nil, k)
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

// AppendString appends s as a JSON string in the canonical form of
// package redact: only '"', '\' and U+0000-U+001F escaped.
func AppendString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\b':
			out = append(out, `\b`...)
		case c == '\f':
			out = append(out, `\f`...)
		case c == '\n':
			out = append(out, `\n`...)
		case c == '\r':
			out = append(out, `\r`...)
		case c == '\t':
			out = append(out, `\t`...)
		case c < 0x20:
			out = append(out, `\u00`...)
			out = append(out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}
