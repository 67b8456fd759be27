package redact

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Decode, then scan: every string value and key of a document, once the
// fast pass has masked its plain card numbers, is also read through the
// layers upstream text uses, and the rules apply to what each layer yields.
//
// A layer is either an encoding, decoded with an offset map from each
// decoded byte back to the source bytes it came from:
//
//   - JSON escapes (\uXXXX, \" and the others, as Go, .NET and PHP write
//     them);
//   - HTML/XML character references (&amp; &#39; &#x27; and the common
//     named ones);
//   - percent-encoding, with '+' as a space in text that holds no space
//     (a form body), except a '+' before a digit at the start of a value,
//     which is the international phone number form;
//
// or a structure whose parts are substrings of the text:
//
//   - JSON text (the text, trimmed, starts with '{' or '[' and parses):
//     every rule of Policy.JSON, codes under code keys at any depth, a key
//     read with its parent's key before it ("security": {"code": ...} is a
//     security code), name/value pairs, card numbers in strings, keys and
//     integers;
//   - query strings and form bodies: k=v separated by '&' or ';';
//   - header lines "Name: value", one a line;
//   - XML/HTML elements <k>v</k>, attributes k="v", and a tag whose name,
//     key, field or id attribute is a code word has its value attribute
//     removed (<input name="cvv" value="123">);
//   - free text, where a code word is followed by its value: the words
//     before a run of 3 to 16 hex digits holding at least 3 decimal digits,
//     after separators (spaces, ':', '=', '#', quotes) and the words "is"
//     or "was", are read as a key ("cvv 123", "CVV2=123", "pin is 1234",
//     "security code: 123"); a run that goes on as a date, an amount or a
//     number in groups ("2024-01-15", "12.50", "4111 1111") is no code.
//
// Layers nest at most maxLayers deep, and the text read through them is
// bounded by a budget linear in the string's length. Under a code word the
// value is replaced by "[REDACTED]" (in JSON text a string's content; any
// other JSON value becomes null), unless it is empty, true, false, null or
// already "[REDACTED]": flags stay. Card numbers are masked digit by digit:
// the source bytes of a masked digit ("%34", "&#52;", "\u0034") become one
// '*'. What is stored is the source text with those parts replaced, never
// the decoded form.

// maxLayers bounds how deep layers nest.
const maxLayers = 4

// minCode and maxCode bound the length of a code's value in free text: a
// card security code has 3 or 4 digits, a PIN 4 to 12, a PIN block 16 hex
// digits.
const (
	minCode = 3
	maxCode = 16
)

// Kinds of edits, in order of precedence when edits overlap.
const (
	kMask   = iota // one masked digit of a card number: '*'
	kCard          // an integer in JSON text that is a card number: its masked form as a string
	kSecret        // a secret of the policy's set: "[REDACTED]"
	kCode          // a code's value: "[REDACTED]" (or null in JSON text)
)

// edit replaces text[start:end] with repl.
type edit struct {
	start, end int
	kind       int
	repl       string
	// first marks the first masked digit of a card number: counting them
	// counts card numbers, however many layers found each.
	first bool
}

// omap maps each byte of a decoded text back to the span of source bytes
// it came from: byte i came from src[s[i]:e[i]].
type omap struct{ s, e []int }

func (m *omap) add(start, end, n int) {
	for ; n > 0; n-- {
		m.s = append(m.s, start)
		m.e = append(m.e, end)
	}
}

// layerScan holds the state of reading one string through its layers.
type layerScan struct {
	secrets *Secrets // the policy's, read-locked by the caller; nil: none
	budget  int      // bytes of text left to read
	sc      scan
}

