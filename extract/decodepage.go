package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/cardsync/cardsync/internal/english"
)

// paginationFields are the members of meta.pagination cardsync reads, with
// their lower bounds; per_page may be null or absent, and a total_pages
// above math.MaxInt32 is capped (a claim that large is phantom or more than
// api.max_pages either way, see Client.Pages).
var paginationFields = []struct {
	name     string
	min      int
	optional bool
	capped   bool
}{
	{"total", 0, false, false},
	{"count", 0, false, false},
	{"per_page", 0, true, false},
	{"current_page", 1, false, false},
	{"total_pages", 0, false, true},
}

// decodePage decodes a card page body. It reads only what it needs: data,
// meta.pagination's numbers and links.next when it is a string; every other
// member, of the page, of meta or of pagination, and links in any other
// shape, is skipped after a syntax check, whatever its depth. Of duplicate
// keys the last one wins (as in encoding/json and PHP). A leading UTF-8 BOM
// is skipped. It checks the envelope and the invariants that need no
// request context (count equals the number of items, current_page >= 1,
// non-negative totals); the caller checks current_page against the page it
// asked for. An item that cannot be a card (not an object, no usable id, its
// id already on this page) does not fail the page: it is returned in
// Rejected for the warehouse's quarantine. scrub cleans upstream text quoted
// in errors (nil: none).
func decodePage(body []byte, scrub func(string) string) (*Page, error) {
	if scrub == nil {
		scrub = noScrub
	}
	body, top, err := topMembers(body, "page body")
	if err != nil {
		return nil, err
	}
	data := memberValue(body, top, "data")
	if len(data) == 0 || string(data) == "null" {
		return nil, protoErr("data", "missing or null", nil)
	}
	items, err := arrayElements(data, span{0, len(data)})
	if err != nil {
		return nil, protoErr("data", "must be an array, got "+jsonKind(data), nil)
	}
	pg, err := decodePagination(body, top, scrub)
	if err != nil {
		return nil, err
	}
	if pg.fractional("count") {
		pg.Count = len(items) // a fraction counts nothing: the items do
	}
	if pg.Count != len(items) {
		return nil, protoErr("meta.pagination.count", fmt.Sprintf("%d but data has %s", pg.Count, english.Count(len(items), "item")), nil)
	}
	return pageItems(pg, data, items), nil
}

// memberValue is the value of the member key of m, an object in body, or
// nil when it has none.
func memberValue(body []byte, m map[string]span, key string) []byte {
	if sp, ok := m[key]; ok {
		return body[sp.start:sp.end]
	}
	return nil
}

// decodePagination decodes meta.pagination of a page body whose top-level
// members are top: its numbers, each checked against its range, and
// links.next.
func decodePagination(body []byte, top map[string]span, scrub func(string) string) (Pagination, error) {
	var pg Pagination
	metaSpan, ok := top["meta"]
	if !ok || body[metaSpan.start] != '{' {
		return pg, protoErr("meta.pagination", "missing or null", nil)
	}
	metaMembers, err := objectMembers(body, metaSpan)
	if err != nil {
		return pg, protoErr("meta", "", err)
	}
	pgSpan, ok := lastWins(metaMembers)["pagination"]
	if !ok || body[pgSpan.start] == 'n' {
		return pg, protoErr("meta.pagination", "missing or null", nil)
	}
	pgMembers, err := objectMembers(body, pgSpan)
	if err != nil {
		return pg, protoErr("meta.pagination", "must be an object, got "+jsonKind(body[pgSpan.start:pgSpan.end]), nil)
	}
	wp := lastWins(pgMembers)
	dst := map[string]*int{"total": &pg.Total, "count": &pg.Count, "per_page": &pg.PerPage,
		"current_page": &pg.CurrentPage, "total_pages": &pg.TotalPages}
	for _, f := range paginationFields {
		field := "meta.pagination." + f.name
		raw := memberValue(body, wp, f.name)
		if len(raw) == 0 || string(raw) == "null" {
			if f.optional {
				continue
			}
			return pg, protoErr(field, "missing or null", nil)
		}
		n, fractional, err := parseNumber(raw, scrub)
		if f.capped && n > math.MaxInt32 && (err == nil || errors.Is(err, errNumberRange)) {
			n, err = math.MaxInt32, nil
		}
		if err != nil {
			return pg, protoErr(field, "", err)
		}
		if n < int64(f.min) || n > math.MaxInt32 {
			return pg, protoErr(field, fmt.Sprintf("%d out of range", n), nil)
		}
		if fractional {
			pg.Fractional = append(pg.Fractional, f.name)
			if f.name == "per_page" {
				continue // no page size: the walk reads it from the pages
			}
		}
		*dst[f.name] = int(n)
	}
	pg.Next = linksNext(memberValue(body, wp, "links"))
	return pg, nil
}

// pageItems sorts the items of data into the page's cards and the items
// rejected: not an object, no usable id, or an id already on the page.
func pageItems(pg Pagination, data []byte, items []span) *Page {
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
	return p
}

// itemID reads the id of one data item; of several "id" keys the last one
// wins, as in encoding/json and PHP's json_decode. reason is empty for a
// usable id; otherwise it says why the item cannot be stored as a card.
func itemID(raw []byte) (id, reason string) {
	members, err := objectMembers(raw, span{0, len(raw)})
	if err != nil {
		return "", "item is " + jsonKind(raw) + ", not an object"
	}
	sp, ok := lastWins(members)["id"]
	if !ok {
		return "", "item has no \"id\""
	}
	id, err = parseCardID(raw[sp.start:sp.end])
	if err != nil {
		return "", "unusable id: " + err.Error()
	}
	return id, ""
}

// linksNext returns links.next when links is an object whose next is a
// string, else "". cardsync never requests links.next (it only warns about
// another origin), so links in any other shape ({} or [] without a link, a
// number, true, next as an object like {"href": ...}) is not an error.
// raw is a checked JSON value or nil.
func linksNext(raw []byte) string {
	if len(raw) == 0 || raw[0] != '{' {
		return ""
	}
	members, err := objectMembers(raw, span{0, len(raw)})
	if err != nil {
		return ""
	}
	sp, ok := lastWins(members)["next"]
	if !ok || raw[sp.start] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw[sp.start:sp.end], &s) != nil {
		return ""
	}
	return s
}
