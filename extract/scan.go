package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The page scanner checks the syntax of a whole body and finds the byte
// spans of the values cardsync needs, without recursion and without a depth
// limit: a card nested 20,000 levels deep must not fail its page (encoding/json
// stops at 10,000), it is set aside on its own. Values are not decoded here.

// errTruncated is returned when the body ends inside a value.
var errTruncated = errors.New("unexpected end of JSON input")

// syntaxError is a malformed body: what was found, and where.
type syntaxError struct {
	offset int
	msg    string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.offset) }

func badChar(b []byte, i int, want string) error {
	return &syntaxError{offset: i, msg: fmt.Sprintf("invalid character %s %s", quoteChar(b[i]), want)}
}

func quoteChar(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("%#02x", c)
	}
	return "'" + string(c) + "'"
}

// span is a value's position in the body: b[start:end].
type span struct{ start, end int }

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString checks the string starting at b[i] (a quote) and returns the
// offset after its closing quote.
func skipString(b []byte, i int) (int, error) {
	if i >= len(b) {
		return i, errTruncated
	}
	if b[i] != '"' {
		return i, badChar(b, i, "looking for the beginning of a string")
	}
	i++
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(b) {
				return len(b), errTruncated
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if i+k >= len(b) {
						return len(b), errTruncated
					}
					if !isHex(b[i+k]) {
						return i + k, badChar(b, i+k, "in a \\u escape")
					}
				}
				i += 6
			default:
				return i + 1, badChar(b, i+1, "in a string escape")
			}
		case c < 0x20:
			return i, badChar(b, i, "in a string (control characters must be escaped)")
		default:
			i++
		}
	}
	return i, errTruncated
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// skipNumber checks the JSON number at b[i].
func skipNumber(b []byte, i int) (int, error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, errTruncated
	case b[i] == '0':
		i++
	case isDigit(b[i]):
		i = skipDigits(b, i)
	default:
		return i, badChar(b, i, "in a number")
	}
	var err error
	if i < len(b) && b[i] == '.' {
		if i, err = skipDigitsAfter(b, i+1, "after a decimal point"); err != nil {
			return i, err
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, err = skipDigitsAfter(b, i, "in an exponent"); err != nil {
			return i, err
		}
	}
	if i == start {
		return i, badChar(b, i, "looking for a number")
	}
	return i, nil
}

// skipDigits returns the index after the digits that start at b[i].
func skipDigits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// skipDigitsAfter skips the one or more digits a number needs at b[i] (a
// fraction's or an exponent's); where says where, in the error.
func skipDigitsAfter(b []byte, i int, where string) (int, error) {
	if i >= len(b) {
		return i, errTruncated
	}
	if !isDigit(b[i]) {
		return i, badChar(b, i, where)
	}
	return skipDigits(b, i), nil
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) {
			return len(b), errTruncated
		}
		if b[i+k] != lit[k] {
			return i + k, badChar(b, i+k, "in literal "+lit)
		}
	}
	return i + len(lit), nil
}

// skipValue checks the value starting at or after b[i] (after white space)
// and returns its span. Containers are followed with an explicit stack.
func skipValue(b []byte, i int) (span, error) {
	var stack []byte // '{' or '['
	i = skipWS(b, i)
	start := i
	var err error
	for {
		// A value is expected at b[i].
		i = skipWS(b, i)
		if i >= len(b) {
			return span{}, errTruncated
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' or ']': empty
				i++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if i, err = skipKey(b, i); err != nil {
					return span{}, err
				}
			}
			continue
		case c == '"':
			i, err = skipString(b, i)
		case c == '-' || isDigit(c):
			i, err = skipNumber(b, i)
		case c == 't':
			i, err = skipLiteral(b, i, "true")
		case c == 'f':
			i, err = skipLiteral(b, i, "false")
		case c == 'n':
			i, err = skipLiteral(b, i, "null")
		default:
			return span{}, badChar(b, i, "looking for the beginning of a value")
		}
		if err != nil {
			return span{}, err
		}
		// A value ended: close every container that ends here, or move to
		// the next element.
		for {
			if len(stack) == 0 {
				return span{start, i}, nil
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return span{}, errTruncated
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i++
				if top == '{' {
					if i, err = skipKey(b, skipWS(b, i)); err != nil {
						return span{}, err
					}
				}
				break
			}
			if top == '{' && b[i] == '}' || top == '[' && b[i] == ']' {
				i++
				stack = stack[:len(stack)-1]
				continue
			}
			if top == '{' {
				return span{}, badChar(b, i, "after an object value (want ',' or '}')")
			}
			return span{}, badChar(b, i, "after an array element (want ',' or ']')")
		}
	}
}

