package redact

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting a JSON document may have: the number of
// arrays and objects open at once, so "1" has depth 0, "[1]" depth 1 and
// "[[1]]" depth 2. SQLite's JSON functions refuse documents nested deeper
// than 1000 in the same sense.
const MaxDepth = 1000

// Errors returned (wrapped, with the offset and the reason) by Policy.JSON.
// They never quote the document.
var (
	// ErrInvalidJSON means the document is not one valid JSON value.
	ErrInvalidJSON = errors.New("invalid JSON")
	// ErrTooDeep means the document nests arrays and objects deeper than
	// MaxDepth.
	ErrTooDeep = errors.New("JSON nested too deeply")
	// ErrInvalidUTF8 means a string or key holds bytes that are not UTF-8.
	ErrInvalidUTF8 = errors.New("invalid UTF-8 in JSON string")
)

// Field is a top-level key of an object document and the JSON type of its
// value after redaction.
type Field struct {
	// Name is the key as stored: canonical (unescaped) and with its card
	// numbers masked. A lone surrogate escape in a key reads as U+FFFD here.
	Name string
	// Type is object, array, string, number, boolean or null. A card number
	// sent as an integer is stored, masked, as a string.
	Type string
}

// Policy redacts JSON documents: see JSON. A Policy is safe for concurrent
// use and must not be copied.
type Policy struct {
	extra [][]byte
	pool  sync.Pool // of *walker: scratch space reused between documents
}

// NewPolicy returns a Policy that, on top of the built-in rule for security
// codes and PINs (see SecretKey), drops every key named one of extraKeys, at
// any depth and whatever its value. Extra keys match whole keys, without
// regard to case; surrounding spaces are trimmed and empty names ignored.
func NewPolicy(extraKeys []string) *Policy {
	return &Policy{extra: normalizeKeys(extraKeys)}
}

// JSON returns the redacted canonical form of doc, one JSON value of any
// type, and, when doc is an object, its top-level fields in order (nil
// otherwise).
//
// Redaction:
//   - card numbers in every string and every key, at any depth, are masked
//     (see the package documentation);
//   - an integer (digits only: no sign, fraction or exponent) that is a card
//     number becomes the JSON string of its masked form;
//   - keys for which SecretKey is true are dropped with their value, when the
//     value is a string or a number (extra keys: whatever the value);
//   - except: the value of the key "id" of the top-level object, when it is a
//     string or a number, is the card's identity and is never masked.
//
// The canonical form has no insignificant whitespace, keeps keys in their
// order (duplicates too) and numbers, true, false and null exactly as sent,
// and writes strings as UTF-8 with the fewest escapes: only '"', '\\' and
// U+0000-U+001F are escaped (as \b \f \n \r \t or \u00XX, lower-case hex); so
// "\/" becomes "/", "\u00e9" becomes "é" and a surrogate pair becomes its
// character. A lone surrogate escape, which UTF-8 cannot hold, stays an
// escape in lower case ("\ud800"). SQLite's json_extract finds keys only in
// this form. JSON of its own output returns that output unchanged.
//
// Errors wrap ErrInvalidJSON, ErrTooDeep or ErrInvalidUTF8. The walk is
// iterative: depth costs no Go stack.
func (p *Policy) JSON(doc []byte) (out []byte, fields []Field, err error) {
	w, _ := p.pool.Get().(*walker)
	if w == nil {
		w = &walker{}
	}
	w.reset(p, doc, make([]byte, 0, len(doc)+8))
	err = w.walk()
	out = w.out
	if err == nil && w.rootObject {
		fields = w.buildFields()
	}
	w.reset(nil, nil, nil)
	p.pool.Put(w)
	if err != nil {
		return nil, nil, err
	}
	return out, fields, nil
}

// frame is one open array or object.
type frame struct {
	object bool
	// members counts the members (or elements) written so far.
	members int
	// drop, when >= 0, is the length to cut the output back to once the
	// current member's value ends: the member is being dropped.
	drop int
}

// field records a top-level field while the walk runs: its name is
// names[start:end].
type field struct {
	start, end int
	typ        string
}

// walker holds the state of one JSON walk and its reusable scratch space.
type walker struct {
	p   *Policy
	in  []byte
	i   int
	out []byte

	stack      []frame
	rootObject bool
	// noMask is set for the value of the top-level "id".
	noMask bool
	// topValue is where the value of the current top-level member starts
	// in out, or -1.
	topValue int

	fields  []field
	names   []byte // decoded top-level keys, back to back
	scratch []byte // a decoded key
	groups  []group
}

