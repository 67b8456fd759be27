package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
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

// Pagination is meta.pagination of a card page.
type Pagination struct {
	Total, Count, PerPage, CurrentPage, TotalPages int
	// Next is links.next as sent (possibly empty); the client never
	// requests it, it only checks it.
	Next string
}

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

// decodeStrict decodes exactly one JSON value from body into v and rejects
// trailing data. Truncated input gives a transient *ProtocolError.
func decodeStrict(body []byte, v any) error {
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// MaxIDBytes is the longest string id accepted (in bytes of UTF-8).
const MaxIDBytes = 255

// parseCardID reads a card id: any JSON integer (as its digits), or a JSON
// string of 1..MaxIDBytes bytes of UTF-8 with no control characters (spaces,
// base64 "+/=", Unicode and UUIDs are all fine). raw is a checked JSON value.
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
		return s, nil
	default:
		return "", fmt.Errorf("id is %s, not an integer or a string", jsonKind(raw))
	}
}

// wirePagination is meta.pagination. RawMessage everywhere: no float64 on
// the data path.
type wirePagination struct {
	Total       json.RawMessage `json:"total"`
	Count       json.RawMessage `json:"count"`
	PerPage     json.RawMessage `json:"per_page"`
	CurrentPage json.RawMessage `json:"current_page"`
	TotalPages  json.RawMessage `json:"total_pages"`
	Links       json.RawMessage `json:"links"`
}

// decodePage decodes a card page body. It checks the envelope and the
// invariants that need no request context (count equals the number of
// items, current_page >= 1, non-negative totals); the caller checks
// current_page against the page it asked for. An item that cannot be a card
// (not an object, no usable id, its id already on this page) does not fail
// the page: it is returned in Rejected for the warehouse's quarantine.
// scrub cleans upstream text quoted in errors (nil: none).
func decodePage(body []byte, scrub func(string) string) (*Page, error) {
	if scrub == nil {
		scrub = noScrub
	}
	doc, err := scanDocument(body)
	if err != nil {
		return nil, err
	}
	members, err := objectMembers(body, doc)
	if err != nil {
		return nil, protoErr("", "page body must be an object, got "+jsonKind(body[doc.start:doc.end]), nil)
	}
	var data, meta []byte
	for _, m := range members {
		switch m.key {
		case "data":
			data = body[m.value.start:m.value.end]
		case "meta":
			meta = body[m.value.start:m.value.end]
		}
	}
	if len(data) == 0 || string(data) == "null" {
		return nil, protoErr("data", "missing or null", nil)
	}
	items, err := arrayElements(data, span{0, len(data)})
	if err != nil {
		return nil, protoErr("data", "must be an array, got "+jsonKind(data), nil)
	}
	var wm struct {
		Pagination *wirePagination `json:"pagination"`
	}
	if len(meta) == 0 || string(meta) == "null" || meta[0] != '{' {
		return nil, protoErr("meta.pagination", "missing or null", nil)
	}
	if err := json.Unmarshal(meta, &wm); err != nil {
		return nil, protoErr("meta", "", err)
	}
	if wm.Pagination == nil {
		return nil, protoErr("meta.pagination", "missing or null", nil)
	}
	wp := wm.Pagination
	var pg Pagination
	for _, f := range []struct {
		name     string
		raw      json.RawMessage
		dst      *int
		min      int
		optional bool
	}{
		{"total", wp.Total, &pg.Total, 0, false},
		{"count", wp.Count, &pg.Count, 0, false},
		{"per_page", wp.PerPage, &pg.PerPage, 0, true},
		{"current_page", wp.CurrentPage, &pg.CurrentPage, 1, false},
		{"total_pages", wp.TotalPages, &pg.TotalPages, 0, false},
	} {
		field := "meta.pagination." + f.name
		if len(f.raw) == 0 || string(f.raw) == "null" {
			if f.optional {
				continue
			}
			return nil, protoErr(field, "missing or null", nil)
		}
		n, err := parseInt(f.raw, scrub)
		if err != nil {
			return nil, protoErr(field, "", err)
		}
		if n < int64(f.min) || n > math.MaxInt32 {
			return nil, protoErr(field, fmt.Sprintf("%d out of range", n), nil)
		}
		*f.dst = int(n)
	}
	next, err := decodeLinks(wp.Links)
	if err != nil {
		return nil, err
	}
	pg.Next = next
	if pg.Count != len(items) {
		return nil, protoErr("meta.pagination.count", fmt.Sprintf("%d but data has %d items", pg.Count, len(items)), nil)
	}
	p := &Page{Number: pg.CurrentPage, Pagination: pg, Cards: make([]Card, 0, len(items))}
	seen := make(map[string]int, len(items))
	for i, it := range items {
		raw := json.RawMessage(data[it.start:it.end])
		id, reason := itemID(raw)
		if reason == "" {
			if first, dup := seen[id]; dup {
				reason = fmt.Sprintf("card id already used by data[%d] on this page", first)
			}
		}
		if reason != "" {
			p.Rejected = append(p.Rejected, Rejected{Index: i, ID: id, Reason: reason, Raw: raw})
			continue
		}
		seen[id] = i
		p.Cards = append(p.Cards, Card{ID: id, Raw: raw})
	}
	return p, nil
}

// itemID reads the id of one data item. reason is empty for a usable id;
// otherwise it says why the item cannot be stored as a card, and id is set
// only when a valid id could still be read.
func itemID(raw []byte) (id, reason string) {
	members, err := objectMembers(raw, span{0, len(raw)})
	if err != nil {
		return "", "item is " + jsonKind(raw) + ", not an object"
	}
	var idRaw []byte
	n := 0
	for _, m := range members {
		if m.key == "id" {
			n++
			idRaw = raw[m.value.start:m.value.end]
		}
	}
	switch n {
	case 0:
		return "", "item has no \"id\""
	case 1:
	default:
		return "", fmt.Sprintf("item has %d \"id\" keys: its identity is ambiguous", n)
	}
	id, err = parseCardID(idRaw)
	if err != nil {
		return "", "unusable id: " + err.Error()
	}
	return id, ""
}

// decodeLinks accepts links as an object (next: string or null) or as an
// empty array (Fractal < 0.18), or absent.
func decodeLinks(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '[':
		var a []json.RawMessage
		if err := json.Unmarshal(raw, &a); err != nil || len(a) != 0 {
			return "", protoErr("meta.pagination.links", "a non-empty array", err)
		}
		return "", nil
	case '{':
		var l struct {
			Next json.RawMessage `json:"next"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return "", protoErr("meta.pagination.links", "", err)
		}
		if len(l.Next) == 0 || string(l.Next) == "null" {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(l.Next, &s); err != nil {
			return "", protoErr("meta.pagination.links.next", "must be a string, got "+jsonKind(l.Next), nil)
		}
		return s, nil
	}
	return "", protoErr("meta.pagination.links", "must be an object, got "+jsonKind(raw), nil)
}

// noScrub is the scrub of tests and fuzzers.
func noScrub(s string) string { return s }

// decodeErrorBody extracts message and errors from an error body, bounded.
// scrub runs on every piece of text before it is cut or cleaned.
func decodeErrorBody(status int, ct string, body []byte, scrub func(string) string) *StatusError {
	se := &StatusError{StatusCode: status}
	if !isJSONMediaType(ct) {
		return se
	}
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
