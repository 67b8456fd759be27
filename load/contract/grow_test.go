package contract

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// growPage is page n of 3 of a walk of 30 cards: cards ids with balance
// balance(id), a raw JSON value.
func growPage(n int, ids []int, balance func(id int) string) load.Page {
	p := load.Page{Stream: load.StreamCards, Number: n, TotalPages: 3, TotalItems: 30}
	for _, id := range ids {
		p.Cards = append(p.Cards, load.Card{ID: strconv.Itoa(id), Data: fmt.Appendf(nil, `{"id":%d,"balance":%s}`, id, balance(id))})
	}
	return p
}

// balanceState is card_fields' row of balance (type:scale:minor
// column:conflicts) and the exact SUM and count of balance_minor.
func balanceState(t *testing.T, b backend) string {
	t.Helper()
	row := one(t, b.query(t, `SELECT type || ':' || coalesce(scale, -1) || ':' || coalesce(minor_column, '') || ':' || conflicts FROM card_fields WHERE name = 'balance'`))
	sum := one(t, b.query(t, `SELECT CAST(sum(balance_minor) AS TEXT) || '/' || CAST(count(balance_minor) AS TEXT) FROM cards_flat`))
	return row + " " + sum
}

// TestTypedScaleGrows: a field's type and scale depend on the data's
// meaning, not on how it was committed nor on the most decimals seen.
// Cards 1-15 with "N.5" and 16-30 with "N.25" committed a page at a time
// (each page its own commit) give scale 2 ([cards] amount_scale: the
// cards name no currency), no conflicts and the exact sums of a load of
// all 30 in one commit; an analyst's view on cards_flat reads them.
func TestTypedScaleGrows(t *testing.T) {
	balance := func(id int) string {
		if id <= 15 {
			return fmt.Sprintf(`"%d.5"`, id)
		}
		return fmt.Sprintf(`"%d.25"`, id)
	}
	// Exact: 1.50+...+15.50 and 16.25+...+30.25, in cents.
	const want = "decimal:2:balance_minor:0 47625/30"
	for _, b := range backends(t, 0, 0) {
		t.Run(b.name+"/one commit", func(t *testing.T) {
			run := startRun(t, b.s)
			p := growPage(1, idRange(1, 30), balance)
			p.TotalPages = 1
			commit(t, b.s, run, p)
			if got := balanceState(t, b); got != want {
				t.Errorf("one commit: %s, want %s", got, want)
			}
		})
	}
	for _, b := range backends(t, 0, 1) {
		t.Run(b.name+"/page by page", func(t *testing.T) {
			run := startRun(t, b.s)
			ww := b.writer(run)
			add := func(p load.Page) {
				t.Helper()
				if _, err := ww.Add(t.Context(), p); err != nil {
					t.Fatal(err)
				}
				if err := ww.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			add(growPage(1, idRange(1, 10), balance))
			b.query(t, `CREATE VIEW v AS SELECT card_id, balance_minor FROM cards_flat`)
			add(growPage(2, idRange(11, 20), balance))
			add(growPage(3, idRange(21, 30), balance))
			if got := balanceState(t, b); got != want {
				t.Errorf("page by page: %s, want %s", got, want)
			}
			if got := joined(b.query(t, `SELECT card_id || '=' || CAST(balance_minor AS TEXT) FROM v WHERE card_id IN ('1', '30') ORDER BY card_id`)); got != "1=150,30=3025" {
				t.Errorf("the view on cards_flat reads %s", got)
			}
		})
	}
}

// TestTypedIntegerWidens: balances that are JSON whole numbers first make
// balance an integer; the first decimal widens it to decimal at scale 2
// ([cards] amount_scale), every card gets balance_minor (the integers at
// the scale), and an analyst's views on cards_flat survive the widening;
// later values with more decimals are rounded half to even, never grow
// the scale.
func TestTypedIntegerWidens(t *testing.T) {
	for _, b := range backends(t, 0, 1) {
		t.Run(b.name, func(t *testing.T) {
			run := startRun(t, b.s)
			commit(t, b.s, run, growPage(1, idRange(1, 10), func(id int) string { return strconv.Itoa(id * 100) }))
			if got := one(t, b.query(t, `SELECT type || ':' || coalesce(minor_column, '-') FROM card_fields WHERE name = 'balance'`)); got != "integer:-" {
				t.Fatalf("after the integers: %s", got)
			}
			b.query(t, `CREATE VIEW w AS SELECT card_id, balance FROM cards_flat`)
			commit(t, b.s, run, growPage(2, idRange(11, 20), func(id int) string { return fmt.Sprintf(`"%d.5"`, id) }))
			// 100+...+1000 whole units and 11.5+...+20.5, at scale 2.
			if got, want := balanceState(t, b), "decimal:2:balance_minor:0 566000/20"; got != want {
				t.Errorf("after the decimals: %s, want %s", got, want)
			}
			b.query(t, `CREATE VIEW v AS SELECT card_id, balance_minor FROM cards_flat`)
			commit(t, b.s, run, growPage(3, idRange(21, 30), func(id int) string { return fmt.Sprintf(`"%d.125"`, id) }))
			// 21.125 ... 30.125 at scale 2, half to even: 21.12 ... 30.12.
			if got, want := balanceState(t, b), "decimal:2:balance_minor:0 591620/30"; got != want {
				t.Errorf("after the decimals of scale 3: %s, want %s", got, want)
			}
			if got := joined(b.query(t, `SELECT card_id || '=' || CAST(balance_minor AS TEXT) FROM v WHERE card_id IN ('1', '11', '21') ORDER BY card_id`)); got != "1=10000,11=1150,21=2112" {
				t.Errorf("the view v reads %s", got)
			}
			if got := joined(b.query(t, `SELECT card_id || '=' || balance FROM w WHERE card_id IN ('1', '11') ORDER BY card_id`)); got != "1=100,11=11.5" {
				t.Errorf("the view w reads %s", got)
			}
		})
	}
}

// TestTypedWidensManyCards: the recompute after a widening reads and
// updates the stored cards in chunks; every one of 2,101 cards, across
// chunks, gets its minor units at its scale.
func TestTypedWidensManyCards(t *testing.T) {
	for _, b := range backends(t, 0, 0) {
		t.Run(b.name, func(t *testing.T) {
			run := startRun(t, b.s)
			p := growPage(1, idRange(1, 2100), strconv.Itoa)
			p.TotalPages, p.TotalItems = 2, 2101
			commit(t, b.s, run, p)
			commit(t, b.s, run, growPage(2, []int{2101}, func(int) string { return `"0.05"` }))
			// 1+...+2100 whole units and 0.05, in cents.
			if got, want := balanceState(t, b), "decimal:2:balance_minor:0 220605005/2101"; got != want {
				t.Errorf("%s, want %s", got, want)
			}
		})
	}
}