func (w *walker) reset(p *Policy, in, out []byte) {
	w.p, w.in, w.i, w.out = p, in, 0, out
	w.stack = w.stack[:0]
	w.rootObject, w.noMask, w.topValue = false, false, -1
	w.fields, w.names = w.fields[:0], w.names[:0]
}

func (w *walker) buildFields() []Field {
	names := string(w.names)
	fields := make([]Field, len(w.fields))
	for k, f := range w.fields {
		fields[k] = Field{Name: names[f.start:f.end], Type: f.typ}
	}
	return fields
}

// syntaxError returns an ErrInvalidJSON naming the offset and the reason.
func (w *walker) syntaxError(reason string) error {
	return fmt.Errorf("%w at offset %d: %s", ErrInvalidJSON, w.i, reason)
}

// Walk states.
const (
	wantValue  = iota // a value starts here
	wantKey           // an object member's key starts here
	afterValue        // a value just ended
)

// walk reads the JSON value in w.in and writes its redacted canonical form
// to w.out. It is a loop over three states with an explicit stack of the
// open arrays and objects, so nesting costs no Go stack. A dropped member is
// written like any other and cut off the output when its value ends: the
// value still has to be checked, and drops are rare.
func (w *walker) walk() error {
	state := wantValue
	for {
		switch state {
		case wantValue:
			w.space()
			if w.i >= len(w.in) {
				return w.syntaxError("unexpected end, want a value")
			}
			noMask := w.noMask
			w.noMask = false
			switch c := w.in[w.i]; {
			case c == '{' || c == '[':
				if len(w.stack) >= MaxDepth {
					return fmt.Errorf("%w: more than %d nested arrays and objects at offset %d", ErrTooDeep, MaxDepth, w.i)
				}
				object := c == '{'
				if len(w.stack) == 0 {
					w.rootObject = object
				}
				w.stack = append(w.stack, frame{object: object, drop: -1})
				w.out = append(w.out, c)
				w.i++
				w.space()
				end := byte(']')
				if object {
					end = '}'
				}
				if w.i < len(w.in) && w.in[w.i] == end {
					w.i++
					w.out = append(w.out, end)
					w.stack = w.stack[:len(w.stack)-1]
					state = afterValue
				} else if object {
					state = wantKey
				}
			case c == '"':
				if _, err := w.str(!noMask); err != nil {
					return err
				}
				state = afterValue
			case c == '-' || isDigit(c):
				if err := w.number(!noMask); err != nil {
					return err
				}
				state = afterValue
			case c == 't':
				if err := w.literal("true"); err != nil {
					return err
				}
				state = afterValue
			case c == 'f':
				if err := w.literal("false"); err != nil {
					return err
				}
				state = afterValue
			case c == 'n':
				if err := w.literal("null"); err != nil {
					return err
				}
				state = afterValue
			default:
				return w.syntaxError("want a value")
			}

		case wantKey:
			if err := w.key(); err != nil {
				return err
			}
			state = wantValue

		case afterValue:
			if len(w.stack) == 0 {
				w.space()
				if w.i != len(w.in) {
					return w.syntaxError("data after the value")
				}
				return nil
			}
			f := &w.stack[len(w.stack)-1]
			switch {
			case f.drop >= 0:
				w.out = w.out[:f.drop]
				f.drop = -1
			case f.object && len(w.stack) == 1:
				f.members++
				w.fields[len(w.fields)-1].typ = jsonType(w.out[w.topValue])
			default:
				f.members++
			}
			w.space()
			if w.i >= len(w.in) {
				return w.syntaxError("unexpected end, want ',' or a closing bracket")
			}
			switch c := w.in[w.i]; {
			case c == ',':
				w.i++
				if f.object {
					w.space()
					state = wantKey
				} else {
					w.out = append(w.out, ',')
					state = wantValue
				}
			case c == '}' && f.object, c == ']' && !f.object:
				w.i++
				w.out = append(w.out, c)
				w.stack = w.stack[:len(w.stack)-1]
			default:
				return w.syntaxError("want ',' or a closing bracket")
			}
		}
	}
}

