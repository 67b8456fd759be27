package redact

import (
	"bytes"
	"unicode/utf8"
)

// The structures the layers read in a text: free text, query strings,
// header lines, XML, and the names of name/value pairs (see layers.go).

// codeValue reports whether v, a value found under a code word, is to be
// replaced: it is not empty, a flag (true, false, null, in any case) or
// made only of "[REDACTED]" and characters that are not letters or
// digits (what an earlier pass wrote).
func codeValue(v []byte) bool {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0:
		return false
	case bytes.EqualFold(v, []byte("true")), bytes.EqualFold(v, []byte("false")), bytes.EqualFold(v, []byte("null")):
		return false
	}
	for len(v) > 0 {
		if bytes.HasPrefix(v, []byte(Redacted)) {
			v = v[len(Redacted):]
			continue
		}
		if c := v[0]; wordByte(c) || c >= utf8.RuneSelf {
			return true
		}
		v = v[1:]
	}
	return false
}

// codeEdit returns the edit that replaces the value t[start:end].
func codeEdit(start, end int) edit {
	return edit{start: start, end: end, kind: kCode, repl: Redacted}
}

// wordByte reports whether c, an ASCII byte, is part of a word: a letter,
// a digit or '_'.
func wordByte(c byte) bool { return isDigit(c) || (c|0x20)-'a' < 26 || c == '_' }

// freeCodes appends an edit for each code in free text: a run of minCode
// to maxCode hex digits, at least minCode of them decimal, standing alone
// (not glued to a word, not going on as a date, an amount or a digit
// group), that follows words that read as a code key (SecretKey), after
// separators and the words "is" or "was".
func freeCodes(t []byte, ed []edit) []edit {
	for i := 0; i < len(t); {
		c := t[i]
		if !isHex(c) || i > 0 && (wordByte(t[i-1]) || t[i-1] == '*' || t[i-1] >= utf8.RuneSelf) {
			i++
			continue
		}
		j, digits := i, 0
		for j < len(t) && isHex(t[j]) {
			if isDigit(t[j]) {
				digits++
			}
			j++
		}
		start := i
		i = j
		if digits < minCode || j-start > maxCode {
			continue
		}
		if j < len(t) {
			if c := t[j]; wordByte(c) || c == '*' || c >= utf8.RuneSelf {
				continue
			}
			if c := t[j]; (c == ' ' || c == '-' || c == '.' || c == '/' || c == ':' || c == ',') && j+1 < len(t) && isDigit(t[j+1]) {
				continue
			}
		}
		if start > 1 && isDigit(t[start-2]) && (t[start-1] == ' ' || t[start-1] == '.' || t[start-1] == '-' || t[start-1] == '/' || t[start-1] == ':' || t[start-1] == ',') {
			// After a group of digits, not a word ending in digits
			// ("CVV2 123").
			k := start - 2
			for k > 0 && isDigit(t[k-1]) {
				k--
			}
			if k == 0 || !wordByte(t[k-1]) && t[k-1] < utf8.RuneSelf {
				continue
			}
		}
		if k := keyBefore(t, start); k != nil && secretKey(k) {
			ed = append(ed, codeEdit(start, j))
		}
	}
	return ed
}

// maxPhrase bounds the words read before a value as its key, in bytes.
const maxPhrase = 64

// keyBefore returns the words before t[at], after separators and the words
// "is" and "was", that free text gives as a value's key; nil when there are
// none.
func keyBefore(t []byte, at int) []byte {
	i := at
	seps := 0
	for {
		for i > 0 && seps < 8 {
			c := t[i-1]
			if c == ' ' || c == '\t' || c == ':' || c == '=' || c == '#' || c == '"' || c == '\'' {
				i--
				seps++
				continue
			}
			break
		}
		if seps == 0 {
			return nil
		}
		switch {
		case i >= 2 && bytes.EqualFold(t[i-2:i], []byte("is")) && (i == 2 || !wordByte(t[i-3])):
			i -= 2
			continue
		case i >= 3 && bytes.EqualFold(t[i-3:i], []byte("was")) && (i == 3 || !wordByte(t[i-4])):
			i -= 3
			continue
		}
		break
	}
	end := i
	for i > 0 && end-i < maxPhrase {
		c := t[i-1]
		if wordByte(c) || c == ' ' || c == '-' || c == '.' || c >= utf8.RuneSelf {
			i--
			continue
		}
		break
	}
	for i < end && !utf8.RuneStart(t[i]) {
		i++
	}
	if i == end {
		return nil
	}
	return t[i:end]
}

