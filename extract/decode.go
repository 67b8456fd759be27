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

	"github.com/cardsync/cardsync/money"
)

// Card is one item of a card page: its id as text and its JSON exactly as
// the server sent it.
type Card struct {
	// ID is the card's "id": the digits of an integer id, or the string id.
	ID string
	// Raw is the card object, byte-exact from the response body.
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
	Name, Email, Timezone *string

	TransferAmount, ReachAmount, Authorizations, Balance, CardsBalance, AvailableRechargeBalance *money.Amount

	AvailableToApplyCardCount, AppliedCardCount *int64
	// Raw is the "data" object byte-exact, unknown fields included.
	Raw json.RawMessage
	// Missing lists the spec's account fields the response left out. The
	// spec says blank fields are null, never omitted; an omitted one is
	// stored as NULL like a null, and the caller should say so.
	Missing []string
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
			return &ProtocolError{Reason: "truncated JSON body", Transient: true, Err: err}
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
func parseInt(raw json.RawMessage) (int64, error) {
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
		return 0, fmt.Errorf("want an integer, got %q", truncate(s, 24))
	}
	for i, r := range s {
		if (r < '0' || r > '9') && !(i == 0 && r == '-' && len(s) > 1) {
			return 0, fmt.Errorf("want an integer, got %q", truncate(s, 24))
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("integer out of range: %q", truncate(s, 24))
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

// parseCardID reads a card id: a non-negative JSON integer, or a string of
// 1..128 characters from [A-Za-z0-9._:-].
func parseCardID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", errors.New("missing")
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		if s == "" || len(s) > 128 {
			return "", fmt.Errorf("string id must have 1..128 characters, has %d", len(s))
		}
		for _, r := range s {
			ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' || r == ':'
			if !ok {
				return "", fmt.Errorf("string id has a character outside [A-Za-z0-9._:-]: %q", truncate(s, 40))
			}
		}
		return s, nil
	case c >= '0' && c <= '9':
		s := string(raw)
		if len(s) > 20 {
			return "", errors.New("integer id too long")
		}
		for _, r := range s {
			if r < '0' || r > '9' {
				return "", fmt.Errorf("id must be an integer, got %q", truncate(s, 24))
			}
		}
		return s, nil
	default:
		return "", fmt.Errorf("id must be an integer or a string, got %s", jsonKind(raw))
	}
}

// Wire shapes. RawMessage everywhere: no float64 on the data path.
type wirePage struct {
	Data *[]json.RawMessage `json:"data"`
	Meta *struct {
		Pagination *wirePagination `json:"pagination"`
	} `json:"meta"`
}

type wirePagination struct {
	Total       json.RawMessage `json:"total"`
	Count       json.RawMessage `json:"count"`
	PerPage     json.RawMessage `json:"per_page"`
	CurrentPage json.RawMessage `json:"current_page"`
	TotalPages  json.RawMessage `json:"total_pages"`
	Links       json.RawMessage `json:"links"`
}

// decodePage decodes a card page body. It checks the shape and the
// invariants that need no request context: count equals the number of
// items, current_page >= 1, non-negative totals, valid ids. The caller
// checks current_page against the page it asked for.
func decodePage(body []byte) (*Page, error) {
	var w wirePage
	if err := decodeStrict(body, &w); err != nil {
		return nil, err
	}
	if w.Data == nil {
		return nil, protoErr("data", "missing or null", nil)
	}
	if w.Meta == nil || w.Meta.Pagination == nil {
		return nil, protoErr("meta.pagination", "missing or null", nil)
	}
	wp := w.Meta.Pagination
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
		n, err := parseInt(f.raw)
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
	data := *w.Data
	if pg.Count != len(data) {
		return nil, protoErr("meta.pagination.count", fmt.Sprintf("%d but data has %d items", pg.Count, len(data)), nil)
	}
	p := &Page{Number: pg.CurrentPage, Pagination: pg, Cards: make([]Card, len(data))}
	for i, raw := range data {
		if len(raw) == 0 || raw[0] != '{' {
			return nil, protoErr(fmt.Sprintf("data[%d]", i), "card is "+jsonKind(raw)+", not an object", nil)
		}
		var idOnly struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(raw, &idOnly); err != nil {
			return nil, protoErr(fmt.Sprintf("data[%d]", i), "", err)
		}
		id, err := parseCardID(idOnly.ID)
		if err != nil {
			return nil, protoErr(fmt.Sprintf("data[%d].id", i), "", err)
		}
		p.Cards[i] = Card{ID: id, Raw: raw}
	}
	return p, nil
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

// decodeAccount decodes the body of GET /account.
func decodeAccount(body []byte, scale int) (*Account, error) {
	var top struct {
		Data json.RawMessage `json:"data"`
	}
	if err := decodeStrict(body, &top); err != nil {
		return nil, err
	}
	if len(top.Data) == 0 || top.Data[0] != '{' {
		return nil, protoErr("data", "must be an object, got "+jsonKind(top.Data), nil)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(top.Data, &m); err != nil {
		return nil, protoErr("data", "", err)
	}
	a := &Account{Raw: top.Data}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"name", &a.Name}, {"email", &a.Email}, {"timezone", &a.Timezone}} {
		raw, ok := m[f.name]
		if !ok {
			a.Missing = append(a.Missing, f.name)
			continue
		}
		if string(raw) == "null" {
			continue
		}
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return nil, protoErr("account."+f.name, "must be a string, got "+jsonKind(raw), nil)
		}
		*f.dst = &s
	}
	for _, f := range []struct {
		name string
		dst  **money.Amount
	}{
		{"transfer_amount", &a.TransferAmount},
		{"reach_amount", &a.ReachAmount},
		{"authorizations", &a.Authorizations},
		{"balance", &a.Balance},
		{"cards_balance", &a.CardsBalance},
		{"available_recharge_balance", &a.AvailableRechargeBalance},
	} {
		raw, ok := m[f.name]
		if !ok {
			a.Missing = append(a.Missing, f.name)
			continue
		}
		amt, err := money.ParseJSON(raw, scale)
		if err != nil {
			return nil, protoErr("account."+f.name, "", err)
		}
		*f.dst = amt
	}
	for _, f := range []struct {
		name string
		dst  **int64
	}{{"available_to_apply_card_count", &a.AvailableToApplyCardCount}, {"applied_card_count", &a.AppliedCardCount}} {
		raw, ok := m[f.name]
		if !ok {
			a.Missing = append(a.Missing, f.name)
			continue
		}
		if string(raw) == "null" {
			continue
		}
		n, err := parseInt(raw)
		if err != nil {
			return nil, protoErr("account."+f.name, "", err)
		}
		if n < 0 {
			return nil, protoErr("account."+f.name, fmt.Sprintf("negative count %d", n), nil)
		}
		*f.dst = &n
	}
	return a, nil
}

// decodeErrorBody extracts message and errors from an error body, bounded.
func decodeErrorBody(status int, ct string, body []byte) *StatusError {
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
		se.Message = truncate(sanitize(msg), 200)
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
				msgs = append(msgs, truncate(sanitize(s), 200))
			}
			se.Fields[truncate(sanitize(k), 64)] = msgs
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