// key reads an object member's key and the colon after it, writes them
// (after a comma if needed) and decides whether the member is dropped.
func (w *walker) key() error {
	f := &w.stack[len(w.stack)-1]
	if w.i >= len(w.in) || w.in[w.i] != '"' {
		return w.syntaxError("want a string key")
	}
	mark := len(w.out)
	if f.members > 0 {
		w.out = append(w.out, ',')
	}
	keyStart := len(w.out) + 1
	escaped, err := w.str(true)
	if err != nil {
		return err
	}
	key := w.out[keyStart : len(w.out)-1]
	if escaped {
		w.scratch = unescape(w.scratch[:0], key)
		key = w.scratch
	}
	w.space()
	if w.i >= len(w.in) || w.in[w.i] != ':' {
		return w.syntaxError("want ':' after an object key")
	}
	w.i++
	w.space()
	if w.i >= len(w.in) {
		return w.syntaxError("unexpected end, want a value")
	}
	w.out = append(w.out, ':')

	var scalar bool
	switch c := w.in[w.i]; {
	case c == '"', c == '-', isDigit(c):
		scalar = true
	}
	if w.p.extraKey(key) || scalar && secretWords(key) {
		f.drop = mark
		return nil
	}
	if len(w.stack) == 1 && f.object {
		w.noMask = scalar && string(key) == "id"
		start := len(w.names)
		w.names = append(w.names, key...)
		w.fields = append(w.fields, field{start: start, end: len(w.names)})
		w.topValue = len(w.out)
	}
	return nil
}

// space skips insignificant whitespace.
func (w *walker) space() {
	for w.i < len(w.in) {
		switch w.in[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

func (w *walker) literal(lit string) error {
	if len(w.in)-w.i < len(lit) || string(w.in[w.i:w.i+len(lit)]) != lit {
		return w.syntaxError("want true, false or null")
	}
	w.out = append(w.out, lit...)
	w.i += len(lit)
	return nil
}

// number copies the number at w.i, or, if it is an integer that is a card
// number and mask is set, writes its masked form as a string.
func (w *walker) number(mask bool) error {
	in := w.in
	start := w.i
	i := start
	integer := true
	if in[i] == '-' {
		integer = false
		i++
	}
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case i < len(in) && in[i] >= '1' && in[i] <= '9':
		for i < len(in) && isDigit(in[i]) {
			i++
		}
	default:
		w.i = i
		return w.syntaxError("want a digit")
	}
	if i < len(in) && in[i] == '.' {
		integer = false
		i++
		if i >= len(in) || !isDigit(in[i]) {
			w.i = i
			return w.syntaxError("want a digit after '.'")
		}
		for i < len(in) && isDigit(in[i]) {
			i++
		}
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		integer = false
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if i >= len(in) || !isDigit(in[i]) {
			w.i = i
			return w.syntaxError("want a digit in the exponent")
		}
		for i < len(in) && isDigit(in[i]) {
			i++
		}
	}
	w.i = i
	num := in[start:i]
	if mask && integer && len(num) >= minPAN && len(num) <= maxPAN && networkLengths(num)&(1<<len(num)) != 0 && luhn(num) {
		w.out = append(w.out, '"')
		at := len(w.out)
		w.out = append(w.out, num...)
		for k := at + 6; k < len(w.out)-4; k++ {
			w.out[k] = '*'
		}
		w.out = append(w.out, '"')
		return nil
	}
	w.out = append(w.out, num...)
	return nil
}

// str reads the string at w.i and writes it in canonical form, its card
// numbers masked if mask is set. It reports whether the canonical form holds
// an escape.
func (w *walker) str(mask bool) (escaped bool, err error) {
	in := w.in
	i := w.i + 1
	out := append(w.out, '"')
	start := len(out)
	digits := 0
	for {
		j := i
		// Eight bytes at a time while none needs a look: no control
		// character, quote, backslash or non-ASCII byte.
		for j+8 <= len(in) {
			x := binary.LittleEndian.Uint64(in[j:])
			if m := special8(x); m != 0 {
				k := bits.TrailingZeros64(m) >> 3 // the first special byte
				digits += digits8(x & (1<<(8*k) - 1))
				j += k
				break
			}
			digits += digits8(x)
			j += 8
		}
		for j < len(in) {
			c := in[j]
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				break
			}
			if isDigit(c) {
				digits++
			}
			j++
		}
		out = append(out, in[i:j]...)
		i = j
		if i >= len(in) {
			w.i, w.out = i, out
			return false, w.syntaxError("unterminated string")
		}
		switch c := in[i]; {
		case c == '"':
			i++
			if mask && digits >= minPAN {
				w.groups, _ = maskText(out[start:], escaped, w.groups)
			}
			w.i, w.out = i, append(out, '"')
			return escaped, nil
		case c >= 0x80:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				w.i, w.out = i, out
				return false, fmt.Errorf("%w at offset %d", ErrInvalidUTF8, i)
			}
			out = append(out, in[i:i+size]...)
			i += size
		case c < 0x20:
			w.i, w.out = i, out
			return false, w.syntaxError("control character in string")
		default: // backslash
			var esc bool
			var d bool
			out, i, esc, d, err = unescapeOne(in, i, out)
			if err != nil {
				w.i, w.out = i, out
				return false, w.syntaxError(err.Error())
			}
			escaped = escaped || esc
			if d {
				digits++
			}
		}
	}
}

