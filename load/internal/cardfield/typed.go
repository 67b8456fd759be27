package cardfield

import (
	"strconv"
	"strings"
	"time"

	"github.com/cardsync/cardsync/load/internal/jsonscan"
	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/redact"
)

// Kind is the class of a card field's values (card_fields.type): what a
// top-level value is, read exactly, without floating point.
type Kind uint8

// The kinds, in card_fields.type's words.
const (
	// KindNull: only nulls seen so far (the type is decided later).
	KindNull Kind = iota
	// KindInteger: a JSON integer within int64, or a string of an optional
	// '-' and digits within int64.
	KindInteger
	// KindDecimal: a JSON number with a fraction or an exponent, or a
	// string holding a plain decimal ("4966.76", "-0.07"), whose whole
	// part is within int64 (its decimals are not bounded: a card's scale
	// rounds them, AmountRules).
	KindDecimal
	// KindBoolean: true or false.
	KindBoolean
	// KindTimestamp: a string in RFC 3339, "YYYY-MM-DD HH:MM:SS[.fff]" or
	// "YYYY-MM-DD".
	KindTimestamp
	// KindText: any other string, a number beyond int64 (1e400), or a field
	// whose first values were of mixed kinds.
	KindText
	// KindObject: a JSON object.
	KindObject
	// KindArray: a JSON array.
	KindArray
)

var kindNames = [...]string{"null", "integer", "decimal", "boolean", "timestamp", "text", "object", "array"}

// String is the kind's card_fields.type.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "text"
}

// ParseKind reads card_fields.type; "" (SQL NULL) and unknown words are
// KindNull.
func ParseKind(s string) Kind {
	for i, n := range kindNames {
		if s == n {
			return Kind(i)
		}
	}
	return KindNull
}

// Value is the class of one value: its kind, and for an integer or a
// decimal its number's text (JSON number or string content) and scale
// (digits after the point, the exponent taken into account).
type Value struct {
	Kind   Kind
	Scale  int
	Number string
}

// ClassifyValue classifies one JSON value (canonical or with whitespace
// around it), exactly: see Kind.
func ClassifyValue(raw []byte) Value { return classify(raw, bytesString) }

// bytesString is string(b).
func bytesString(b []byte) string { return string(b) }

// classify is ClassifyValue, with str making the string of a part of raw
// (a number's text).
func classify(raw []byte, str func([]byte) string) Value {
	raw = jsonscan.TrimSpace(raw)
	if len(raw) == 0 {
		return Value{Kind: KindText}
	}
	switch c := raw[0]; {
	case c == '{':
		return Value{Kind: KindObject}
	case c == '[':
		return Value{Kind: KindArray}
	case c == 't' || c == 'f':
		return Value{Kind: KindBoolean}
	case c == 'n':
		return Value{Kind: KindNull}
	case c == '"':
		return classifyString(raw[1:len(raw)-1], str)
	default:
		return classifyNumber(raw, str)
	}
}

// classifyString classifies a string's content b (canonical: a string
// with an escape is text). Only an integer, a decimal or a timestamp
// costs a string.
func classifyString(b []byte, str func([]byte) string) Value {
	if len(b) == 0 || len(b) > 64 || !isNumberish(b) && !isDateish(b) {
		return Value{Kind: KindText}
	}
	if isInteger(b) {
		return Value{Kind: KindInteger, Number: str(b)}
	}
	if isDateish(b) {
		if isTimestamp(b) {
			return Value{Kind: KindTimestamp}
		}
		return Value{Kind: KindText}
	}
	s := str(b)
	if i := strings.IndexByte(s, '.'); i > 0 && isDigits(strings.TrimPrefix(s[:i], "-")) && isDigits(s[i+1:]) {
		if wholeFits(s) {
			return Value{Kind: KindDecimal, Scale: len(s) - i - 1, Number: s}
		}
	}
	return Value{Kind: KindText}
}

// isNumberish: b holds only digits, '-' and '.', as an integer or a plain
// decimal does.
func isNumberish(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// isDateish: b starts as "YYYY-MM-DD" does.
func isDateish(b []byte) bool {
	return len(b) >= 10 && b[4] == '-' && b[7] == '-' && isDigits(string(b[:4]))
}

func classifyNumber(raw []byte, str func([]byte) string) Value {
	if isInteger(raw) {
		return Value{Kind: KindInteger, Number: str(raw)}
	}
	s := str(raw)
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 1000 || e < -1000 {
			return Value{Kind: KindText}
		}
		mant, exp = s[:i], e
	}
	frac := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		frac = len(mant) - i - 1
	}
	if !wholeFits(s) {
		return Value{Kind: KindText}
	}
	return Value{Kind: KindDecimal, Scale: max(0, frac-exp), Number: s}
}

// wholeFits: the decimal text s, rounded half to even to a whole number,
// is within int64. Its decimals are not bounded: a card's scale
// (AmountRules) rounds them, so 0.30000000000000004 is a decimal however
// many digits the noise has.
func wholeFits(s string) bool {
	_, _, err := money.ParseRound(s, 0)
	return err == nil
}

