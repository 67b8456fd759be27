package sqlite

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"

	"github.com/cardsync/cardsync/account"
	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/sim"
)

// TestExampleWarehouse builds a small warehouse (three syncs with moving
// balances and a shrinking card list, then a failed run) and checks what the
// analysts' views make of it. With $LOAD_EXAMPLE_DB set it writes the
// warehouse there, for trying queries with sqlite3.
func TestExampleWarehouse(t *testing.T) {
	path := os.Getenv("LOAD_EXAMPLE_DB")
	if path == "" {
		path = filepath.Join(t.TempDir(), "example.db")
	}
	clk := sim.NewClock()
	ctx := t.Context()
	w, err := Open(ctx, path, load.Options{Now: clk.Now})
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
		if err := w.SaveAccount(ctx, run, load.Account{Snapshot: account.Snapshot{Name: &name, Balance: amount(bal), CardsBalance: amount("1200.00"),
			AvailableRechargeBalance: amount("50.5"), AppliedCardCount: &count}, Raw: []byte(`{"name":"Acme Ads","balance":"` + bal + `"}`)}); err != nil {
			t.Fatal(err)
		}
		last := 30 - 2*i
		commit(t, w, run, page(1, idRange(1, 15), i, last))
		commit(t, w, run, page(2, idRange(16, last), 0, last))
		if _, err := finishWalk(ctx, w, run, true); err != nil {
			t.Fatal(err)
		}
		if err := w.FinishRun(ctx, run, load.RunResult{Status: load.StatusSucceeded}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour)
	}
	run := startRun(t, w)
	if err := w.FinishRun(ctx, run, load.RunResult{Status: load.StatusFailed, Error: "fetch cards page 1: upstream unavailable"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query string
		want  int64
	}{
		{`SELECT count(*) FROM account_balances`, 3},
		// Each amount's first value, then the two moves of the balance.
		{`SELECT count(*) FROM account_balance_changes`, 5},
		{`SELECT count(*) FROM account_balance_changes WHERE amount = 'balance' AND previous_snapshot_id IS NOT NULL`, 2},
		// 30 cards listed at first; the two missed by two walks are
		// removed, the two missed by the last walk only are pending.
		{`SELECT count(*) FROM cards_current`, 28},
		{`SELECT count(*) FROM removal_pending`, 2},
		{`SELECT count(*) FROM cards WHERE removed_at IS NOT NULL`, 2},
		{`SELECT failures_in_a_row FROM sync_health`, 1},
		{`SELECT count(*) FROM sync_runs WHERE status = 'succeeded'`, 3},
	} {
		if got := queryInt(t, w, c.query); got != c.want {
			t.Errorf("%s = %d, want %d", c.query, got, c.want)
		}
	}
	var balance string
	if err := w.db.QueryRowContext(ctx, `SELECT balance FROM account_balances ORDER BY taken_at DESC LIMIT 1`).Scan(&balance); err != nil {
		t.Fatal(err)
	}
	if balance != "-0.07" {
		t.Errorf("latest balance %q, want the exact text -0.07", balance)
	}
}