// text returns the edits, in t's offsets, that the rules make to t, a text
// at layer depth (0: the string itself, whose plain card numbers the fast
// pass has masked already).
func (ls *layerScan) text(t []byte, depth int) []edit {
	if ls.budget -= len(t); ls.budget < 0 || len(t) == 0 {
		return nil
	}
	// One pass finds the markers of the layers, and whether a hex digit
	// follows a separator: a code in free text needs one.
	var marks, cand, prev uint16
	for _, c := range t {
		k := markerOf[c]
		marks |= k
		cand |= prev & (k << 1)
		prev = k
	}
	if cand&mSep != 0 {
		marks |= mCode
	}
	var ed []edit
	isJSON := false
	if depth < maxLayers && jsonLike(t) {
		ed, isJSON = ls.jsonText(t, depth+1)
	}
	// The readings of the text as it stands: not of JSON text (its own
	// reading covers it), and not of text that still holds HTML
	// references or \u escapes, an outer encoding: "&#x73;_pin=tru&#x65;"
	// is no pair "_pin" = "tru", and "%\u00326" is an encoded '&'. Their
	// decoded layer is read instead, and percent-decoded in its turn.
	refs := depth < maxLayers && (marks&mAmp != 0 && hasEntity(t) || marks&mBackslash != 0 && hasUEscape(t))
	if !isJSON {
		if depth > 0 {
			ed = ls.cards(t, depth, ed)
			ed = ls.secretsIn(t, ed)
		}
		if !refs {
			if marks&mCode != 0 {
				ed = freeCodes(t, ed)
			}
			if depth < maxLayers && marks&mColon != 0 {
				ed = ls.headers(t, depth, ed)
			}
			if depth < maxLayers && marks&mLt != 0 {
				ed = ls.xml(t, depth, ed)
			}
		}
		if !refs && depth < maxLayers && marks&mEq != 0 {
			ed = ls.query(t, depth, ed)
		}
	}
	if depth >= maxLayers || marks == 0 {
		return ed
	}
	if marks&mBackslash != 0 {
		if u, m, ok := decodeBackslash(t); ok {
			ed = mapEdits(ed, ls.text(u, depth+1), m, encBackslash)
		}
	}
	if marks&mAmp != 0 {
		if u, m, ok := decodeEntities(t); ok {
			ed = mapEdits(ed, ls.text(u, depth+1), m, encEntity)
		}
	}
	if marks&(mPercent|mPlus) != 0 && !refs {
		if u, m, ok := decodePercent(t); ok {
			ed = mapEdits(ed, ls.text(u, depth+1), m, encPercent)
		}
	}
	return ed
}

// Marker bytes: a layer is decoded only when its marker is present. mSep
// marks a separator before a code's value, mHex a hex digit: a separator
// then a hex digit sets mCode (mHex >> 1), the sign of a value after a
// key in free text.
const (
	mBackslash = 1 << iota
	mAmp
	mPercent
	mPlus
	mEq
	mColon
	mLt
	mCode
	mHex
	mSep = mHex << 1
)

var markerOf = func() (m [256]uint16) {
	for c, k := range map[byte]uint16{'\\': mBackslash, '&': mAmp, '%': mPercent, '+': mPlus, '=': mEq | mSep, ':': mColon | mSep, '<': mLt,
		' ': mSep, '\t': mSep, '#': mSep, '"': mSep, '\'': mSep} {
		m[c] = k
	}
	for _, c := range []byte("0123456789abcdefABCDEF") {
		m[c] |= mHex
	}
	return m
}()

// jsonLike reports whether t, trimmed, starts with '{' or '[' and ends
// with the matching bracket.
func jsonLike(t []byte) bool {
	t = bytes.TrimSpace(t)
	return len(t) >= 2 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']')
}

// mapEdits appends to ed the edits sub, made in a text decoded from ed's
// text through m, mapped back to the source bytes; enc writes a
// replacement in the source's encoding.
func mapEdits(ed, sub []edit, m omap, enc func(string) string) []edit {
	for _, e := range sub {
		repl := e.repl
		if repl != "*" && repl != Redacted && repl != "null" {
			repl = enc(repl)
		}
		ed = append(ed, edit{start: m.s[e.start], end: m.e[e.end-1], kind: e.kind, repl: repl, first: e.first})
	}
	return ed
}

