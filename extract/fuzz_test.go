package extract

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/cardsync/cardsync/money"
)

// FuzzDecodePage: the page decoder never panics, every error is a
// *ProtocolError, and an accepted page keeps its invariants. Seeds live in
// testdata/fuzz/FuzzDecodePage.
//
//	go test -run '^$' -fuzz FuzzDecodePage -fuzztime 30s ./extract/
func FuzzDecodePage(f *testing.F) {
	f.Add([]byte(`{"data":[{"id":1}],"meta":{"pagination":{"total":1,"count":1,"per_page":15,"current_page":1,"total_pages":1,"links":[]}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodePage(body, nil)
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ProtocolError: %v", err, err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
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
