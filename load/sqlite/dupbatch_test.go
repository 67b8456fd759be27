package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestWalkWriterRepeatedNewCardInOneBatch commits, in one batch into an
// empty warehouse, pages that list a card twice (a repeated page, offset
// drift: pages [1,2,3] [3,4,5] [6,7]): the card is stored once, its later
// occurrence is compared with the earlier one of the batch (unchanged when
// equal, a new version when it differs) and counted so, never new twice.
func TestWalkWriterRepeatedNewCardInOneBatch(t *testing.T) {
	type card struct{ id, rev int }
	type pageCounts struct{ New, Changed, Unchanged int }
	tests := []struct {
		name  string
		pages [][]card
		// wantVersions and wantRev are card 3's last version and the
		// revision card_state holds.
		wantVersions, wantRev int
		wantPages             []pageCounts
		wantNew, wantChanged  int
		wantUnchanged         int
	}{
		{name: "same content",
			pages:        [][]card{{{1, 1}, {2, 1}, {3, 1}}, {{3, 1}, {4, 1}, {5, 1}}, {{6, 1}, {7, 1}}},
			wantVersions: 1, wantRev: 1,
			wantPages: []pageCounts{{3, 0, 0}, {2, 0, 1}, {2, 0, 0}},
			wantNew:   7, wantUnchanged: 1},
		{name: "different content",
			pages:        [][]card{{{1, 1}, {2, 1}, {3, 1}}, {{3, 2}, {4, 1}, {5, 1}}, {{6, 1}, {7, 1}}},
			wantVersions: 2, wantRev: 2,
			wantPages: []pageCounts{{3, 0, 0}, {2, 1, 0}, {2, 0, 0}},
			wantNew:   7, wantChanged: 1},
		{name: "changed then back",
			pages:        [][]card{{{1, 1}, {2, 1}, {3, 1}}, {{3, 2}, {4, 1}, {5, 1}}, {{6, 1}, {7, 1}, {3, 1}}},
			wantVersions: 3, wantRev: 1,
			wantPages: []pageCounts{{3, 0, 0}, {2, 1, 0}, {2, 1, 0}},
			wantNew:   7, wantChanged: 2},
		{name: "changed then same",
			pages:        [][]card{{{1, 1}, {2, 1}, {3, 1}}, {{3, 2}, {4, 1}, {5, 1}}, {{6, 1}, {7, 1}, {3, 2}}},
			wantVersions: 2, wantRev: 2,
			wantPages: []pageCounts{{3, 0, 0}, {2, 1, 0}, {2, 0, 1}},
			wantNew:   7, wantChanged: 1, wantUnchanged: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			w, _, _ := openTest(t, load.Options{BatchPages: 50, BatchDelay: time.Hour, CommitDelay: new(time.Hour)})
			run := startRun(t, w)
			ww := w.NewWalkWriter(run, load.StreamCards)
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
			if got := queryInt(t, w, `SELECT count(*) FROM card_state`); got != 7 {
				t.Errorf("card_state holds %d cards, want 7", got)
			}
			if got := queryInt(t, w, `SELECT count(*) FROM card_state WHERE card_id = '3'`); got != 1 {
				t.Errorf("card 3 stored %d times", got)
			}
			if got := queryInt(t, w, `SELECT max(version) FROM card_versions WHERE card_id = '3'`); got != int64(tt.wantVersions) {
				t.Errorf("card 3 has %d versions, want %d", got, tt.wantVersions)
			}
			if got := queryInt(t, w, `SELECT count(*) FROM card_versions WHERE card_id = '3' AND valid_to IS NULL`); got != 1 {
				t.Errorf("card 3 has %d open versions, want 1", got)
			}
			if got := queryInt(t, w, `SELECT count(*) FROM card_versions WHERE card_id = '3' AND version > 1 AND change <> 'changed'`); got != 0 {
				t.Errorf("card 3 has %d later versions not marked changed", got)
			}
			if got := queryInt(t, w, `SELECT count(*) FROM card_versions WHERE card_id <> '3'`); got != 6 {
				t.Errorf("the other cards have %d versions, want 6", got)
			}
			if got := queryInt(t, w, `SELECT json_extract(data, '$.revision') FROM card_state WHERE card_id = '3'`); got != int64(tt.wantRev) {
				t.Errorf("card 3 stored at revision %d, want %d", got, tt.wantRev)
			}
			for i, want := range tt.wantPages {
				var got pageCounts
				if err := w.db.QueryRowContext(ctx, `SELECT cards_new, cards_changed, cards_unchanged FROM run_pages WHERE run_id = ? AND page = ?`,
					run, i+1).Scan(&got.New, &got.Changed, &got.Unchanged); err != nil {
					t.Fatalf("run_pages of page %d: %v", i+1, err)
				}
				if got != want {
					t.Errorf("page %d counted %+v, want %+v", i+1, got, want)
				}
			}
			var n, c, u, seen int
			if err := w.db.QueryRowContext(ctx, `SELECT cards_new, cards_changed, cards_unchanged, cards_seen FROM sync_runs WHERE run_id = ?`, run).Scan(&n, &c, &u, &seen); err != nil {
				t.Fatal(err)
			}
			if n != tt.wantNew || c != tt.wantChanged || u != tt.wantUnchanged || seen != n+c+u {
				t.Errorf("run counted new %d changed %d unchanged %d of %d seen, want %d, %d, %d", n, c, u, seen, tt.wantNew, tt.wantChanged, tt.wantUnchanged)
			}
			if cp, err := w.Checkpoint(ctx, load.StreamCards); err != nil || cp.NextPage != len(tt.pages)+1 {
				t.Errorf("checkpoint %+v, %v: want next page %d", cp, err, len(tt.pages)+1)
			}
		})
	}
}