// encBackslash writes s as JSON string content.
func encBackslash(s string) string {
	b := make([]byte, 0, len(s)+4)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			b = appendControl(b, c)
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

// encEntity writes s as HTML text.
func encEntity(s string) string {
	r := strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}

// encPercent writes s percent-encoded, but for letters, digits and
// "*[]-._".
func encPercent(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if wordByte(c) && c != '_' || strings.IndexByte("*[]-._", c) >= 0 {
			b = append(b, c)
			continue
		}
		b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
	}
	return string(b)
}

// shiftEdits appends to ed the edits sub, made in t[off:], in t's offsets.
func shiftEdits(ed, sub []edit, off int) []edit {
	for _, e := range sub {
		e.start += off
		e.end += off
		ed = append(ed, e)
	}
	return ed
}

// cards appends an edit for each digit of a card number in t that masking
// would write '*' over. A text that still holds an escape of a layer
// below is judged once decoded: the digits of "&#34;" or "%20" are no
// digits of the text, and would join its numbers into false card numbers.
func (ls *layerScan) cards(t []byte, depth int, ed []edit) []edit {
	if countDigits(t) < minLayerPAN || depth < maxLayers && encoded(t) {
		return ed
	}
	masked := append([]byte(nil), t...)
	n, changed := maskText(masked, false, &ls.sc)
	if !changed {
		return ed
	}
	masked = masked[:n]
	// maskText only writes one '*' over each masked digit: walk both. A
	// masked digit with an unmasked digit before it since the last masked
	// one starts a card number.
	first := true
	for i, j := 0, 0; i < len(t) && j < len(masked); {
		_, w := utf8.DecodeRune(t[i:])
		if masked[j] == '*' && t[i] != '*' {
			ed = append(ed, edit{start: i, end: i + w, kind: kMask, repl: "*", first: first})
			first = false
			i, j = i+w, j+1
			continue
		}
		if masked[j] != '*' && isDigit(masked[j]) {
			first = true
		}
		i, j = i+w, j+w
	}
	return ed
}

// minLayerPAN is the fewest digits a text read through a layer needs
// before it is scanned for card numbers.
const minLayerPAN = 12

// secretsIn appends an edit for each secret of the policy's set (of 8
// bytes or more, or a piece of one) in t, outside existing "[REDACTED]".
func (ls *layerScan) secretsIn(t []byte, ed []edit) []edit {
	s := ls.secrets
	if s == nil || len(s.long) == 0 || len(t) < minPiece || !s.mayHold(t) {
		return ed
	}
	text := string(t)
	var spans []span
	for from := 0; from < len(text); {
		end, next := len(text), len(text)
		if k := strings.Index(text[from:], Redacted); k >= 0 {
			end, next = from+k, from+k+len(Redacted)
		}
		spans = s.find(text, from, end, spans, true)
		from = next
	}
	for _, sp := range spans {
		ed = append(ed, edit{start: sp.start, end: sp.end, kind: kSecret, repl: Redacted})
	}
	return ed
}

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

// isHex reports whether c is an ASCII hex digit.
func isHex(c byte) bool { return isDigit(c) || (c|0x20)-'a' < 6 }

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

// Kinds of the member names of a name/value pair.
const (
	pairOther = iota
	pairNameWord
	pairValueWord
)

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

