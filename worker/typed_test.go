package worker

import (
	"cmp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/sim"
)

// simMoney is the simulator's truth: the exact sum of its cards' balances
// in cents (money.Parse of the served text), and their ids in descending
// balance order (ties by id, numerically).
func simMoney(t *testing.T, srv *sim.Server) (sum int64, order []string) {
	t.Helper()
	type card struct {
		id    int64
		minor int64
	}
	var cards []card
	for _, c := range srv.Cards() {
		a, err := money.Parse(c.Balance, 2)
		if err != nil {
			t.Fatalf("card %s: balance %q: %v", c.ID, c.Balance, err)
		}
		sum += a.Minor()
		cards = append(cards, card{c.Number, a.Minor()})
	}
	slices.SortFunc(cards, func(a, b card) int {
		if c := cmp.Compare(b.minor, a.minor); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for _, c := range cards {
		order = append(order, strconv.FormatInt(c.id, 10))
	}
	return sum, order
}

// moneyQueries are what the test asks of either warehouse's cards_flat:
// the sum of balance_minor over current cards, the ids by balance_minor
// descending, and balance's type in card_fields.
var moneyQueries = []string{
	`SELECT CAST(sum(balance_minor) AS TEXT) FROM cards_flat WHERE removed_at IS NULL`,
	`SELECT card_id FROM cards_flat WHERE removed_at IS NULL ORDER BY balance_minor DESC, length(card_id), card_id`,
	`SELECT type || ':' || scale || ':' || minor_column || ':' || conflicts FROM card_fields WHERE name = 'balance'`,
}

// checkMoney compares a warehouse's answers (rows of moneyQueries) with
// the simulator's truth.
func checkMoney(t *testing.T, when string, srv *sim.Server, answers [][]string) {
	t.Helper()
	sum, order := simMoney(t, srv)
	if got := answers[0]; len(got) != 1 || got[0] != strconv.FormatInt(sum, 10) {
		t.Errorf("%s: SUM(balance_minor) = %v, want %d (the simulator's balances, in cents)", when, got, sum)
	}
	if got := answers[1]; !slices.Equal(got, order) {
		t.Errorf("%s: ORDER BY balance_minor DESC differs from the simulator's order (%d and %d cards)", when, len(got), len(order))
	}
	if got := answers[2]; len(got) != 1 || got[0] != "decimal:2:balance_minor:0" {
		t.Errorf("%s: card_fields' balance is %v, want decimal:2:balance_minor:0", when, got)
	}
}

// TestCardMoneyMatchesSimulator: a sync of the simulator over loopback into
// either warehouse gives cards_flat.balance_minor whose SUM and ORDER BY
// equal the simulator's own balances exactly, after the first walk and
// after cards change, are added and removed.
func TestCardMoneyMatchesSimulator(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		f := newFixture(t, sim.Options{Cards: 250, Seed: 11})
		ask := func() [][]string {
			var out [][]string
			for _, q := range moneyQueries {
				rows, err := f.wh.DB().QueryContext(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				var col []string
				for rows.Next() {
					var s string
					if err := rows.Scan(&s); err != nil {
						t.Fatal(err)
					}
					col = append(col, s)
				}
				rows.Close()
				out = append(out, col)
			}
			return out
		}
		syncMoney(t, f.srv, func() error {
			_, err := f.job.Run(t.Context(), TriggerSchedule, Options{ConfirmRemovals: true})
			return err
		}, ask)
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgServer(t).NewDatabase(t)
		srv, client := pgFixture(t, 250)
		st := pgStore(t, url, "acme", "replica-a", 10*time.Second, false)
		pool := st.Warehouse.(*postgres.Warehouse).Pool()
		ask := func() [][]string {
			var out [][]string
			for _, q := range moneyQueries {
				rows, err := pool.Query(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				var col []string
				for rows.Next() {
					var s string
					if err := rows.Scan(&s); err != nil {
						t.Fatal(err)
					}
					col = append(col, s)
				}
				rows.Close()
				out = append(out, col)
			}
			return out
		}
		syncMoney(t, srv, func() error {
			_, err := st.Job(client, nil, JobOptions{Version: "test"}).Run(t.Context(), TriggerSchedule, Options{ConfirmRemovals: true})
			return err
		}, ask)
	})
}

// syncMoney runs two walks, the simulator's cards changing between them,
// and checks the warehouse's money after each.
func syncMoney(t *testing.T, srv *sim.Server, run func() error, ask func() [][]string) {
	t.Helper()
	if err := run(); err != nil {
		t.Fatal(err)
	}
	checkMoney(t, "first walk", srv, ask())
	cards := srv.Cards()
	for _, c := range cards[:20] {
		srv.UpdateCard(c.ID)
	}
	srv.RemoveCard(cards[30].ID)
	srv.AddCard()
	for range 3 { // a removal needs two complete walks to miss the card
		if err := run(); err != nil {
			t.Fatal(err)
		}
	}
	checkMoney(t, "after changes", srv, ask())
	if got := ask()[1]; len(got) != len(cards) { // one removed, one added
		t.Errorf("after changes: %d current cards, want %d", len(got), len(cards))
	}
}