// isInteger: an optional '-' and digits, within int64.
func isInteger(b []byte) bool {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if !isDigits(string(digits)) {
		return false
	}
	if len(digits) < 19 {
		return true
	}
	_, err := strconv.ParseInt(string(b), 10, 64)
	return err == nil
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

// isTimestamp: RFC 3339, "YYYY-MM-DD HH:MM:SS[.fff]" or "YYYY-MM-DD"
// (isDateish already), parsed with the one layout its shape calls for.
func isTimestamp(b []byte) bool {
	layout := "2006-01-02"
	switch {
	case len(b) == 10:
	case b[10] == ' ':
		layout = "2006-01-02 15:04:05"
	case b[10] == 'T':
		layout = time.RFC3339
	default:
		return false
	}
	_, err := time.Parse(layout, string(b))
	return err == nil
}

// FieldType is a field's type as card_fields holds it: the kind, the
// scale of a decimal (card_fields.scale: the [cards] amount_scale of the
// writer that typed it, the scale of a card without a known currency),
// and its cards_flat minor-units column ("" when none).
type FieldType struct {
	Kind        Kind
	Scale       int
	MinorColumn string
}

// Fit says whether v fits the type t and, for a decimal type, gives v's
// minor units at scale, the scale of the card that holds it
// (AmountRules.Of): never t.Scale alone and never v's own decimals. A null
// fits every type; every value fits text and an undecided (null) type. A
// decimal type takes integers and decimals within int64 minor units at
// scale; a value with more decimals than scale is rounded half to even
// (rounded reports a change), one beyond int64 does not fit.
func (t FieldType) Fit(v Value, scale int) (minor int64, rounded, ok bool) {
	if v.Kind == KindNull {
		return 0, false, true
	}
	switch t.Kind {
	case KindNull, KindText:
		return 0, false, true
	case KindDecimal:
		if v.Kind != KindInteger && v.Kind != KindDecimal {
			return 0, false, false
		}
		a, r, err := money.ParseRound(v.Number, scale)
		if err != nil {
			return 0, false, false
		}
		return a.Minor(), r, true
	default:
		return 0, false, v.Kind == t.Kind
	}
}

// kindSeen is what a batch saw of a field's non-null values: a bit per
// kind and how many values of each kind.
type kindSeen struct {
	mask  uint16
	count [KindArray + 1]int
}

func (k *kindSeen) add(v Value) {
	if v.Kind == KindNull {
		return
	}
	k.mask |= 1 << v.Kind
	k.count[v.Kind]++
}

// merge adds o's values to k.
func (k *kindSeen) merge(o kindSeen) {
	k.mask |= o.mask
	for i, n := range o.count {
		k.count[i] += n
	}
}

// decide is card_fields.type's rule for the first non-null values seen:
// the kind that more than half of them have, integers and decimals
// counted together (integer when all of those are integers, else
// decimal, whose scale the values never set: AmountRules); the others
// are then conflicts, so one "N/A" among amounts never turns an amount
// field into text. No kind with more than half: text; none: null.
func (k kindSeen) decide() Kind {
	total := 0
	for _, n := range k.count {
		total += n
	}
	if total == 0 {
		return KindNull
	}
	if numbers := k.count[KindInteger] + k.count[KindDecimal]; 2*numbers > total {
		if k.count[KindDecimal] == 0 {
			return KindInteger
		}
		return KindDecimal
	}
	for kind := KindBoolean; kind <= KindArray; kind++ {
		if kind != KindText && 2*k.count[kind] > total {
			return kind
		}
	}
	return KindText
}

// FieldValue is one top-level field of a card and its value's class.
type FieldValue struct {
	Name  string
	Value Value
}

// CardValues classifies the non-null top-level values of a card's
// canonical JSON data, whose fields (in the canonical order) are names.
func CardValues(data []byte, fields []redact.Field) []FieldValue {
	out := make([]FieldValue, 0, len(fields))
	// Numbers' texts are parts of one string of data, made when first
	// needed.
	var ds string
	str := func(b []byte) string {
		if ds == "" {
			ds = string(data)
		}
		at := cap(data) - cap(b)
		return ds[at : at+len(b)]
	}
	k := 0
	jsonscan.EachMember(data, func(_, raw []byte) {
		if k < len(fields) {
			if v := classify(raw, str); v.Kind != KindNull {
				out = append(out, FieldValue{Name: fields[k].Name, Value: v})
			}
		}
		k++
	})
	return out
}

// MinorJSON is card_state.minor of a card whose values are vs under the
// field types types, at the card's scale (AmountRules.Of): a JSON object
// of each decimal field's minor units ("" when it has none), its keys in
// canonical JSON text as package redact writes them. conflicts is
// counted, per field, the values that do not fit their field's type, and
// rounded the values rounded half to even to the scale; anyRounded
// reports whether the card has one (card_state.amounts_rounded).
func MinorJSON(vs []FieldValue, types map[string]FieldType, scale int, conflicts, rounded map[string]int) (_ string, anyRounded bool) {
	var b []byte
	for _, fv := range vs {
		t, ok := types[fv.Name]
		if !ok {
			continue
		}
		minor, r, fits := t.Fit(fv.Value, scale)
		if !fits {
			conflicts[fv.Name]++
			continue
		}
		if t.Kind != KindDecimal {
			continue
		}
		if r {
			rounded[fv.Name]++
			anyRounded = true
		}
		if b == nil {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		b = append(b, '"')
		if plainKey(fv.Name) {
			b = append(b, fv.Name...)
		} else {
			b = append(b, CanonicalKey(fv.Name)...)
		}
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, minor, 10)
	}
	if b == nil {
		return "", anyRounded
	}
	return string(append(b, '}')), anyRounded
}

// plainKey: s is its own canonical key text (no '"', '\\' or control
// character).
func plainKey(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// CanonicalKey is a key's text inside the quotes of canonical JSON, as
// package redact writes it: '"' and '\' escaped, control characters as
// \b \f \n \r \t or \u00xx, all else as UTF-8.
func CanonicalKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[r>>4])
				b.WriteByte("0123456789abcdef"[r&0xf])
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}
