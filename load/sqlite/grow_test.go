package sqlite

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// balancePage is page n of 2 of a walk of 20 cards: cards ids with the
// balance text balance(id).
func balancePage(n int, ids []int, balance func(id int) string) load.Page {
	p := load.Page{Stream: load.StreamCards, Number: n, TotalPages: 2, TotalItems: 20}
	for _, id := range ids {
		p.Cards = append(p.Cards, load.Card{ID: strconv.Itoa(id), Data: fmt.Appendf(nil, `{"id":%d,"balance":%q}`, id, balance(id))})
	}
	return p
}

// TestTypedScaleAcrossAccounts: card_fields is shared by a file's
// accounts, yet a value of 3 decimals in beta's cards changes no scale:
// it is rounded half to even in beta's cards and alpha's cards, before
// and after, stay exact at scale 2, whichever account commits first.
func TestTypedScaleAcrossAccounts(t *testing.T) {
	ctx := t.Context()
	alpha, path, clk := openTest(t, load.Options{Account: "alpha", BatchPages: 1})
	beta, err := Open(ctx, path, load.Options{Account: "beta", Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer beta.Close()
	cents := func(id int) string { return fmt.Sprintf("%d.25", id) }
	runA := startRun(t, alpha)
	ww := alpha.NewWalkWriter(runA, load.StreamCards)
	if _, err := ww.Add(ctx, balancePage(1, idRange(1, 10), cents)); err != nil {
		t.Fatal(err)
	}
	if err := ww.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, alpha, `SELECT type || ':' || scale FROM card_fields WHERE name = 'balance'`); got != "decimal:2" {
		t.Fatalf("alpha's first page: %s", got)
	}
	runB := startRun(t, beta)
	commit(t, beta, runB, balancePage(1, idRange(1, 10), func(id int) string { return fmt.Sprintf("%d.125", id) }))
	if _, err := ww.Add(ctx, balancePage(2, idRange(11, 20), cents)); err != nil {
		t.Fatal(err)
	}
	if err := ww.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, alpha, `SELECT type || ':' || scale || ':' || conflicts || ':' || rounded FROM card_fields WHERE name = 'balance'`); got != "decimal:2:0:10" {
		t.Errorf("card_fields' balance: %s, want decimal:2:0:10", got)
	}
	// alpha: 1.25+...+20.25; beta: 1.12+...+10.12 (half to even), in cents.
	for _, tt := range []struct {
		account string
		want    string
	}{{"alpha", "21500/20"}, {"beta", "5620/10"}} {
		got := queryString(t, alpha, `SELECT sum(balance_minor) || '/' || count(balance_minor) FROM cards_flat WHERE account = ?`, tt.account)
		if got != tt.want {
			t.Errorf("%s: SUM/COUNT(balance_minor) = %s, want %s", tt.account, got, tt.want)
		}
	}
}