// query appends the edits of t read as a query string or form body:
// k=v pairs separated by '&' or ';' (or starting after '?'), keys and
// values percent-decoded; a value under a code key is replaced, and every
// value is read through its own layers.
func (ls *layerScan) query(t []byte, depth int, ed []edit) []edit {
	for i := 0; i < len(t); i++ {
		if t[i] != '=' {
			continue
		}
		// The key: back to '&', ';', '?', white space, a quote or the start.
		k := i
		for k > 0 && !queryStop(t[k-1]) && t[k-1] != '=' {
			k--
		}
		v := i + 1
		e := v
		for e < len(t) && !queryStop(t[e]) && t[e] != '=' {
			e++
		}
		if k == i {
			continue
		}
		key, _, _ := decodePercent(t[k:i])
		if key == nil {
			key = t[k:i]
		}
		val := t[v:e]
		if dv, _, ok := decodePercent(val); ok {
			val = dv
		}
		if e > v && secretKey(key) && codeValue(val) {
			ed = append(ed, codeEdit(v, e))
		} else if e > v {
			ed = shiftEdits(ed, ls.text(t[v:e], depth+1), v)
		}
		i = e - 1
	}
	return ed
}

// queryStop reports whether c ends a key or a value of a query string.
func queryStop(c byte) bool {
	switch c {
	case '&', ';', '?', ' ', '\t', '\n', '\r', '"', '\'', '<', '>':
		return true
	}
	return false
}

// headers appends the edits of t read as header lines "Name: value": the
// value of a line whose name is a code key is replaced.
func (ls *layerScan) headers(t []byte, depth int, ed []edit) []edit {
	for ls0 := 0; ls0 < len(t); {
		le := ls0 + bytes.IndexByte(t[ls0:], '\n')
		if le < ls0 {
			le = len(t)
		}
		line := t[ls0:le]
		if c := bytes.IndexByte(line, ':'); c > 0 && c <= maxPhrase && headerName(line[:c]) && !bytes.HasPrefix(line[c+1:], []byte("//")) {
			v, e := ls0+c+1, le
			for v < e && (t[v] == ' ' || t[v] == '\t') {
				v++
			}
			for e > v && (t[e-1] == ' ' || t[e-1] == '\t' || t[e-1] == '\r') {
				e--
			}
			if e > v && secretKey(line[:c]) && codeValue(t[v:e]) {
				ed = append(ed, codeEdit(v, e))
			} else if e > v && e-v < len(t) {
				ed = shiftEdits(ed, ls.text(t[v:e], depth+1), v)
			}
		}
		ls0 = le + 1
	}
	return ed
}

// headerName reports whether n may be a header's name: letters, digits,
// '-', '_', '.' and spaces, starting with a letter.
func headerName(n []byte) bool {
	if c := n[0]; c < utf8.RuneSelf && (c|0x20)-'a' >= 26 {
		return false
	}
	for i, c := range n {
		switch {
		case wordByte(c), c >= utf8.RuneSelf:
		case (c == '-' || c == '.' || c == ' ') && i > 0:
		default:
			return false
		}
	}
	return len(n) > 0
}