// decodeBackslash decodes the JSON escapes of t (\" \\ \/ \b \f \n \r \t
// \uXXXX, a surrogate pair as its character and a lone surrogate as
// U+FFFD); a backslash that starts no valid escape stays. ok is false
// when t holds no escape.
func decodeBackslash(t []byte) (u []byte, m omap, ok bool) {
	if !hasEscape(t) {
		return nil, m, false
	}
	u = make([]byte, 0, len(t))
	for i := 0; i < len(t); {
		c := t[i]
		if c != '\\' || i+1 >= len(t) {
			u = append(u, c)
			m.add(i, i+1, 1)
			i++
			continue
		}
		var r rune
		n := 2
		switch t[i+1] {
		case '"', '\\', '/':
			r = rune(t[i+1])
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			v, hok := hex4(t, i+2)
			if !hok {
				r = -1
				break
			}
			n = 6
			r = v
			if v >= 0xD800 && v < 0xDC00 {
				if v2, ok2 := hex4(t, i+8); ok2 && i+7 < len(t) && t[i+6] == '\\' && t[i+7] == 'u' && v2 >= 0xDC00 && v2 < 0xE000 {
					r = (v-0xD800)<<10 | (v2 - 0xDC00) + 0x10000
					n = 12
				} else {
					r = utf8.RuneError
				}
			} else if v >= 0xDC00 && v < 0xE000 {
				r = utf8.RuneError
			}
		default:
			r = -1
		}
		if r < 0 {
			u = append(u, c)
			m.add(i, i+1, 1)
			i++
			continue
		}
		ok = true
		k := len(u)
		u = utf8.AppendRune(u, r)
		m.add(i, i+n, len(u)-k)
		i += n
	}
	return u, m, ok
}

