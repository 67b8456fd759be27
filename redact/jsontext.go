package redact

import "bytes"

// JSON text inside a string (a request body kept as text): read with every
// rule of Policy.JSON, as edits to the text rather than a rewrite of it, so
// that what is stored is the text with only the found parts replaced.

// jsonValue is a value read by jsonParser: its bounds and, for a string,
// the bounds of its content and its decoded text.
type jsonValue struct {
	start, end int
	first      byte   // its first byte: '"', '{', '[', 't', 'f', 'n' or a number's
	text       []byte // a string's decoded text
}

// jsonParser reads JSON text and collects the edits the rules make to it.
type jsonParser struct {
	t     []byte
	i     int
	ls    *layerScan
	depth int // the layer depth of the text
	nest  int
	ed    []edit
}

// jsonText returns the edits the rules make to t when t is JSON text, and
// whether it is.
func (ls *layerScan) jsonText(t []byte, depth int) ([]edit, bool) {
	p := jsonParser{t: t, ls: ls, depth: depth}
	p.space()
	if _, ok := p.value(nil); !ok {
		return nil, false
	}
	p.space()
	if p.i != len(t) {
		return nil, false
	}
	return p.ed, true
}

func (p *jsonParser) space() {
	for p.i < len(p.t) {
		switch p.t[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value reads the value at p.i; parentKey is the key of the member it is
// the value of, if any.
func (p *jsonParser) value(parentKey []byte) (jsonValue, bool) {
	v := jsonValue{start: p.i}
	if p.i >= len(p.t) {
		return v, false
	}
	v.first = p.t[p.i]
	ok := true
	switch c := p.t[p.i]; {
	case c == '{':
		ok = p.object(parentKey)
	case c == '[':
		ok = p.array()
	case c == '"':
		var s, e int
		if s, e, ok = p.str(); ok {
			v.text = p.strText(s, e)
		}
	case c == 't':
		ok = p.lit("true")
	case c == 'f':
		ok = p.lit("false")
	case c == 'n':
		ok = p.lit("null")
	case c == '-' || isDigit(c):
		ok = p.number()
	default:
		ok = false
	}
	v.end = p.i
	return v, ok
}

func (p *jsonParser) lit(s string) bool {
	if !bytes.HasPrefix(p.t[p.i:], []byte(s)) {
		return false
	}
	p.i += len(s)
	return true
}

// str reads a string and returns the bounds of its content.
func (p *jsonParser) str() (s, e int, ok bool) {
	p.i++
	s = p.i
	for p.i < len(p.t) {
		switch c := p.t[p.i]; {
		case c == '"':
			e = p.i
			p.i++
			return s, e, true
		case c == '\\':
			p.i += 2
		case c < 0x20:
			return 0, 0, false
		default:
			p.i++
		}
	}
	return 0, 0, false
}

// strText decodes the content t[s:e] of a string, reads it through its
// layers and records the edits; it returns the decoded text.
func (p *jsonParser) strText(s, e int) []byte {
	content := p.t[s:e]
	u, m, ok := decodeBackslash(content)
	if !ok {
		p.ed = shiftEdits(p.ed, p.ls.text(content, p.depth), s)
		return content
	}
	for k := range m.s {
		m.s[k] += s
		m.e[k] += s
	}
	p.ed = mapEdits(p.ed, p.ls.text(u, p.depth), m, encBackslash)
	return u
}

// number reads a number and, when it is an integer that is a card number,
// records its masked form as a string.
func (p *jsonParser) number() bool {
	s := p.i
	if p.t[p.i] == '-' {
		p.i++
	}
	d := p.i
	for p.i < len(p.t) && isDigit(p.t[p.i]) {
		p.i++
	}
	if p.i == d {
		return false
	}
	integer := true
	if p.i < len(p.t) && p.t[p.i] == '.' {
		integer = false
		p.i++
		k := p.i
		for p.i < len(p.t) && isDigit(p.t[p.i]) {
			p.i++
		}
		if p.i == k {
			return false
		}
	}
	if p.i < len(p.t) && p.t[p.i]|0x20 == 'e' {
		integer = false
		p.i++
		if p.i < len(p.t) && (p.t[p.i] == '+' || p.t[p.i] == '-') {
			p.i++
		}
		k := p.i
		for p.i < len(p.t) && isDigit(p.t[p.i]) {
			p.i++
		}
		if p.i == k {
			return false
		}
	}
	if integer && p.i-d >= minLayerPAN && p.i-d <= maxPAN {
		num := append([]byte(nil), p.t[s:p.i]...)
		if n, changed := maskText(num, false, &p.ls.sc); changed {
			p.ed = append(p.ed, edit{start: s, end: p.i, kind: kCard, repl: `"` + string(num[:n]) + `"`})
		}
	}
	return true
}

// member is an object member read by object.
type jsonMember struct {
	key []byte
	val jsonValue
}

// object reads an object; parentKey is the key of the member it is the
// value of, if any, read before each of its keys ("security": {"code"}).
func (p *jsonParser) object(parentKey []byte) bool {
	if p.nest++; p.nest > MaxDepth {
		return false
	}
	defer func() { p.nest-- }()
	p.i++
	p.space()
	var ms []jsonMember
	pair := false
	if p.i < len(p.t) && p.t[p.i] == '}' {
		p.i++
		return true
	}
	for {
		p.space()
		if p.i >= len(p.t) || p.t[p.i] != '"' {
			return false
		}
		s, e, ok := p.str()
		if !ok {
			return false
		}
		key := p.strText(s, e)
		p.space()
		if p.i >= len(p.t) || p.t[p.i] != ':' {
			return false
		}
		p.i++
		p.space()
		v, ok := p.value(key)
		if !ok {
			return false
		}
		if pathSecret(parentKey, key) {
			p.code(v)
		}
		if pairName(key) && v.first == '"' && secretKey(v.text) {
			pair = true
		}
		ms = append(ms, jsonMember{key: key, val: v})
		p.space()
		if p.i >= len(p.t) {
			return false
		}
		if p.t[p.i] == '}' {
			p.i++
			break
		}
		if p.t[p.i] != ',' {
			return false
		}
		p.i++
	}
	if pair {
		for _, m := range ms {
			if pairValue(m.key) {
				p.code(m.val)
			}
		}
	}
	return true
}

// pathSecret reports whether key, or key read after its parent's key, is a
// code key, as in the document (see walker.pathSecretKey).
func pathSecret(parent, key []byte) bool {
	if secretKey(key) {
		return true
	}
	if len(parent) == 0 || !valueWord(key) {
		return false
	}
	path := append(append([]byte(nil), parent...), " code"...)
	if !secretKey(path) {
		return false
	}
	path = append(append(path[:len(parent)], ' '), key...)
	return secretKey(path)
}

// code records the replacement of v, a code's value: a string's content
// becomes "[REDACTED]", any other value but true, false and null becomes
// null.
func (p *jsonParser) code(v jsonValue) {
	switch v.first {
	case 't', 'f', 'n':
		return
	case '"':
		if codeValue(v.text) && v.end-v.start > 2 {
			p.ed = append(p.ed, edit{start: v.start + 1, end: v.end - 1, kind: kCode, repl: Redacted})
		}
		return
	}
	p.ed = append(p.ed, edit{start: v.start, end: v.end, kind: kCode, repl: "null"})
}

// array reads an array; a two-element array whose first element is a
// string naming a code has its second replaced.
func (p *jsonParser) array() bool {
	if p.nest++; p.nest > MaxDepth {
		return false
	}
	defer func() { p.nest-- }()
	p.i++
	p.space()
	if p.i < len(p.t) && p.t[p.i] == ']' {
		p.i++
		return true
	}
	var first, second jsonValue
	n := 0
	for {
		p.space()
		v, ok := p.value(nil)
		if !ok {
			return false
		}
		switch n {
		case 0:
			first = v
		case 1:
			second = v
		}
		n++
		p.space()
		if p.i >= len(p.t) {
			return false
		}
		if p.t[p.i] == ']' {
			p.i++
			break
		}
		if p.t[p.i] != ',' {
			return false
		}
		p.i++
	}
	if n == 2 && first.first == '"' && secretKey(first.text) {
		p.code(second)
	}
	return true
}
