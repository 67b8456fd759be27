package contract

import (
	"fmt"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestRepeatedNewCardInOneBatch commits, in one batch into an empty
// warehouse, pages that list a card twice (a repeated page, offset drift:
// pages [1,2,3] [3,4,5] [6,7]), on both warehouses: the card is stored
// once, its later occurrence is compared with the earlier one of the batch
// (unchanged when equal, a new version when it differs) and counted so,
// never new twice.
func TestRepeatedNewCardInOneBatch(t *testing.T) {
	type card struct{ id, rev int }
	tests := []struct {
		name  string
		pages [][]card
		// wantVersions is card 3's versions (number:change), wantRev the
		// revision card_state holds, wantPages each page's run_pages
		// counts (new:changed:unchanged) and wantRun the run's.
		wantVersions, wantRev, wantPages, wantRun string
	}{
		{name: "same content",
			pages:        [][]card{{{1, 1}, {2, 1}, {3, 1}}, {{3, 1}, {4, 1}, {5, 1}}, {{6, 1}, {7, 1}}},
			wantVersions: "1:new", wantRev: "1",
			wantPages: "3:0:0,2:0:1,2:0:0", wantRun: "7:0:1:8"},
		{name: "different content",
			pages:        [][]card{{{1, 1}, {2, 1}, {3, 1}}, {{3, 2}, {4, 1}, {5, 1}}, {{6, 1}, {7, 1}}},
			wantVersions: "1:new,2:changed", wantRev: "2",
			wantPages: "3:0:0,2:1:0,2:0:0", wantRun: "7:1:0:8"},
		{name: "changed then back",
			pages:        [][]card{{{1, 1}, {2, 1}, {3, 1}}, {{3, 2}, {4, 1}, {5, 1}}, {{6, 1}, {7, 1}, {3, 1}}},
			wantVersions: "1:new,2:changed,3:changed", wantRev: "1",
			wantPages: "3:0:0,2:1:0,2:1:0", wantRun: "7:2:0:9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, b := range backends(t, 0, 50) {
				t.Run(b.name, func(t *testing.T) {
					ctx := t.Context()
					run := startRun(t, b.s)
					ww := b.writer(run)
					for i, cs := range tt.pages {
						p := page(i+1, nil, 1, 7)
						for _, c := range cs {
							p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(c.id), Data: cardJSON(c.id, c.rev)})
						}
						res, err := ww.Add(ctx, p)
						if err != nil {
							t.Fatalf("Add page %d: %v", i+1, err)
						}
						if res.Committed.Pages != 0 {
							t.Fatalf("page %d committed %+v: the test wants one batch", i+1, res.Committed)
						}
					}
					if err := ww.Flush(ctx); err != nil {
						t.Fatalf("Flush: %v", err)
					}
					if got := one(t, b.query(t, `SELECT count(*) FROM card_state`)); got != "7" {
						t.Errorf("card_state holds %s cards, want 7", got)
					}
					if got := one(t, b.query(t, `SELECT count(*) FROM card_state WHERE card_id = '3'`)); got != "1" {
						t.Errorf("card 3 stored %s times", got)
					}
					if got := joined(b.query(t, `SELECT version || ':' || change FROM card_versions WHERE card_id = '3' ORDER BY version`)); got != tt.wantVersions {
						t.Errorf("card 3's versions %s, want %s", got, tt.wantVersions)
					}
					if got := one(t, b.query(t, `SELECT count(*) FROM card_versions WHERE card_id = '3' AND valid_to IS NULL`)); got != "1" {
						t.Errorf("card 3 has %s open versions, want 1", got)
					}
					if got := one(t, b.query(t, `SELECT count(*) FROM card_versions WHERE card_id <> '3'`)); got != "6" {
						t.Errorf("the other cards have %s versions, want 6", got)
					}
					rev := `SELECT json_extract(data, '$.revision') FROM card_state WHERE card_id = '3'`
					if b.name == "postgres" {
						rev = `SELECT data->>'revision' FROM card_state WHERE card_id = '3'`
					}
					if got := one(t, b.query(t, rev)); got != tt.wantRev {
						t.Errorf("card 3 stored at revision %s, want %s", got, tt.wantRev)
					}
					if got := joined(b.query(t, `SELECT cards_new || ':' || cards_changed || ':' || cards_unchanged FROM run_pages ORDER BY page`)); got != tt.wantPages {
						t.Errorf("run_pages counts %s, want %s", got, tt.wantPages)
					}
					if got := one(t, b.query(t, `SELECT cards_new || ':' || cards_changed || ':' || cards_unchanged || ':' || cards_seen FROM sync_runs`)); got != tt.wantRun {
						t.Errorf("run counts %s, want %s", got, tt.wantRun)
					}
				})
			}
		})
	}
}
