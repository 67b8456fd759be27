package load

import (
	"os"
	"testing"
	"time"

	"github.com/cardsync/cardsync/money"
)

// TestExampleWarehouse writes a small warehouse to $LOAD_EXAMPLE_DB for
// trying the README's example queries with sqlite3.
func TestExampleWarehouse(t *testing.T) {
	path := os.Getenv("LOAD_EXAMPLE_DB")
	if path == "" {
		t.Skip("set LOAD_EXAMPLE_DB=/path/to/warehouse.db")
	}
	clk := newClock()
	ctx := t.Context()
	w, err := Open(ctx, path, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	amount := func(s string) *money.Amount {
		a, err := money.Parse(s, 2)
		if err != nil {
			t.Fatal(err)
		}
		return &a
	}
	name := "Acme Ads"
	for i, bal := range []string{"98765.40", "98712.33", "-0.07"} {
		run := startRun(t, w)
		count := int64(30 - i)
		if err := w.SaveAccount(ctx, run, Account{Name: &name, Balance: amount(bal), CardsBalance: amount("1200.00"),
			AvailableRechargeBalance: amount("50.5"), AppliedCardCount: &count, Raw: []byte(`{"name":"Acme Ads","balance":"` + bal + `"}`)}); err != nil {
			t.Fatal(err)
		}
		last := 30 - 2*i
		commit(t, w, run, page(1, idRange(1, 15), i, last))
		commit(t, w, run, page(2, idRange(16, last), 0, last))
		if _, err := finishWalk(ctx, w, run, true); err != nil {
			t.Fatal(err)
		}
		if err := w.FinishRun(ctx, run, RunResult{Status: StatusSucceeded}); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Hour)
	}
	run := startRun(t, w)
	if err := w.FinishRun(ctx, run, RunResult{Status: StatusFailed, Error: "fetch cards page 1: upstream unavailable"}); err != nil {
		t.Fatal(err)
	}
}
