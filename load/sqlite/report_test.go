package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/account"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/reportrows"
	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/sim"
)

func statusCard(id int, status, balance string) load.Card {
	return load.Card{ID: fmt.Sprint(id), Data: fmt.Appendf(nil, `{"id":%d,"status":%q,"balance":%q,"currency":"USD"}`, id, status, balance)}
}

func statusPage(cards ...load.Card) load.Page {
	p := page(1, nil, 1, len(cards))
	p.Cards = cards
	return p
}

// TestReportData builds two days of history through the load API (a
// snapshot every 15 minutes, a status change, a removal confirmed by two
// walks, a rejected item) and checks each part of ReportData against what
// was written.
func TestReportData(t *testing.T) {
	w, path, clk := openTest(t, load.Options{})
	ctx := t.Context()
	want, latest := writeTwoDaysOfSnapshots(t, w, clk)
	now := clk.Now() // 2026-03-03T12:00:00Z
	since := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

	r, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d, err := r.ReportData(ctx, since, now)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("days", func(t *testing.T) {
		if len(d.Days) != 3 || !d.Days[0].Equal(since) || d.Days[2].Format(time.DateOnly) != "2026-03-03" {
			t.Errorf("days %v, want 2026-03-01..03", d.Days)
		}
		if d.LastSuccessRun != 2 || d.CurrentCards != 4 || d.RemovedCards != 1 {
			t.Errorf("last success run %d, %d current, %d removed; want 2, 4, 1", d.LastSuccessRun, d.CurrentCards, d.RemovedCards)
		}
	})
	t.Run("balances", func(t *testing.T) { checkBalanceDays(t, d, want) })
	t.Run("latest", func(t *testing.T) { checkLatestSnapshot(t, r, d, now, latest) })
	t.Run("statuses", func(t *testing.T) {
		if !slices.Equal(d.Statuses, []string{"active", "frozen"}) {
			t.Fatalf("statuses %v", d.Statuses)
		}
		if got := d.StatusCounts[0]; !slices.Equal(got, []int64{5, 3, 3}) {
			t.Errorf("active per day %v, want [5 3 3]", got)
		}
		if got := d.StatusCounts[1]; !slices.Equal(got, []int64{0, 1, 1}) {
			t.Errorf("frozen per day %v, want [0 1 1]", got)
		}
	})
	t.Run("card changes", func(t *testing.T) { checkCardChanges(t, d) })
	t.Run("runs", func(t *testing.T) {
		if len(d.RunPoints) != 3 || d.RunPoints[1].RateLimited != 2 || d.RunPoints[2].Status != load.StatusFailed {
			t.Errorf("run points %+v", d.RunPoints)
		}
		if len(d.RunDays) != 2 || d.RunDays[1].Runs != 2 || d.RunDays[1].Failed != 1 || d.RunDays[1].RateLimited != 2 || d.RunDays[1].Rejected != 1 {
			t.Errorf("run days %+v", d.RunDays)
		}
		if len(d.LastRuns) != 3 || d.LastRuns[0].ID != 3 {
			t.Errorf("last runs %+v", d.LastRuns)
		}
	})
	t.Run("rejected", func(t *testing.T) {
		if d.RejectedTotal != 1 || len(d.Rejected) != 1 || !strings.Contains(d.Rejected[0].Reason, "empty") {
			t.Errorf("rejected %+v", d.Rejected)
		}
	})
	t.Run("empty period", func(t *testing.T) {
		e, err := r.ReportData(ctx, now.AddDate(1, 0, 0), now.AddDate(1, 0, 1))
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Balances) != 0 || len(e.CardChanges) != 0 || len(e.RunPoints) != 0 || e.Latest == nil {
			t.Errorf("a period after the data: %+v", e)
		}
		if got := e.StatusCounts; len(got) != 2 || got[0][0] != 3 {
			t.Errorf("statuses of a later period %v, want the current counts", got)
		}
	})
	t.Run("writer", func(t *testing.T) {
		// A writer has one connection: every query must go through the
		// report's transaction, or it waits for it forever.
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		dw, err := w.ReportData(ctx, since, now)
		if err != nil || len(dw.LastRuns) != 3 {
			t.Errorf("ReportData on the writer: %d runs, %v", len(dw.LastRuns), err)
		}
	})
	t.Run("backwards", func(t *testing.T) {
		if _, err := r.ReportData(ctx, now, since); err == nil {
			t.Error("a period ending before it starts was accepted")
		}
	})
}

