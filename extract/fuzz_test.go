package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/money"
)

// envelopeSeeds are page bodies in every envelope shape cardsync has met
// or expects from a PHP server: links in each shape, a BOM, deep unknown
// members, duplicate keys, ids that are one card (0 and -0).
func envelopeSeeds() []string {
	const pg = `"total":2,"count":2,"per_page":15,"current_page":1,"total_pages":2`
	const data = `"data":[{"id":1},{"id":"a-2"}]`
	page := func(meta string) string { return `{` + data + `,"meta":{` + meta + `}}` }
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	seeds := []string{
		page(`"pagination":{` + pg + `,"links":[]}`),
		page(`"pagination":{` + pg + `,"links":{}}`),
		page(`"pagination":{` + pg + `,"links":{"next":"https://api.example.com/cards?page=2"}}`),
		page(`"pagination":{` + pg + `,"links":{"next":2}}`),
		page(`"pagination":{` + pg + `,"links":{"next":{"href":"https://api.example.com/cards?page=2"}}}`),
		page(`"pagination":{` + pg + `,"links":"https://api.example.com/cards?page=2"}`),
		page(`"pagination":{` + pg + `,"links":true}`),
		page(`"pagination":{` + pg + `,"links":["https://api.example.com/cards?page=2"]}`),
		"\xEF\xBB\xBF" + page(`"pagination":{`+pg+`}`),
		page(`"debug":` + deep + `,"pagination":{` + pg + `}`),
		page(`"pagination":{` + pg + `,"x":` + deep + `}`),
		page(`"pagination":{` + pg + `,"count":1,"count":2}`),
		page(`"pagination":null,"pagination":{` + pg + `}`),
		`{"data":[{"id":0},{"id":-0}],"meta":{"pagination":{` + pg + `}}}`,
		`{"data":[{"id":0.0},{"id":-0.0}],"meta":{"pagination":{` + pg + `}}}`,
		`{"data":[{"id":1,"id":2},{"id":"x","id":null}],"meta":{"pagination":{` + pg + `}}}`,
		`{"data":null,` + data + `,"meta":{"pagination":{` + pg + `}}}`,
		`{` + data + `,"meta":{"pagination":{"total":2.0,"count":"2.0","per_page":1.5e1,"current_page":10e-1,"total_pages":2.5}}}`,
		`{` + data + `,"meta":{"pagination":{"total":2,"count":2,"per_page":15,"current_page":1,"total_pages":1e999999999}}}`,
		`{"trace":` + strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000) + `,` + data + `,"meta":{"pagination":{` + pg + `}}}`,
		``,
		`<!DOCTYPE html><html><body>Login</body></html>`,
	}
	return seeds
}

// FuzzDecodePage: the page decoder never panics, every error is a
// *ProtocolError, and an accepted page keeps its invariants and agrees with
// encoding/json (last key wins) on what it read. Seeds: envelopeSeeds and
// testdata/fuzz/FuzzDecodePage.
//
//	go test -run '^$' -fuzz '^FuzzDecodePage$' -fuzztime 30s ./extract/
func FuzzDecodePage(f *testing.F) {
	f.Add([]byte(`{"data":[{"id":1}],"meta":{"pagination":{"total":1,"count":1,"per_page":15,"current_page":1,"total_pages":1,"links":[]}}}`))
	for _, s := range envelopeSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodePage(body, nil)
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ProtocolError: %v", err, err)
			}
			return
		}
		body = bytes.TrimPrefix(body, utf8BOM)
		// encoding/json stops at 10,000 levels; the decoder does not.
		shallow := bytes.Count(body, []byte("["))+bytes.Count(body, []byte("{")) <= 10000
		if shallow && !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		if shallow {
			// What encoding/json reads, exact keys, the last one winning.
			var top, meta, pgn map[string]json.RawMessage
			var items []json.RawMessage
			if json.Unmarshal(body, &top) != nil || json.Unmarshal(top["meta"], &meta) != nil ||
				json.Unmarshal(meta["pagination"], &pgn) != nil || json.Unmarshal(top["data"], &items) != nil {
				t.Fatalf("accepted a page encoding/json cannot read: %q", body)
			}
			if cur, _, err := parseNumber(pgn["current_page"], noScrub); err != nil || int(cur) != p.Pagination.CurrentPage || len(items) != p.Pagination.Count {
				t.Fatalf("current_page %d, count %d; encoding/json reads %s and %d items", p.Pagination.CurrentPage, p.Pagination.Count, pgn["current_page"], len(items))
			}
		}
		pg := p.Pagination
		if pg.Count != len(p.Cards)+len(p.Rejected) || pg.CurrentPage < 1 || p.Number != pg.CurrentPage || pg.Total < 0 || pg.TotalPages < 0 || pg.PerPage < 0 {
			t.Fatalf("invariants broken: %+v with %d cards", pg, len(p.Cards))
		}
		for i, c := range p.Cards {
			if c.ID == "" || len(c.Raw) == 0 || c.Raw[0] != '{' || !json.Valid(c.Raw) {
				t.Fatalf("card %d: id %q raw %q", i, c.ID, c.Raw)
			}
			if id, reason := itemID(c.Raw); reason != "" || id != c.ID {
				t.Fatalf("card %d: id %q does not re-parse: %s", i, c.ID, reason)
			}

		}
		for _, r := range p.Rejected {
			if r.Reason == "" || !json.Valid(r.Raw) {
				t.Fatalf("rejected item %+v", r)
			}
		}
	})
}

// FuzzDecodeAccount: never panics; amounts are exact (their canonical text
// re-parses to the same value) and errors are *ProtocolError.
//
//	go test -run '^$' -fuzz FuzzDecodeAccount -fuzztime 30s ./extract/
func FuzzDecodeAccount(f *testing.F) {
	f.Add([]byte(`{"data":{"name":"A","balance":98765.4,"cards_balance":"12.30","applied_card_count":"3","transfer_amount":null}}`), 2)
	f.Add([]byte(`{"data":{"balance":"1,234.50"}}`), 2)
	f.Add([]byte(`{"data":{"balance":1e400}}`), 0)
	f.Add([]byte("\xEF\xBB\xBF"+`{"data":{"name":"A","balance":"1.00"}}`), 2)
	f.Add([]byte(`{"meta":`+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`,"data":{"name":"A"}}`), 2)
	f.Add([]byte(`{"data":null,"data":{"balance":"1.00","balance":2}}`), 2)
	f.Fuzz(func(t *testing.T, body []byte, scale int) {
		if scale < 0 || scale > 18 {
			return
		}
		a, err := decodeAccount(body, scale, nil)
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ProtocolError: %v", err, err)
			}
			return
		}
		for _, amt := range []*money.Amount{a.TransferAmount, a.ReachAmount, a.Authorizations, a.Balance, a.CardsBalance, a.AvailableRechargeBalance} {
			if amt == nil {
				continue
			}
			back, err := money.Parse(amt.String(), scale)
			if err != nil || back != *amt {
				t.Fatalf("amount %v does not round-trip: %v %v", amt, back, err)
			}
		}
	})
}
