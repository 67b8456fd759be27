package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cardsync/cardsync/account"
)

// Card is one item of a card page: its id as text and its JSON exactly as
// the server sent it.
type Card struct {
	// ID is the card's "id": the digits of an integer id, or the string id.
	ID string
	// Raw is the card object, byte-exact from the response body.
	Raw json.RawMessage
}

// Rejected is an item of a card page that cannot be stored as a card: not
// an object, no usable id (missing, null, a fraction, an empty or overlong
// string, control characters), or an id already used on the same page. The
// worker hands it to the warehouse's quarantine, and a rejected item whose
// id could be read still counts as listed.
type Rejected struct {
	// Index is the item's position in data.
	Index int
	// ID is the card id when a valid one could be read, else "".
	ID string
	// Reason says why the item was set aside.
	Reason string
	// Raw is the item as sent.
	Raw json.RawMessage
}

// Pagination is meta.pagination of a card page. Its numbers may come as
// JSON numbers or strings holding one, integral in any spelling (2, 2.0,
// 1e1, 20e-1); a number with a fraction is named in Fractional and read as
// the next integer up, but for per_page (read as 0, unknown), count (read
// as the number of items) and current_page (the page requested, see
// Client.Pages). A total_pages above 2^31-1 is read as 2^31-1.
type Pagination struct {
	Total, Count, PerPage, CurrentPage, TotalPages int
	// Next is links.next as sent (possibly empty); the client never
	// requests it, it only checks it.
	Next string
	// Fractional names the members of meta.pagination whose number had a
	// fraction ("total_pages", ...), in the order of paginationFields; nil
	// when none had.
	Fractional []string
}

// fractional reports whether the member name's number had a fraction.
func (pg Pagination) fractional(name string) bool { return slices.Contains(pg.Fractional, name) }

// Account is the account resource (GET /account). Nil fields were null or
// absent; amounts are exact.
type Account struct {
	account.Snapshot
	// Raw is the "data" object byte-exact, unknown fields included.
	Raw json.RawMessage
	// Missing lists the spec's account fields the response left out. The
	// spec says blank fields are null, never omitted; an omitted one is
	// stored as NULL like a null, and the caller should say so.
	Missing []string
	// Rounded lists the amounts sent with more decimals than the amount
	// scale (PHP float noise such as 1234.5600000000002): they were rounded
	// half to even, and Raw keeps the exact text.
	Rounded []string
}

// isJSONMediaType accepts application/json and any +json type.
func isJSONMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// utf8BOM is the byte order mark a PHP file saved "UTF-8 with BOM" puts
// before every response of the application.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// trimBOM drops one leading UTF-8 byte order mark. RFC 8259 lets a parser
// ignore it, and a PHP source file saved with one prefixes it to every body
// the application sends.
func trimBOM(body []byte) []byte { return bytes.TrimPrefix(body, utf8BOM) }

// topMembers checks that body (a leading BOM skipped) holds exactly one JSON
// object and returns its members by key, the last of duplicates winning as
// in encoding/json and PHP's json_decode. Values are checked for syntax but
// not decoded, so a member nobody reads may nest to any depth. The
// syntax errors are those of scanDocument; what names the document in the
// error when it is not an object.
func topMembers(body []byte, what string) ([]byte, map[string]span, error) {
	body = trimBOM(body)
	doc, err := scanDocument(body)
	if err != nil {
		return nil, nil, err
	}
	members, err := objectMembers(body, doc)
	if err != nil {
		return nil, nil, protoErr("", what+" must be an object, got "+jsonKind(body[doc.start:doc.end]), nil)
	}
	return body, lastWins(members), nil
}

// lastWins indexes members by key; of duplicate keys the last one wins.
func lastWins(members []member) map[string]span {
	m := make(map[string]span, len(members))
	for _, mb := range members {
		m[mb.key] = mb.value
	}
	return m
}

// decodeStrict decodes exactly one JSON value from body (a leading BOM
// skipped) into v and rejects trailing data. Truncated input gives a
// transient *ProtocolError.
func decodeStrict(body []byte, v any) error {
	body = trimBOM(body)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return &ProtocolError{Reason: "truncated JSON body", Transient: true, Truncated: true, Err: err}
		}
		return protoErr("", "malformed JSON body", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return protoErr("", "trailing data after the JSON value", nil)
	}
	return nil
}

// parseInt reads a JSON integer, or a string holding one. Fractions,
// exponents, booleans and null are rejected.
func parseInt(raw json.RawMessage, scrub func(string) string) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0, errors.New("missing")
	}
	s := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
	} else if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, fmt.Errorf("want an integer, got %s", jsonKind(raw))
	}
	if s == "" || len(s) > 20 {
		return 0, fmt.Errorf("want an integer, got %q", truncate(scrub(s), 24))
	}
	for i, r := range s {
		if (r < '0' || r > '9') && !(i == 0 && r == '-' && len(s) > 1) {
			return 0, fmt.Errorf("want an integer, got %q", truncate(scrub(s), 24))
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("integer out of range: %q", truncate(scrub(s), 24))
	}
	return n, nil
}