// balanceDay is what a day's row of ReportData.Balances says of the
// balance: its first, lowest, highest and last value and the snapshots.
type balanceDay struct{ first, min, max, last, n int64 }

// writeTwoDaysOfSnapshots writes TestReportData's history: a walk of cards
// 1..5, then a snapshot every 15 minutes for two days (balance moves,
// transfer amount is null, cards_balance constant), with two walks at
// 09:00 on the second day (statusWalks). It returns the balance of each
// day by date and the last snapshot's balance in minor units.
func writeTwoDaysOfSnapshots(t *testing.T, w *Warehouse, clk *sim.Clock) (want map[string]*balanceDay, latest int64) {
	t.Helper()
	ctx := t.Context()
	run1 := startRun(t, w)
	var cards []load.Card
	for id := 1; id <= 5; id++ {
		cards = append(cards, statusCard(id, "active", "10.00"))
	}
	commit(t, w, run1, statusPage(cards...))
	if _, err := finishWalk(ctx, w, run1, true); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, run1, load.RunResult{Status: load.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}

	balance := func(k int) int64 { return 100000 + int64(k*37%500) - 250 }
	want = map[string]*balanceDay{}
	snapshots := 2*96 + 1
	for k := range snapshots {
		if k > 0 {
			clk.Advance(15 * time.Minute)
		}
		b, cb := money.FromMinor(balance(k), 2), money.FromMinor(3133707, 2)
		if err := w.SaveAccount(ctx, run1, load.Account{Snapshot: account.Snapshot{Balance: &b, CardsBalance: &cb}}); err != nil {
			t.Fatal(err)
		}
		day := clk.Now().Format(time.DateOnly)
		v := balance(k)
		a := want[day]
		if a == nil {
			a = &balanceDay{first: v, min: v, max: v}
			want[day] = a
		}
		a.min, a.max, a.last, a.n = min(a.min, v), max(a.max, v), v, a.n+1
		if day == "2026-03-02" && clk.Now().Hour() == 9 && clk.Now().Minute() == 0 {
			statusWalks(t, w, clk, cards)
		}
	}
	return want, balance(snapshots - 1)
}

