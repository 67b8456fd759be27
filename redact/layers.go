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
//     key, field, param, attribute or type attribute is a code word has its
//     value attribute replaced (<input name="cvv" value="123">);
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
//
// What is read: a string with 3 decimal digits or more (a code has 3, a
// card number more), or that starts with '{' or '['; other strings cost
// nothing. Text that still holds HTML references or \u escapes is read as
// a structure only once they are decoded (their '&' and ';' would read as
// a query string's separators), and percent-decoded after them. Card
// numbers are judged in a layer with nothing left to decode, so that the
// digits of "&#34;" or "%20" never join a number's.

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
	if depth == 0 {
		// The string as a whole first: a secret is one run of its windows
		// here, while a reading below (a query's value, a header) may hold
		// only pieces of it, and replacing those alone would leave the
		// ends between them, each shorter than a piece, for no pass to find.
		ed = ls.secretsIn(t, ed)
	}
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
	if s == nil || len(t) < minPiece {
		return ed
	}
	// A token may be added while a run redacts (a refresh).
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.pieces) == 0 && len(s.segments) == 0 || !s.mayHold(t) {
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

// Kinds of the member names of a name/value pair.
const (
	pairOther = iota
	pairNameWord
	pairValueWord
)
