package redact

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
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
	// sent as a number is stored, masked, as a string.
	Type string
}

// Policy redacts JSON documents: see JSON. A Policy is safe for concurrent
// use and must not be copied.
type Policy struct {
	extra   [][]byte
	secrets *Secrets // nil: none (see NewSecretPolicy)
	// layersOff turns off the layers, name/value pairs and parent.key
	// paths (layers.go): set by tests only, to check the fast pass alone.
	layersOff bool
	pool      sync.Pool // of *walker: scratch space reused between documents
}

// NewPolicy returns a Policy that, on top of the built-in rule for security
// codes and PINs (see SecretKey), drops every key named one of extraKeys, at
// any depth and whatever its value. Extra keys match whole keys, without
// regard to case; surrounding spaces are trimmed and empty names ignored.
func NewPolicy(extraKeys []string) *Policy {
	return &Policy{extra: normalizeKeys(extraKeys)}
}

// JSON returns the redacted canonical form of doc, one JSON value of any
// type, and, when doc is an object, its top-level fields in the order of
// the canonical form, each name once (nil otherwise).
//
// Redaction:
//   - card numbers in every string and every key, at any depth, are masked
//     (see the package documentation);
//   - a number whose value is an integer whose absolute value is a card
//     number (a fraction of zeros and an exponent are allowed:
//     4111111111111111, 4111111111111111.0, 4.111111111111111e15) becomes
//     the JSON string of its masked digits ("411111******1111"), after a
//     '-' when it is negative (-4111111111111111 and
//     -4.111111111111111e15 become "-411111******1111");
//   - keys for which SecretKey is true are dropped with their value,
//     whatever its type (a string, a number, an array such as ["123"], an
//     object such as {"value":"4321"}), except a boolean or null under the
//     built-in rule (extra keys: whatever the value);
//   - except: the value of the key "id" of the top-level object, when it is a
//     string or a number, is the card's identity and is never masked;
//   - every string and key is also read through the layers upstream text
//     uses (JSON text, \uXXXX escapes, HTML references, percent and form
//     encoding, query strings, header lines, XML, free text such as "cvv
//     123"): the card numbers, codes and secrets found there are replaced
//     in the string as sent, never in a decoded copy (see layers.go);
//   - name/value pairs: {"name": "cvv", "value": "123"} loses its value
//     member and ["pin", "1234"] its second element; a value word under a
//     parent that names a code with it ("security": {"code": "123"}) is
//     dropped as a code;
//   - with a Policy from NewSecretPolicy, every string, key and number that
//     holds a secret of its set (or a bearer token) has it replaced by
//     "[REDACTED]", as Secrets.Scrub does (a number so changed becomes a
//     string); JSONCount counts them.
//
// The canonical form is the same for every document that means the same,
// whatever the order of its members:
//   - no insignificant whitespace;
//   - every object's members sorted by key, bytewise on the key's canonical
//     text (the text between its quotes, which is its UTF-8 for every key
//     without '"', '\' or a control character);
//   - of members with the same key (after redaction, at any depth), only the
//     last one is kept, as Go's encoding/json and PHP's json_decode read
//     them;
//   - numbers, true, false and null exactly as sent;
//   - strings as UTF-8 with the fewest escapes: only '"', '\' and
//     U+0000-U+001F are escaped (as \b \f \n \r \t or \u00XX, lower-case
//     hex); so "\/" becomes "/", "\u00e9" becomes "é" and a surrogate pair
//     becomes its character. A lone surrogate escape, which UTF-8 cannot
//     hold, stays an escape in lower case ("\ud800"). This is the form
//     SQLite 3.40's json_extract needs: '$."café"' does not find a key sent
//     as "caf\u00e9".
//
// JSON of its own output returns that output unchanged.
//
// Errors wrap ErrInvalidJSON, ErrTooDeep or ErrInvalidUTF8. The walk and
// the canonical pass are iterative: depth costs no Go stack.
func (p *Policy) JSON(doc []byte) (out []byte, fields []Field, err error) {
	out, fields, _, err = p.JSONCount(doc)
	return out, fields, err
}

// frame is one open array or object.
type frame struct {
	object bool
	// members counts the members (or elements) written so far.
	members int
	// drop, when >= 0, is the length to cut the output back to once the
	// current member's value ends: the member is being dropped.
	drop int
	// pk is where, in the output, the key of the member whose value this
	// object is stands (empty if none); pathCode says whether that key
	// followed by a value word is a code key (0: not known yet, 1: yes,
	// -1: no). See pathSecretKey.
	pk       [2]int
	pathCode int8
	// name is where, in the output, the content of a string that may name
	// a code pair stands: the value of a name member of this object, or
	// this array's first element; hasVal says whether this object has a
	// value member (see notePair).
	name   [2]int
	hasVal bool
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

	scratch []byte // a decoded key
	scan    scan

	// The layers (layerwalk.go): their state, scratch space and counts.
	ls       layerScan
	layerBuf []byte
	counts   counts
	counting bool   // count the card numbers the fast pass masks (JSONStats)
	lastKey  [2]int // where the last key read stands in the output
	pairKey  bool   // the value being read is a pair's name member
	pairs    bool   // the document may hold a name/value pair of a code
	pathBuf  []byte
	pathKey  []byte

	canon canon // the canonical pass (canonical.go)
}

func (w *walker) reset(p *Policy, in, out []byte) {
	w.p, w.in, w.i, w.out = p, in, 0, out
	w.stack = w.stack[:0]
	w.rootObject, w.noMask = false, false
	w.counts, w.counting, w.pairKey, w.pairs = counts{}, false, false, false
	w.ls.secrets = nil
}

