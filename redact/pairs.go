package redact

// Name/value pairs in the document: an object whose name, key, field,
// param, parameter, attribute, attr or type member (in any case) is a
// string that names a code (SecretKey) has its value, val, data and
// content members dropped; a two-element array whose first element is such
// a string has its second element dropped. As for a key, a boolean or null
// value is kept (a flag). The walk notes when a document may hold a pair;
// only then does this pass read the canonical output again.

// dropPairs returns the canonical document src with the values of its
// code pairs dropped, and how many it dropped. src is the output of the
// canonical pass: valid, compact, its objects sorted, so dropping members
// keeps it canonical.
func dropPairs(src []byte) (out []byte, dropped int) {
	d := pairDropper{src: src, out: make([]byte, 0, len(src))}
	d.value(0)
	return d.out, d.dropped
}

type pairDropper struct {
	src     []byte
	out     []byte
	dropped int
}

// end returns the offset after the value that starts at src[i].
func (d *pairDropper) end(i int) int {
	switch d.src[i] {
	case '"':
		return stringEnd(d.src, i)
	case '{', '[':
		depth := 0
		for j := i; ; j++ {
			switch d.src[j] {
			case '"':
				j = stringEnd(d.src, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
	}
	j := i
	for j < len(d.src) && d.src[j] != ',' && d.src[j] != ']' && d.src[j] != '}' {
		j++
	}
	return j
}

// value copies the value at src[i] with its pairs' values dropped and
// returns the offset after it.
func (d *pairDropper) value(i int) int {
	switch d.src[i] {
	case '{':
		return d.object(i)
	case '[':
		return d.array(i)
	}
	j := d.end(i)
	d.out = append(d.out, d.src[i:j]...)
	return j
}

// pairString reports whether the value at src[i:j] is a string that names
// a code.
func (d *pairDropper) pairString(i, j int) bool {
	if d.src[i] != '"' {
		return false
	}
	return secretKey(unescape(nil, d.src[i+1:j-1]))
}

// flag reports whether the value at src[i] is true, false or null.
func (d *pairDropper) flag(i int) bool {
	c := d.src[i]
	return c == 't' || c == 'f' || c == 'n'
}

func (d *pairDropper) object(i int) int {
	type m struct{ ks, ke, vs, ve int }
	var ms []m
	pair := false
	j := i + 1
	for d.src[j] != '}' {
		ke := stringEnd(d.src, j)
		vs := ke + 1
		ve := d.end(vs)
		ms = append(ms, m{j, ke, vs, ve})
		if pairName(unescape(nil, d.src[j+1:ke-1])) && d.pairString(vs, ve) {
			pair = true
		}
		j = ve
		if d.src[j] == ',' {
			j++
		}
	}
	d.out = append(d.out, '{')
	n := 0
	for _, mb := range ms {
		if pair && !d.flag(mb.vs) && pairValue(unescape(nil, d.src[mb.ks+1:mb.ke-1])) {
			d.dropped++
			continue
		}
		if n > 0 {
			d.out = append(d.out, ',')
		}
		n++
		d.out = append(d.out, d.src[mb.ks:mb.vs]...)
		d.value(mb.vs)
	}
	d.out = append(d.out, '}')
	return j + 1
}

func (d *pairDropper) array(i int) int {
	var spans [][2]int
	j := i + 1
	for d.src[j] != ']' {
		e := d.end(j)
		spans = append(spans, [2]int{j, e})
		j = e
		if d.src[j] == ',' {
			j++
		}
	}
	if len(spans) == 2 && d.pairString(spans[0][0], spans[0][1]) && !d.flag(spans[1][0]) {
		spans = spans[:1]
		d.dropped++
	}
	d.out = append(d.out, '[')
	for k, s := range spans {
		if k > 0 {
			d.out = append(d.out, ',')
		}
		d.value(s[0])
	}
	d.out = append(d.out, ']')
	return j + 1
}

// topMembers appends to ms the members of the top-level object of out, a
// canonical document.
func topMembers(out []byte, ms []member) []member {
	d := pairDropper{src: out}
	for j := 1; out[j] != '}'; {
		ke := stringEnd(out, j)
		ve := d.end(ke + 1)
		ms = append(ms, member{start: j, keyEnd: ke, end: ve})
		j = ve
		if out[j] == ',' {
			j++
		}
	}
	return ms
}
