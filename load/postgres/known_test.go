package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestFirstWalkKnowsItsCards: a first walk into an account that holds no
// card, under the account's lease, compares its pages with the cards its
// own batches committed (knownCards) instead of asking the warehouse; the
// results and the rows stored are those of a writer that asks (no lease):
// a card repeated unchanged in a later batch is unchanged, one repeated
// changed gets a second version, one repeated within a batch is stored
// once; the next run, on an account that holds cards, asks the warehouse.
func TestFirstWalkKnowsItsCards(t *testing.T) {
	pages := []load.Page{
		page(1, []int{1, 2, 3}, 0, 12), page(2, []int{4, 5, 6}, 0, 12),
		page(3, []int{1, 7}, 0, 12), page(4, []int{9, 7}, 0, 12),
	}
	changed := page(3, []int{4}, 1, 12)
	pages[2].Cards = append(pages[2].Cards, changed.Cards...)
	var got [2]string
	for i, leased := range []bool{false, true} {
		w, _, _ := openPG(t, Options{RequireLease: leased, Common: load.Options{BatchPages: 2}})
		if leased {
			if _, err := w.AcquireLease(t.Context(), "default", "test", time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		run := startRun(t, w)
		ww := w.NewWalkWriter(run, load.StreamCards)
		var res []counts
		for _, p := range pages {
			r, err := ww.Add(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			res = append(res, counts{r.New, r.Changed, r.Returned, r.Unchanged, r.Rejected})
		}
		if err := ww.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if leased && ww.known.cards == nil {
			t.Error("the leased first walk does not know its cards")
		}
		again := w.NewWalkWriter(startRun(t, w), load.StreamCards)
		r, err := again.Add(t.Context(), page(1, []int{1, 2, 3}, 0, 12))
		if err != nil || r.Unchanged != 3 || again.known.cards != nil {
			t.Errorf("next run's first page: %+v, %v, knows %v; want 3 unchanged, asked", r, err, again.known.cards != nil)
		}
		got[i] = fmt.Sprint(res, " ", joined(pgQuery(t, w, `SELECT card_id || ':' || version || ':' || change FROM card_versions ORDER BY card_id, version`)),
			" ", one(t, pgQuery(t, w, `SELECT sum(cards_new) || '/' || sum(cards_changed) || '/' || sum(cards_unchanged) FROM run_pages`)))
	}
	want := "[{3 0 0 0 0} {3 0 0 0 0} {1 1 0 1 0} {1 0 0 1 0}] 1:1:new,2:1:new,3:1:new,4:1:new,4:2:changed,5:1:new,6:1:new,7:1:new,9:1:new 8/1/2"
	if got[0] != want || got[1] != got[0] {
		t.Errorf("asking:  %s\nknowing: %s\nwant     %s", got[0], got[1], want)
	}
}