// statusWalks: card 1 frozen, card 5 not listed (pending), an item without
// an id; a minute later the next walk misses card 5 again: removed. The
// clock is back where it was.
func statusWalks(t *testing.T, w *Warehouse, clk *sim.Clock, cards []load.Card) {
	t.Helper()
	ctx := t.Context()
	run2 := startRun(t, w)
	commit(t, w, run2, statusPage(statusCard(1, "frozen", "10.00"), cards[1], cards[2], cards[3],
		load.Card{ID: "", Data: []byte(`{"id":"","status":"active"}`)}))
	if _, err := finishWalk(ctx, w, run2, true); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, run2, load.RunResult{Status: load.StatusSucceeded, RateLimited: 2}); err != nil {
		t.Fatal(err)
	}
	// The next walk misses card 5 again: removed.
	clk.Advance(time.Minute)
	run3 := startRun(t, w)
	commit(t, w, run3, statusPage(statusCard(1, "frozen", "10.00"), cards[1], cards[2], cards[3]))
	if n, err := finishWalk(ctx, w, run3, true); err != nil || n != 1 {
		t.Fatalf("third walk removed %d cards (%v), want 1", n, err)
	}
	if err := w.FinishRun(ctx, run3, load.RunResult{Status: load.StatusFailed, Error: "upstream said no"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(-time.Minute)
}

// checkBalanceDays checks d's balance and cards_balance per day against
// want, what was written.
func checkBalanceDays(t *testing.T, d load.ReportData, want map[string]*balanceDay) {
	t.Helper()
	var days int
	for _, b := range d.Balances {
		switch b.Amount {
		case "balance":
			days++
			a := want[b.Day.Format(time.DateOnly)]
			if a == nil || b.First != a.first || b.Min != a.min || b.Max != a.max || b.Last != a.last || b.Snapshots != a.n {
				t.Errorf("%s: got %+v, want %+v", b.Day.Format(time.DateOnly), b, a)
			}
			if b.LastText != money.FromMinor(a.last, 2).String() {
				t.Errorf("last text %q", b.LastText)
			}
		case "cards_balance":
			if b.Min != 3133707 || b.MaxText != "31337.07" {
				t.Errorf("cards_balance %+v", b)
			}
		default:
			t.Errorf("amount %s has no values, want no rows: %+v", b.Amount, b)
		}
	}
	if days != 3 {
		t.Errorf("%d days of balance, want 3", days)
	}
}

// checkLatestSnapshot checks d's latest snapshot, taken at now with a
// balance of latest minor units, against what was written and what the
// view of r says.
func checkLatestSnapshot(t *testing.T, r *Warehouse, d load.ReportData, now time.Time, latest int64) {
	t.Helper()
	l := d.Latest
	if l == nil || !l.TakenAt.Equal(now) {
		t.Fatalf("latest %+v, want the snapshot at %v", l, now)
	}
	got := map[string]load.NamedAmount{}
	for _, a := range l.Amounts {
		got[a.Name] = a
	}
	if got["balance"].Value != money.FromMinor(latest, 2).String() || got["cards_balance"].Value != "31337.07" ||
		!got["transfer_amount"].Null || len(l.Amounts) != 6 {
		t.Errorf("latest amounts %+v", l.Amounts)
	}
	if view := queryString(t, r, `SELECT balance FROM account_balances ORDER BY snapshot_id DESC LIMIT 1`); got["balance"].Value != view {
		t.Errorf("latest balance %q, the view says %q", got["balance"].Value, view)
	}
}

// checkCardChanges checks d's card changes per day and its one changed
// card, card 1 frozen.
func checkCardChanges(t *testing.T, d load.ReportData) {
	t.Helper()
	want := []load.ChangeDay{
		{Day: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), New: 5},
		{Day: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), Changed: 1, Removed: 1},
	}
	if !slices.Equal(d.CardChanges, want) {
		t.Errorf("card changes %+v, want %+v", d.CardChanges, want)
	}
	if d.ChangedCardsTotal != 1 || len(d.ChangedCards) != 1 {
		t.Fatalf("changed cards %+v", d.ChangedCards)
	}
	c := d.ChangedCards[0]
	wantFields := []load.FieldChange{{Name: "status", Before: `"active"`, After: `"frozen"`}}
	if c.CardID != "1" || c.Version != 2 || !slices.Equal(c.Fields, wantFields) {
		t.Errorf("changed card %+v, want card 1 version 2 %+v", c, wantFields)
	}
}

func TestFieldChanges(t *testing.T) {
	tests := []struct {
		name          string
		before, after string
		want          []load.FieldChange
	}{
		{"same", `{"a":1}`, `{"a":1}`, nil},
		{"number kept exact", `{"a":1.10,"b":2}`, `{"a":1.1,"b":2}`, []load.FieldChange{{Name: "a", Before: "1.10", After: "1.1"}}},
		{"added and dropped", `{"a":1}`, `{"b":{"c":[1]}}`, []load.FieldChange{{Name: "a", Before: "1", Dropped: true}, {Name: "b", After: `{"c":[1]}`, Added: true}}},
		{"long value cut", `{"a":""}`, `{"a":"` + strings.Repeat("é", 400) + `"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := reportrows.FieldChanges([]byte(tt.before), []byte(tt.after))
			if tt.name == "long value cut" {
				if len(got) != 1 || len(got[0].After) > reportrows.ReportValueBytes+len("…") || !strings.HasSuffix(got[0].After, "…") {
					t.Errorf("got %+v", got)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
