//go:build e2e

package e2e

import (
	"database/sql"
	"strings"
	"sync"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// TestDriftBetweenPages removes a card on an already-read page and adds one
// after a later page while a walk is in progress: the walk must be flagged
// inconsistent and mark nothing removed or pending; the next quiet run makes
// the removed card pending and the one after marks it removed.
func TestDriftBetweenPages(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 31, Cards: 90}) // 6 pages
	d := newDeployment(t, up)
	d.backfillOK(t)
	assertTruth(t, up, d.db)

	gone := up.Cards()[3].ID // on page 1
	var mu sync.Mutex
	var added string
	up.OnPageServed(func(page int) {
		switch page {
		case 2:
			if !up.RemoveCard(gone) {
				t.Error("remove card")
			}
		case 4:
			c := up.AddCard()
			mu.Lock()
			added = c.ID
			mu.Unlock()
		}
	})
	out := d.backfillOK(t)
	up.OnPageServed(nil)
	mu.Lock()
	if added == "" {
		t.Fatal("the walk never reached page 4")
	}
	mu.Unlock()

	assertStructural(t, d.db)
	run := lastRun(t, d.db)
	if !run.WalkConsistent.Valid || run.WalkConsistent.Int64 != 0 {
		t.Errorf("walk_consistent %v, want 0\n%s", run.WalkConsistent, out)
	}
	if ids := removedCards(t, d.db); len(ids) != 0 {
		t.Errorf("the drifting walk marked %v removed", ids)
	}
	db := openRO(t, d.db)
	for _, c := range up.Cards() {
		var removed sql.NullString
		err := db.QueryRow(`SELECT removed_at FROM cards WHERE card_id = ?`, c.ID).Scan(&removed)
		if err == nil && removed.Valid {
			t.Errorf("card %s is listed upstream but marked removed", c.ID)
		}
	}
	code, human, errOut := d.run("status")
	if code != 0 || !strings.Contains(human, "INCONSISTENT") {
		t.Errorf("status exit %d does not say INCONSISTENT:\n%s%s", code, human, errOut)
	}
	if st := d.status(t); st.LastWalkConsistent == nil || *st.LastWalkConsistent {
		t.Errorf("status -json last_walk_consistent = %v, want false", st.LastWalkConsistent)
	}

	if ids := pendingCards(t, d.db); len(ids) != 0 {
		t.Errorf("the drifting walk made %v pending removal", ids)
	}

	out = d.backfillOK(t)
	assertStructural(t, d.db)
	run = lastRun(t, d.db)
	if run.WalkConsistent.Int64 != 1 {
		t.Errorf("quiet run: walk_consistent %v, want 1", run.WalkConsistent)
	}
	if ids := pendingCards(t, d.db); len(ids) != 1 || ids[0] != gone {
		t.Errorf("after the quiet run pending cards are %v, want [%s]", ids, gone)
	}
	if ids := removedCards(t, d.db); len(ids) != 0 {
		t.Errorf("one quiet run marked %v removed; removal takes two consistent walks", ids)
	}
	if !strings.Contains(out, "1 card not listed; marked removed if the next walk also misses it") {
		t.Errorf("backfill output does not report the pending removal:\n%s", out)
	}
	if code, human, _ := d.run("status"); code != 0 || !strings.Contains(human, "complete and consistent") ||
		!strings.Contains(human, "1 card missing from the last walk") {
		t.Errorf("status after the quiet run:\n%s", human)
	}
	if st := d.status(t); st.PendingRemovals != 1 {
		t.Errorf("status -json pending_removals = %d, want 1", st.PendingRemovals)
	}

	d.backfillOK(t)
	assertTruth(t, up, d.db)
	if ids := removedCards(t, d.db); len(ids) != 1 || ids[0] != gone {
		t.Errorf("after two quiet runs removed cards are %v, want [%s]", ids, gone)
	}
	if st := d.status(t); st.PendingRemovals != 0 || st.RemovedCards != 1 {
		t.Errorf("status -json after two quiet runs: pending_removals %d, removed_cards %d; want 0, 1", st.PendingRemovals, st.RemovedCards)
	}
}

// TestDriftSameInstant removes a card on an already-read page and adds one
// at the end between the same two page fetches: the total never changes,
// no id repeats, and the count of distinct ids equals the total, so the
// walk looks consistent while one card still listed upstream was skipped
// (the first card of page 3 shifts onto page 2, already read). No count can
// see it; two-walk confirmation keeps it from being marked removed (I9):
// the skipped card is only pending, the next walk lists it and clears it,
// and the truly removed card is removed one walk later.
func TestDriftSameInstant(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 31, Cards: 90}) // 6 pages of 15
	d := newDeployment(t, up)
	d.backfillOK(t)
	cards := up.Cards()
	gone := cards[3].ID     // on page 1, read before it goes
	skipped := cards[30].ID // first of page 3; shifts onto page 2 once gone goes
	up.OnPageServed(func(page int) {
		if page == 2 {
			up.RemoveCard(gone)
			up.AddCard()
		}
	})
	d.backfillOK(t)
	up.OnPageServed(nil)

	assertStructural(t, d.db)
	if run := lastRun(t, d.db); run.WalkConsistent.Int64 != 1 {
		t.Errorf("drifting walk: walk_consistent %v; the scenario wants a walk the counts cannot fault", run.WalkConsistent)
	}
	db := openRO(t, d.db)
	for _, c := range up.Cards() {
		var removed sql.NullString
		err := db.QueryRow(`SELECT removed_at FROM cards WHERE card_id = ?`, c.ID).Scan(&removed)
		if err == nil && removed.Valid {
			t.Errorf("card %s is listed upstream but was marked removed by run %d", c.ID, lastRun(t, d.db).ID)
		}
	}
	if ids := removedCards(t, d.db); len(ids) != 0 {
		t.Errorf("the drifting walk marked %v removed", ids)
	}
	if ids := pendingCards(t, d.db); len(ids) != 1 || ids[0] != skipped {
		t.Errorf("after the drifting walk pending cards are %v, want only the skipped card [%s]", ids, skipped)
	}

	// First quiet walk: the skipped card is listed again (no longer
	// pending); the removed card is missed for the first time.
	d.backfillOK(t)
	assertStructural(t, d.db)
	if ids := pendingCards(t, d.db); len(ids) != 1 || ids[0] != gone {
		t.Errorf("after the first quiet walk pending cards are %v, want [%s]", ids, gone)
	}
	if ids := removedCards(t, d.db); len(ids) != 0 {
		t.Errorf("after the first quiet walk removed cards are %v, want none", ids)
	}

	// Second quiet walk: the removal is confirmed.
	d.backfillOK(t)
	if ids := removedCards(t, d.db); len(ids) != 1 || ids[0] != gone {
		t.Errorf("after the second quiet walk removed cards are %v, want [%s]", ids, gone)
	}
	if ids := pendingCards(t, d.db); len(ids) != 0 {
		t.Errorf("after the second quiet walk pending cards are %v, want none", ids)
	}
	assertTruth(t, up, d.db)
}