// xml appends the edits of t read as XML or HTML: the content of an
// element whose name is a code key, the value of an attribute whose name
// is one, and the value attribute of a tag whose name, key, field or id
// attribute names a code.
func (ls *layerScan) xml(t []byte, depth int, ed []edit) []edit {
	searches := 0 // closing tags looked for past the next '<'
	for i := 0; i < len(t); i++ {
		if t[i] != '<' || i+1 >= len(t) || !nameStart(t[i+1]) {
			continue
		}
		n := i + 1
		for n < len(t) && nameByte(t[n]) {
			n++
		}
		name := t[i+1 : n]
		// Attributes, up to '>'.
		end := n
		var valueAttr [2]int
		pairCode := false
		for end < len(t) && t[end] != '>' && t[end] != '<' {
			if !nameStart(t[end]) {
				end++
				continue
			}
			a := end
			for end < len(t) && nameByte(t[end]) {
				end++
			}
			attr := t[a:end]
			if end+1 >= len(t) || t[end] != '=' || (t[end+1] != '"' && t[end+1] != '\'') {
				continue
			}
			q := t[end+1]
			vs := end + 2
			ve := vs + bytes.IndexByte(t[vs:], q)
			if ve < vs {
				break
			}
			end = ve + 1
			switch {
			case secretKey(attr) && codeValue(t[vs:ve]):
				ed = append(ed, codeEdit(vs, ve))
			case pairName(attr) && secretKey(t[vs:ve]):
				pairCode = true
			case bytes.EqualFold(attr, []byte("value")):
				valueAttr = [2]int{vs, ve}
			}
		}
		if pairCode && valueAttr[1] > valueAttr[0] && codeValue(t[valueAttr[0]:valueAttr[1]]) {
			ed = append(ed, codeEdit(valueAttr[0], valueAttr[1]))
		}
		if end >= len(t) || t[end] != '>' || t[end-1] == '/' {
			continue
		}
		// The element's content, up to its closing tag: replaced under a
		// code word, else read through its own layers when it holds no
		// element.
		// Only a code element's closing tag is looked for past the next
		// '<': reading is linear.
		cs := end + 1
		closing := append(append([]byte("</"), name...), '>')
		ce := bytes.IndexByte(t[cs:], '<')
		if ce < 0 {
			continue
		}
		leafEnd := bytes.HasPrefix(t[cs+ce:], closing) || len(t)-cs-ce >= len(closing) && bytes.EqualFold(t[cs+ce:cs+ce+len(closing)], closing)
		code := secretKey(name)
		if code && !leafEnd && searches < maxSearches {
			searches++
			if ce = indexFold(t[cs:], closing); ce < 0 {
				continue
			}
		} else if !leafEnd {
			continue
		}
		switch content := t[cs : cs+ce]; {
		case code:
			if codeValue(content) {
				ed = append(ed, codeEdit(cs, cs+ce))
			}
		case len(content) > 0:
			ed = shiftEdits(ed, ls.text(content, depth+1), cs)
		}
	}
	return ed
}

// maxSearches bounds the closing tags of code elements with elements
// inside that one text is searched for.
const maxSearches = 16

func nameStart(c byte) bool { return (c|0x20)-'a' < 26 || c == '_' || c >= utf8.RuneSelf }

func nameByte(c byte) bool {
	return wordByte(c) || c == '-' || c == '.' || c == ':' || c >= utf8.RuneSelf
}

// indexFold returns the offset of the first occurrence of sep in s,
// ASCII case ignored, or -1.
func indexFold(s, sep []byte) int {
	for i := 0; i+len(sep) <= len(s); i++ {
		if bytes.EqualFold(s[i:i+len(sep)], sep) {
			return i
		}
	}
	return -1
}

// pairName reports whether k names the member of a name/value pair that
// holds the name: name, key, field, param, parameter, attribute, attr or
// type, in any case.
func pairName(k []byte) bool { return pairWord(k) == pairNameWord }

// pairValue reports whether k names the member of a name/value pair that
// holds the value: value, val, data or content, in any case.
func pairValue(k []byte) bool { return pairWord(k) == pairValueWord }

// pairWord returns the kind of k as the member name of a pair. Most keys
// are rejected by their length and first letter.
func pairWord(k []byte) int {
	switch len(k) {
	case 3:
		switch {
		case eqLower(k, "key"):
			return pairNameWord
		case eqLower(k, "val"):
			return pairValueWord
		}
	case 4:
		switch {
		case eqLower(k, "name"), eqLower(k, "attr"), eqLower(k, "type"):
			return pairNameWord
		case eqLower(k, "data"):
			return pairValueWord
		}
	case 5:
		switch {
		case eqLower(k, "field"), eqLower(k, "param"):
			return pairNameWord
		case eqLower(k, "value"):
			return pairValueWord
		}
	case 7:
		if eqLower(k, "content") {
			return pairValueWord
		}
	case 9:
		if eqLower(k, "parameter") || eqLower(k, "attribute") {
			return pairNameWord
		}
	}
	return pairOther
}

// eqLower reports whether k, ASCII case aside, is s (lower case, of k's
// length).
func eqLower(k []byte, s string) bool {
	for i := range len(s) {
		if k[i]|0x20 != s[i] {
			return false
		}
	}
	return true
}

// valueWord reports whether k, in any case, is one of the words that name
// a value rather than what it is (code, value, number, data, ...): the
// keys read after their parent's key ("security": {"code": ...}).
func valueWord(k []byte) bool {
	switch len(k) {
	case 2:
		return eqLower(k, "no") || eqLower(k, "nr")
	case 3:
		return eqLower(k, "val") || eqLower(k, "num")
	case 4:
		return eqLower(k, "code") || eqLower(k, "data")
	case 5:
		return eqLower(k, "value") || eqLower(k, "digit") || eqLower(k, "block")
	case 6:
		return eqLower(k, "number") || eqLower(k, "digits")
	}
	return false
}
