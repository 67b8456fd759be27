package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestCardsViewLastSeen: last_seen_at/last_seen_run of the cards view are
// the last complete walk that listed the card, although no card row is
// written when a walk closes. The steps run in order on one warehouse; the
// clock starts at 12:00.
func TestCardsViewLastSeen(t *testing.T) {
	w, _, clk := openTest(t, load.Options{})
	ctx := t.Context()
	var run int64
	at := func(hhmm string) {
		t.Helper()
		want, err := time.Parse("2006-01-02 15:04", "2026-03-01 "+hhmm)
		if err != nil {
			t.Fatal(err)
		}
		clk.Advance(want.Sub(clk.Now()))
	}
	// list commits one page listing ids (a walk of its own run when
	// newRun), finish closes the walk.
	list := func(newRun bool, ids ...int) {
		t.Helper()
		if newRun {
			run = startRun(t, w)
		}
		ww := w.NewWalkWriter(run, load.StreamCards)
		if _, err := ww.Add(ctx, page(1, ids, 1, len(ids))); err != nil {
			t.Fatal(err)
		}
		if err := ww.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	finish := func(consistent bool) {
		t.Helper()
		if _, err := w.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: consistent}); err != nil {
			t.Fatal(err)
		}
	}
	type seen struct {
		at  string
		run int64
	}
	steps := []struct {
		name string
		do   func()
		want map[int]seen // card id -> last seen (time of day, run)
	}{
		{"card listed by a complete walk", func() { at("12:00"); list(true, 1, 2, 3, 4, 5); finish(true) },
			map[int]seen{1: {"12:00", 1}, 5: {"12:00", 1}}},
		{"new card mid-walk", func() { at("13:00"); list(true, 1, 2, 3, 4, 5, 6) },
			map[int]seen{6: {"13:00", 2}, 1: {"12:00", 1}}},
		{"the walk completes", func() { at("13:30"); finish(true) },
			map[int]seen{1: {"13:30", 2}, 6: {"13:30", 2}}},
		{"pending card", func() { at("14:00"); list(true, 1, 2, 3, 4, 6); finish(true) },
			map[int]seen{5: {"13:30", 2}, 1: {"14:00", 3}}},
		{"removed card", func() { at("15:00"); list(true, 1, 2, 3, 4, 6); finish(true) },
			map[int]seen{5: {"13:30", 2}, 1: {"15:00", 4}}},
		{"returned card mid-walk", func() { at("16:00"); list(true, 1, 2, 3, 4, 5, 6) },
			map[int]seen{5: {"16:00", 5}, 1: {"15:00", 4}}},
		{"returned card after the walk", func() { at("16:30"); finish(true) },
			map[int]seen{5: {"16:30", 5}, 1: {"16:30", 5}}},
		{"pending again", func() { at("17:00"); list(true, 1, 2, 3, 4, 5); finish(true) },
			map[int]seen{6: {"16:30", 5}, 1: {"17:00", 6}}},
		{"pending card listed by an inconsistent walk", func() { at("18:00"); list(true, 1, 2, 3, 4, 5, 6); finish(false) },
			map[int]seen{6: {"18:00", 7}, 1: {"17:00", 6}}},
		{"complete walk after it", func() { at("19:00"); list(true, 1, 2, 3, 4, 5, 6); finish(true) },
			map[int]seen{6: {"19:00", 8}, 1: {"19:00", 8}, 5: {"19:00", 8}}},
		{"quiet walk folded into the one before", func() { at("20:00"); list(true, 1, 2, 3, 4, 5, 6); finish(true) },
			map[int]seen{6: {"20:00", 9}, 1: {"20:00", 9}}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do()
			for id, want := range s.want {
				var gotAt string
				var gotRun int64
				if err := w.db.QueryRowContext(ctx, `SELECT last_seen_at, last_seen_run FROM cards WHERE card_id = ?`, fmt.Sprint(id)).
					Scan(&gotAt, &gotRun); err != nil {
					t.Fatalf("card %d: %v", id, err)
				}
				if wantAt := "2026-03-01T" + want.at + ":00Z"; gotAt != wantAt || gotRun != want.run {
					t.Errorf("card %d: last seen %s (run %d), want %s (run %d)", id, gotAt, gotRun, wantAt, want.run)
				}
			}
			if got := queryInt(t, w, `SELECT count(*) FROM cards_current c JOIN cards USING (card_id)
				WHERE c.last_seen_at IS NOT cards.last_seen_at OR c.last_seen_run IS NOT cards.last_seen_run`); got != 0 {
				t.Errorf("%d cards_current rows disagree with cards", got)
			}
		})
	}
	if got := queryInt(t, w, `SELECT walks FROM sync_walks ORDER BY walk_id DESC LIMIT 1`); got != 2 {
		t.Errorf("last sync_walks row stands for %d walks, want 2 (the quiet one folded)", got)
	}
}

// TestCardsViewColumns: the cards view keeps the release-1 table's columns
// in their order, so SELECT * and positional readers see no change; later
// columns come after them (account, then the card's money: schema 17).
func TestCardsViewColumns(t *testing.T) {
	w, _, _ := openTest(t, load.Options{})
	rows, err := w.db.QueryContext(t.Context(), `SELECT * FROM cards LIMIT 0`)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	rows.Close()
	want := []string{"card_id", "data", "first_seen_at", "last_seen_at", "updated_at", "removed_at", "first_seen_run", "last_seen_run", "account",
		"amount_scale", "amount_currency", "amounts_rounded"}
	if fmt.Sprint(cols) != fmt.Sprint(want) {
		t.Errorf("cards columns %v, want %v", cols, want)
	}
}