// entities maps the named character references decoded (HTML5 names of
// the characters that matter to the layers, and the common ones).
var entities = map[string]string{
	"amp": "&", "lt": "<", "gt": ">", "quot": `"`, "apos": "'", "nbsp": "\u00a0",
	"colon": ":", "equals": "=", "num": "#", "plus": "+", "percnt": "%", "sol": "/",
	"bsol": `\`, "lsqb": "[", "rsqb": "]", "lbrack": "[", "rbrack": "]", "lcub": "{", "rcub": "}",
	"lbrace": "{", "rbrace": "}", "comma": ",", "period": ".", "semi": ";", "quest": "?",
	"excl": "!", "commat": "@", "ast": "*", "lowbar": "_", "hyphen": "\u2010", "dash": "\u2010",
	"ndash": "\u2013", "mdash": "\u2014", "ensp": "\u2002", "emsp": "\u2003", "thinsp": "\u2009",
	"Tab": "\t", "NewLine": "\n", "shy": "\u00ad", "zwsp": "\u200b", "ZeroWidthSpace": "\u200b",
}

// decodeEntities decodes the character references of t: &name; for the
// names in entities, &#ddd; and &#xhh;. ok is false when there is none.
func decodeEntities(t []byte) (u []byte, m omap, ok bool) {
	for i := 0; ; i++ {
		if i == len(t) {
			return nil, m, false
		}
		if t[i] == '&' {
			if _, n := entityAt(t[i:]); n > 0 {
				break
			}
		}
	}
	u = make([]byte, 0, len(t))
	for i := 0; i < len(t); {
		c := t[i]
		if c == '&' {
			if rep, n := entityAt(t[i:]); n > 0 {
				ok = true
				k := len(u)
				u = append(u, rep...)
				m.add(i, i+n, len(u)-k)
				i += n
				continue
			}
		}
		u = append(u, c)
		m.add(i, i+1, 1)
		i++
	}
	return u, m, ok
}

// entityAt returns the text of the character reference at the start of t
// (a '&') and its length, or 0. As HTML5 reads them, a numeric reference
// needs no ';', nor do the legacy names amp, lt, gt, quot and nbsp.
func entityAt(t []byte) (string, int) {
	if len(t) < 3 {
		return "", 0
	}
	if t[1] != '#' {
		if end := bytes.IndexByte(t[:min(len(t), 34)], ';'); end >= 2 {
			if rep, found := entities[string(t[1:end])]; found {
				return rep, end + 1
			}
		}
		for _, n := range [...]string{"amp", "lt", "gt", "quot", "nbsp", "AMP", "LT", "GT", "QUOT"} {
			if bytes.HasPrefix(t[1:], []byte(n)) {
				return entities[strings.ToLower(n)], 1 + len(n)
			}
		}
		return "", 0
	}
	i, base := 2, rune(10)
	if i < len(t) && t[i]|0x20 == 'x' {
		i, base = 3, 16
	}
	start := i
	var r rune
	for i < len(t) && (isDigit(t[i]) || base == 16 && isHex(t[i])) {
		if r < 0x110000 {
			r = r*base + rune(unhex(t[i]))
		}
		i++
	}
	if i == start {
		return "", 0
	}
	if i < len(t) && t[i] == ';' {
		i++
	}
	if r > utf8.MaxRune || r >= 0xD800 && r < 0xE000 || r == 0 {
		r = utf8.RuneError
	}
	return string(r), i
}

// decodePercent decodes %XX escapes and, in text that holds no space,
// '+' as a space (a form body), except a '+' before a digit at the start of
// the text or of a value, the international phone number form. ok is
// false when nothing was decoded.
func decodePercent(t []byte) (u []byte, m omap, ok bool) {
	plus := bytes.IndexByte(t, ' ') < 0
	for i := 0; ; i++ {
		if i == len(t) {
			return nil, m, false
		}
		if pctAt(t, i) || t[i] == '+' && plus && plusSpace(t, i) {
			break
		}
	}
	u = make([]byte, 0, len(t))
	for i := 0; i < len(t); {
		c := t[i]
		switch {
		case pctAt(t, i):
			u = append(u, unhex(t[i+1])<<4|unhex(t[i+2]))
			m.add(i, i+3, 1)
			ok = true
			i += 3
			continue
		case c == '+' && plus && plusSpace(t, i):
			u = append(u, ' ')
			m.add(i, i+1, 1)
			ok = true
			i++
			continue
		}
		u = append(u, c)
		m.add(i, i+1, 1)
		i++
	}
	return u, m, ok
}

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// pctAt reports whether a %XX escape starts at t[i].
func pctAt(t []byte, i int) bool {
	return t[i] == '%' && i+2 < len(t) && isHex(t[i+1]) && isHex(t[i+2])
}

// plusSpace reports whether the '+' at t[i] of a form body stands for a
// space: it does but before a digit at the start of the text or of a
// value (the international phone number form).
func plusSpace(t []byte, i int) bool {
	return !(i+1 < len(t) && isDigit(t[i+1]) && (i == 0 || strings.IndexByte("=&;?:", t[i-1]) >= 0))
}

// hasEscape reports whether t holds a JSON escape decodeBackslash decodes.
func hasEscape(t []byte) bool {
	for i := 0; i+1 < len(t); i++ {
		if t[i] != '\\' {
			continue
		}
		switch t[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			return true
		case 'u':
			if _, ok := hex4(t, i+2); ok {
				return true
			}
		}
	}
	return false
}

// encoded reports whether t holds an escape a layer decodes.
func encoded(t []byte) bool {
	if hasEscape(t) {
		return true
	}
	plus := bytes.IndexByte(t, ' ') < 0
	for i, c := range t {
		switch {
		case c == '&':
			if _, n := entityAt(t[i:]); n > 0 {
				return true
			}
		case c == '%':
			if pctAt(t, i) {
				return true
			}
		case c == '+':
			if plus && plusSpace(t, i) {
				return true
			}
		}
	}
	return false
}

// hasEntity reports whether t holds a character reference decodeEntities
// decodes.
func hasEntity(t []byte) bool {
	for i, c := range t {
		if c == '&' {
			if _, n := entityAt(t[i:]); n > 0 {
				return true
			}
		}
	}
	return false
}

// hasUEscape reports whether t holds a \uXXXX escape.
func hasUEscape(t []byte) bool {
	for i := 0; i+1 < len(t); i++ {
		if t[i] == '\\' && t[i+1] == 'u' {
			if _, ok := hex4(t, i+2); ok {
				return true
			}
		}
	}
	return false
}
