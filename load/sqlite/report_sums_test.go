package sqlite

import (
	"database/sql"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestReportCardSums: the report's card sums are what cards_flat's
// balance_minor gives (the cookbook's rule), per currency, exactly: the
// values stored after balance was typed decimal at scale 2 that do not
// fit it ("0.1E1", "n/a", true, minor units beyond int64) are NULL there
// and "not an amount" in the report, never summed; cards without a
// balance are counted apart; the sum goes beyond int64.
func TestReportCardSums(t *testing.T) {
	w, _, clk := openTest(t, load.Options{})
	ctx := t.Context()
	card := func(id, members string) load.Card {
		return load.Card{ID: id, Data: []byte(`{"id":"` + id + `"` + members + `}`)}
	}
	first := []load.Card{
		card("1", `,"currency":"USD","balance":"0.10"`),
		card("2", `,"currency":"USD","balance":0.20`),
		card("3", `,"currency":"HKD","balance":"7.77"`),
		card("4", `,"currency":"EUR","balance":"92233720368547758.07"`),
		card("5", `,"currency":"EUR","balance":"92233720368547758.07"`),
		card("6", `,"balance":"10.00"`),
		card("7", `,"currency":"USD"`),
		card("8", `,"currency":"USD","balance":null`),
	}
	later := []load.Card{
		card("9", `,"currency":"USD","balance":"0.1E1"`),
		card("10", `,"currency":"HKD","balance":"n/a"`),
		card("11", `,"currency":"EUR","balance":true`),
		card("12", `,"currency":"EUR","balance":"92233720368547758.08"`),
	}
	since := clk.Now().Add(-time.Hour)
	for _, cards := range [][]load.Card{first, append(append([]load.Card(nil), first...), later...)} {
		run := startRun(t, w)
		commit(t, w, run, statusPage(cards...))
		if _, err := finishWalk(ctx, w, run, true); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Minute)
	}
	d, err := w.ReportData(ctx, since, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := []load.CardSum{
		{Currency: "EUR", Cards: 4, Summed: 2, Sum: "184467440737095516.14", Scale: 2, Unparsed: 2},
		{Currency: "HKD", Cards: 2, Summed: 1, Sum: "7.77", Scale: 2, Unparsed: 1},
		{Currency: "USD", Cards: 5, Summed: 2, Sum: "0.30", Scale: 2, Unparsed: 1, NoBalance: 2},
		{Currency: load.NoCurrency, Cards: 1, Summed: 1, Sum: "10.00", Scale: 2},
	}
	if !reflect.DeepEqual(d.CardSums, want) || d.BalanceType != "decimal" {
		t.Errorf("card sums %+v of a %q balance, want %+v of a decimal one", d.CardSums, d.BalanceType, want)
	}
	flat := flatSums(t, w)
	for _, s := range d.CardSums {
		name := s.Currency
		if name == load.NoCurrency {
			name = ""
		}
		if f := flat[name]; f == nil || f.n != s.Summed || f.sum.Cmp(minorOf(s.Sum)) != 0 {
			t.Errorf("%s: report %+v, cards_flat.balance_minor %+v", s.Currency, s, f)
		}
	}
}

type flatSum struct {
	n   int64
	sum big.Int
}

// flatSums sums cards_flat's balance_minor by currency in Go (sum()
// overflows), counting the non-NULL ones.
func flatSums(t *testing.T, w *Warehouse) map[string]*flatSum {
	t.Helper()
	rows, err := w.DB().QueryContext(t.Context(), `SELECT currency, balance_minor FROM cards_flat WHERE removed_at IS NULL AND balance_minor IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]*flatSum{}
	for rows.Next() {
		var currency sql.NullString
		var minor int64
		if err := rows.Scan(&currency, &minor); err != nil {
			t.Fatal(err)
		}
		f := out[currency.String]
		if f == nil {
			f = &flatSum{}
			out[currency.String] = f
		}
		f.n++
		f.sum.Add(&f.sum, big.NewInt(minor))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// minorOf is the minor units of decimal text at scale 2 ("0.30": 30).
func minorOf(text string) *big.Int {
	v, _ := new(big.Int).SetString(strings.Replace(text, ".", "", 1), 10)
	return v
}