// syntaxError returns an ErrInvalidJSON naming the offset and the reason.
func (w *walker) syntaxError(reason string) error {
	return fmt.Errorf("%w at offset %d: %s", ErrInvalidJSON, w.i, reason)
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
	w.lastKey = [2]int{keyStart, len(w.out) - 1}
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

	var scalar, literal bool
	switch c := w.in[w.i]; {
	case c == '"', c == '-', isDigit(c):
		scalar = true
	case c == 't', c == 'f', c == 'n':
		literal = true
	}
	if w.p.extraKey(key) {
		f.drop = mark
		return nil
	}
	if !literal && (secretKey(key) || len(w.stack) > 1 && valueWord(key) && !w.p.layersOff && w.pathSecretKey(f, key)) {
		f.drop = mark
		w.counts.codes++
		return nil
	}
	switch pairWord(key) {
	case pairNameWord:
		w.pairKey = true
	case pairValueWord:
		w.pairKey, f.hasVal = false, true
	default:
		w.pairKey = false
	}
	if len(w.stack) == 1 && f.object {
		w.noMask = scalar && string(key) == "id"
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

// literal copies the literal at w.i, the one its first byte starts: true,
// false or null.
func (w *walker) literal() error {
	lit := "null"
	switch w.in[w.i] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	}
	if len(w.in)-w.i < len(lit) || string(w.in[w.i:w.i+len(lit)]) != lit {
		return w.syntaxError("want true, false or null")
	}
	w.out = append(w.out, lit...)
	w.i += len(lit)
	return nil
}

// number copies the number at w.i, or, if it is an integer whose absolute
// value is a card number and mask is set, writes its masked form as a
// string, after a '-' if the number is negative.
func (w *walker) number(mask bool) error {
	in := w.in
	start := w.i
	i := start
	integer := true
	neg := in[i] == '-'
	if neg {
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
	// The fraction, then the exponent: each needs at least one digit.
	for _, part := range [...]struct {
		starts func(byte) bool
		sign   bool
		want   string
	}{
		{func(c byte) bool { return c == '.' }, false, "want a digit after '.'"},
		{func(c byte) bool { return c == 'e' || c == 'E' }, true, "want a digit in the exponent"},
	} {
		if i >= len(in) || !part.starts(in[i]) {
			continue
		}
		integer = false
		i++
		if part.sign && i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if i >= len(in) || !isDigit(in[i]) {
			w.i = i
			return w.syntaxError(part.want)
		}
		for i < len(in) && isDigit(in[i]) {
			i++
		}
	}
	w.i = i
	num := in[start:i]
	abs := num // without the sign
	if neg {
		abs = num[1:]
	}
	// An integer of fewer than minPAN digits is no card number; a number
	// with an exponent can be shorter than its value ("2691e12").
	if mask && (!integer || len(abs) >= minPAN) {
		var d [maxPAN]byte
		digits := abs
		if !integer {
			digits = integerValue(abs, &d)
		}
		// The digits are one run: its card numbers are masked as in
		// text (see maskText), and then the number is a string.
		if len(digits) >= minPAN {
			mark := len(w.out)
			w.out = append(w.out, '"')
			if neg {
				w.out = append(w.out, '-')
			}
			at := len(w.out)
			w.out = append(w.out, digits...)
			if _, changed := maskText(w.out[at:], false, &w.scan); changed {
				w.out = append(w.out, '"') // counted by maskText in w.scan
				return nil
			}
			w.out = w.out[:mark]
		}
	}
	w.out = append(w.out, num...)
	return nil
}

// integerValue returns the digits of the value of num, a valid JSON number
// without its sign, with a fraction or an exponent, written into d, when
// that value is a positive integer of at most maxPAN digits
// ("4111111111111111.0", "4.111111111111111e15"); nil otherwise.
func integerValue(num []byte, d *[maxPAN]byte) []byte {
	if num[0] == '-' {
		return nil
	}
	// The significant digits, without the '.', and where the decimal
	// point falls among them once the exponent is applied.
	mant, exp := num, 0
	if e := bytes.IndexAny(num, "eE"); e >= 0 {
		mant = num[:e]
		neg := false
		k := e + 1
		switch num[k] {
		case '-':
			neg = true
			k++
		case '+':
			k++
		}
		for ; k < len(num); k++ {
			// Saturate: beyond this no integer of at most maxPAN digits
			// can come out of a document that fits in memory.
			if exp < 1<<40 {
				exp = exp*10 + int(num[k]-'0')
			}
		}
		if neg {
			exp = -exp
		}
	}
	intLen, ndig := len(mant), len(mant)
	if dot := bytes.IndexByte(mant, '.'); dot >= 0 {
		intLen, ndig = dot, ndig-1
	}
	point := intLen + exp // digits of mant (without the '.') before the point
	n := 0
	for k, pos := 0, 0; k < len(mant); k++ {
		c := mant[k]
		if c == '.' {
			continue
		}
		switch {
		case pos >= point:
			if c != '0' {
				return nil // a fraction that is not zero
			}
		case n == 0 && c == '0':
			// A leading zero.
		default:
			if n == maxPAN {
				return nil
			}
			d[n] = c
			n++
		}
		pos++
	}
	// Zeros the exponent adds after the last digit.
	for pos := ndig; pos < point; pos++ {
		if n == 0 {
			break // the value is zero
		}
		if n == maxPAN {
			return nil
		}
		d[n] = '0'
		n++
	}
	return d[:n]
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
