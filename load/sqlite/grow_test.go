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

// TestTypedScaleGrowsAcrossAccounts: card_fields is shared by a file's
// accounts, so a value of scale 3 in beta's cards grows balance to scale
// 3 for alpha's cards too, recomputed exactly; and alpha's walk writer,
// which remembered scale 2 from its first commit, stores its next page at
// scale 3 (a backfill of alpha then beta, and both syncing at once, give
// the same totals).
func TestTypedScaleGrowsAcrossAccounts(t *testing.T) {
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
	if got := queryString(t, alpha, `SELECT type || ':' || scale || ':' || conflicts FROM card_fields WHERE name = 'balance'`); got != "decimal:3:0" {
		t.Errorf("card_fields' balance: %s, want decimal:3:0", got)
	}
	// alpha: 1.250+...+20.250; beta: 1.125+...+10.125, in thousandths.
	for _, tt := range []struct {
		account string
		want    string
	}{{"alpha", "215000/20"}, {"beta", "56250/10"}} {
		got := queryString(t, alpha, `SELECT sum(balance_minor) || '/' || count(balance_minor) FROM cards_flat WHERE account = ?`, tt.account)
		if got != tt.want {
			t.Errorf("%s: SUM/COUNT(balance_minor) = %s, want %s", tt.account, got, tt.want)
		}
	}
}