// Byte-parallel tests on eight bytes (see "Bit Twiddling Hacks",
// haszero/hasless/countbetween).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	lows  = 0x7f7f7f7f7f7f7f7f
)

// special8 returns a mask with bit 7 of the first byte of x (in memory
// order) that is a control character, '"', '\\' or >= 0x80 set, and maybe of
// later bytes; zero if there is none.
func special8(x uint64) uint64 {
	quote := x ^ (ones * '"')
	bslash := x ^ (ones * '\\')
	return (x | (x - ones*0x20) | (quote-ones)&^quote | (bslash-ones)&^bslash) & highs
}

// digits8 counts the ASCII digits among the eight bytes in x, which are all
// below 0x80.
func digits8(x uint64) int {
	// Per byte: bit 7 set when the byte is > '0'-1 and < '9'+1.
	gt := x + ones*(127-('0'-1)) // bit 7 set when byte > '0'-1
	lt := ones*(127+('9'+1)) - x // bit 7 set when byte < '9'+1
	return bits.OnesCount64(gt & lt & highs)
}

// Reasons for a bad escape.
var (
	errBadEscape    = errors.New("invalid escape in string")
	errBadUnicode   = errors.New("invalid \\u escape in string")
	errUnterminated = errors.New("unterminated string")
)

// unescapeOne reads the escape at in[i] (a backslash) and appends its
// canonical form to out. It returns the new output, the offset after the
// escape, whether the canonical form is itself an escape, and whether the
// character is an ASCII digit.
func unescapeOne(in []byte, i int, out []byte) (_ []byte, _ int, esc, digit bool, err error) {
	if i+1 >= len(in) {
		return out, i, false, false, errUnterminated
	}
	switch in[i+1] {
	case '"', '\\':
		return append(out, '\\', in[i+1]), i + 2, true, false, nil
	case '/':
		return append(out, '/'), i + 2, false, false, nil
	case 'b', 'f', 'n', 'r', 't':
		return append(out, '\\', in[i+1]), i + 2, true, false, nil
	case 'u':
	default:
		return out, i, false, false, errBadEscape
	}
	r, ok := hex4(in, i+2)
	if !ok {
		return out, i, false, false, errBadUnicode
	}
	i += 6
	switch {
	case r >= 0xD800 && r < 0xDC00:
		if r2, ok := hex4(in, i+2); ok && in[i] == '\\' && in[i+1] == 'u' && r2 >= 0xDC00 && r2 < 0xE000 {
			return utf8.AppendRune(out, (r-0xD800)<<10|(r2-0xDC00)+0x10000), i + 6, false, false, nil
		}
		return appendU(out, r), i, true, false, nil
	case r >= 0xDC00 && r < 0xE000:
		return appendU(out, r), i, true, false, nil
	case r < 0x20 || r == '"' || r == '\\':
		return appendControl(out, byte(r)), i, true, false, nil
	}
	return utf8.AppendRune(out, r), i, false, r >= '0' && r <= '9', nil
}

// hex4 parses the four hex digits at in[i:i+4].
func hex4(in []byte, i int) (rune, bool) {
	if i+4 > len(in) {
		return 0, false
	}
	var r rune
	for _, c := range in[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

const hexDigits = "0123456789abcdef"

// appendU appends \uXXXX in lower-case hex.
func appendU(out []byte, r rune) []byte {
	return append(out, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}

// appendControl appends the canonical escape of '"', '\\' or a control
// character.
func appendControl(out []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(out, '\\', c)
	case '\b':
		return append(out, '\\', 'b')
	case '\f':
		return append(out, '\\', 'f')
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	}
	return appendU(out, rune(c))
}

// unescape appends to dst the text of canonical string content s: escapes
// decoded, a lone surrogate as U+FFFD.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(s, i+1)
			i += 4
			if r >= 0xD800 && r < 0xE000 {
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"' or '\\'
			dst = append(dst, s[i])
		}
	}
	return dst
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
	}
	return "number"
}