// skipKey checks an object key and its colon and returns the offset of the
// value that follows.
func skipKey(b []byte, i int) (int, error) {
	i, err := skipString(b, i)
	if err != nil {
		return i, err
	}
	i = skipWS(b, i)
	if i >= len(b) {
		return i, errTruncated
	}
	if b[i] != ':' {
		return i, badChar(b, i, "after an object key (want ':')")
	}
	return i + 1, nil
}

// member is one key and value of an object.
type member struct {
	key   string // decoded
	raw   span   // the key as sent, quotes included
	value span
}

// objectMembers checks that b[s] is an object and returns its members in
// order. Duplicate keys are all returned.
func objectMembers(b []byte, s span) ([]member, error) {
	var out []member
	err := elements(b, s, '{', '}', errNotObject, "an object value", func(i int) (int, error) {
		ks := i
		ke, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		key, err := decodeKey(b[ks:ke])
		if err != nil {
			return 0, err
		}
		i = skipWS(b, ke)
		if i >= s.end || b[i] != ':' {
			return 0, &syntaxError{offset: i, msg: "missing ':' after an object key"}
		}
		v, err := skipValue(b, i+1)
		if err != nil {
			return 0, err
		}
		out = append(out, member{key: key, raw: span{ks, ke}, value: v})
		return v.end, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// arrayElements checks that b[s] is an array and returns its elements.
func arrayElements(b []byte, s span) ([]span, error) {
	var out []span
	err := elements(b, s, '[', ']', errNotArray, "an array element", func(i int) (int, error) {
		v, err := skipValue(b, i)
		if err != nil {
			return 0, err
		}
		out = append(out, v)
		return v.end, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// elements walks the object or array b[s] (opened by open, closed by
// close; notErr when b[s] is something else): each reads one element at i
// and returns where it ends; commas and the closing byte are checked here.
func elements(b []byte, s span, open, close byte, notErr error, what string, each func(i int) (int, error)) error {
	i := skipWS(b, s.start)
	if i >= s.end || b[i] != open {
		return notErr
	}
	i = skipWS(b, i+1)
	if i < s.end && b[i] == close {
		return nil
	}
	for {
		end, err := each(i)
		if err != nil {
			return err
		}
		i = skipWS(b, end)
		if i >= s.end {
			return errTruncated
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case close:
			return nil
		default:
			return badChar(b, i, "after "+what+" (want ',' or '"+string(close)+"')")
		}
	}
}

var (
	errNotObject = errors.New("not an object")
	errNotArray  = errors.New("not an array")
)

// decodeKey decodes a checked JSON string; most keys have no escapes.
func decodeKey(raw []byte) (string, error) {
	if !strings.ContainsRune(string(raw), '\\') {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// scanDocument checks that body holds exactly one JSON value (white space
// around it allowed) and returns its span. A body cut short gives a
// transient *ProtocolError, other syntax errors a permanent one.
func scanDocument(body []byte) (span, error) {
	s, err := skipValue(body, 0)
	if err == nil {
		if end := skipWS(body, s.end); end != len(body) {
			return span{}, protoErr("", "trailing data after the JSON value", nil)
		}
		return s, nil
	}
	if errors.Is(err, errTruncated) {
		return span{}, &ProtocolError{Reason: "truncated JSON body", Transient: true, Truncated: true, Err: err}
	}
	return span{}, protoErr("", "malformed JSON body", err)
}