// parseNumber reads a number of meta.pagination: a JSON number, or a
// string holding one, integral in any spelling (readIntegral: 2, 2.0, 1e1,
// 20e-1, and in a string also leading zeros). It returns the integer, or
// for a number with a fraction its ceiling with fractional true. Booleans,
// null, objects and arrays are refused, and so is a number whose integer
// part has more than 18 digits (errNumberRange, n then the largest int64 of
// its sign).
func parseNumber(raw json.RawMessage, scrub func(string) string) (n int64, fractional bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0, false, errors.New("missing")
	}
	s := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false, err
		}
	} else if raw[0] != '-' && !isDigit(raw[0]) {
		return 0, false, fmt.Errorf("want a number, got %s", jsonKind(raw))
	}
	n, fractional, err = readIntegral(s)
	switch {
	case errors.Is(err, errNumberRange):
		return n, fractional, fmt.Errorf("%w: %q", errNumberRange, truncate(scrub(s), 24))
	case err != nil:
		return 0, false, fmt.Errorf("want a number, got %q", truncate(scrub(s), 24))
	}
	return n, fractional, nil
}

func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// truncate cuts s to at most n bytes and marks the cut with "…". A cut
// never splits a word or a number: it moves back to where the letters
// and digits it falls in begin (so "cvv=987" loses all of "987", not
// "7", and no part of a code or a number is left to look like another),
// unless that word began in the first half.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if r, _ := utf8.DecodeRuneInString(s[cut:]); unicode.IsLetter(r) || unicode.IsDigit(r) {
		back := cut
		for back > 0 {
			r, size := utf8.DecodeLastRuneInString(s[:back])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			back -= size
		}
		if back >= n/2 {
			cut = back
		}
	}
	return s[:cut] + "…"
}

// MaxIDBytes is the longest string id accepted (in bytes of UTF-8).
const MaxIDBytes = 255

// parseCardID reads a card id: any JSON integer (as its canonical decimal
// digits: -0 is 0), or a JSON string of 1..MaxIDBytes bytes of UTF-8 with no
// control characters (spaces, base64 "+/=", Unicode and UUIDs are all fine;
// kept as sent, so the string "-0" is not the number -0). A number with a
// fraction or an exponent (0.0, 1e3) is not an integer id. raw is a checked
// JSON value.
func parseCardID(raw []byte) (string, error) {
	if len(raw) == 0 {
		return "", errors.New("no id")
	}
	switch c := raw[0]; {
	case c == '"':
		if !utf8.Valid(raw) {
			return "", errors.New("string id is not valid UTF-8")
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		if s == "" {
			return "", errors.New("string id is empty")
		}
		if len(s) > MaxIDBytes {
			return "", fmt.Errorf("string id has %d bytes, more than %d", len(s), MaxIDBytes)
		}
		for i, r := range s {
			if unicode.IsControl(r) {
				return "", fmt.Errorf("string id has a control character (U+%04X) at byte %d", r, i)
			}
		}
		return s, nil
	case c == '-' || c >= '0' && c <= '9':
		s := string(raw)
		if strings.ContainsAny(s, ".eE") {
			return "", fmt.Errorf("id %s is a number but not an integer", truncate(s, 40))
		}
		if len(s) > MaxIDBytes {
			return "", fmt.Errorf("integer id has %d digits, more than %d", len(s), MaxIDBytes)
		}
		// JSON allows no leading zeros, so the digits are canonical but
		// for the sign of zero: -0 is the card 0.
		if s == "-0" {
			s = "0"
		}
		return s, nil
	default:
		return "", fmt.Errorf("id is %s, not an integer or a string", jsonKind(raw))
	}
}

// noScrub is the scrub of tests and fuzzers.
func noScrub(s string) string { return s }

// decodeErrorBody extracts message and errors from an error body, bounded.
// The body is read as JSON whatever its content type (a leading BOM
// skipped); one that does not parse gives no message. scrub runs on every
// piece of text before it is cut or cleaned.
func decodeErrorBody(status int, _ string, body []byte, scrub func(string) string) *StatusError {
	se := &StatusError{StatusCode: status}
	body = trimBOM(body)
	var e struct {
		Message json.RawMessage `json:"message"`
		Errors  json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil {
		return se
	}
	var msg string
	if json.Unmarshal(e.Message, &msg) == nil {
		se.Message = truncate(sanitize(scrub(msg)), 200)
	}
	var fields map[string][]string
	if len(e.Errors) > 0 && json.Unmarshal(e.Errors, &fields) == nil && len(fields) > 0 {
		se.Fields = make(map[string][]string, len(fields))
		n := 0
		for k, v := range fields {
			if n++; n > 20 {
				break
			}
			msgs := make([]string, 0, len(v))
			for i, s := range v {
				if i >= 5 {
					break
				}
				msgs = append(msgs, truncate(sanitize(scrub(s)), 200))
			}
			se.Fields[truncate(sanitize(scrub(k)), 64)] = msgs
		}
	}
	return se
}

// sanitize drops control characters from server text before it goes into
// an error or a log line.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
