package sqlite

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestQuarantine: each kind of item that cannot be stored as a card goes to
// rejected_cards (redacted, bounded), is counted in the run, and the rest of
// its page commits.
func TestQuarantine(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 1100) + `1` + strings.Repeat(`}`, 1100)
	big := `{"id":"big","blob":"` + strings.Repeat("x", 100<<10) + ` 4111 1111 1111 1111"}`
	tests := []struct {
		name       string
		card       *load.Card      // handed in as a card (the warehouse refuses it)
		rejection  *load.Rejection // handed in as already rejected by the client
		wantID     any             // card_id stored (nil: NULL)
		wantReason string
		wantData   string // substring of the stored data
		notInData  string
	}{
		{name: "nested deeper than SQLite allows", card: &load.Card{ID: "deep", Data: []byte(`{"id":"deep","pan":"4111 1111 1111 1111","x":` + deep + `}`)},
			wantID: "deep", wantReason: "cannot be stored", wantData: "4111 11** **** 1111", notInData: "4111 1111 1111 1111"},
		{name: "not UTF-8", card: &load.Card{ID: "latin1", Data: []byte("{\"id\":\"latin1\",\"name\":\"Jos\xe9\",\"cvv\":\"123\"}")},
			wantID: "latin1", wantReason: "cannot be stored", wantData: "Jos\uFFFD", notInData: `"123"`},
		{name: "no id, with a secret", rejection: &load.Rejection{Index: 1, Reason: `item has no "id"`, Data: []byte(`{"name":"x","card_cvv":"999","number":"5555555555554444"}`)},
			wantID: nil, wantReason: `no "id"`, wantData: `555555******4444`, notInData: "999"},
		{name: "id used twice on the page", rejection: &load.Rejection{Index: 1, CardID: "c1", Reason: "card id already used by data[0] on this page", Data: []byte(`{"id":"c1","v":2}`)},
			wantID: "c1", wantReason: "already used", wantData: `"v":2`},
		{name: "huge item is cut to 64 KiB", rejection: &load.Rejection{Index: 1, CardID: "big", Reason: "test", Data: []byte(big)},
			wantID: "big", wantReason: "test", wantData: `"blob":"xxx`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, path, _ := openTest(t, load.Options{})
			run := startRun(t, w)
			p := page(1, []int{1, 2}, 1, 3)
			if tt.card != nil {
				p.Cards = append(p.Cards, *tt.card)
			} else {
				p.Rejected = append(p.Rejected, *tt.rejection)
			}
			r, err := w.CommitPage(t.Context(), run, p)
			if err != nil {
				t.Fatalf("the page failed: %v", err)
			}
			if r.New != 2 || r.Rejected != 1 || len(r.Rejections) != 1 {
				t.Fatalf("result %+v, want 2 new and 1 rejected", r)
			}
			if got := queryInt(t, w, `SELECT count(*) FROM cards`); got != 2 {
				t.Errorf("cards = %d, want the 2 good ones", got)
			}
			var id any
			var reason, data string
			var times int
			if err := w.db.QueryRowContext(t.Context(), `SELECT card_id, reason, data, times FROM rejected_cards`).Scan(&id, &reason, &data, &times); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(id) != fmt.Sprint(tt.wantID) || !strings.Contains(reason, tt.wantReason) || times != 1 {
				t.Errorf("rejected row: id %v reason %q times %d; want id %v, reason containing %q", id, reason, times, tt.wantID, tt.wantReason)
			}
			if !strings.Contains(data, tt.wantData) || tt.notInData != "" && strings.Contains(data, tt.notInData) {
				t.Errorf("data %.200q: want it to contain %q and not %q", data, tt.wantData, tt.notInData)
			}
			if len(data) > load.MaxRejectedBytes {
				t.Errorf("data is %d bytes, more than %d", len(data), load.MaxRejectedBytes)
			}
			if got := queryInt(t, w, `SELECT cards_rejected FROM sync_runs WHERE run_id = ?`, run); got != 1 {
				t.Errorf("sync_runs.cards_rejected = %d, want 1", got)
			}
			w.Close()
			for _, f := range []string{path, path + "-wal"} {
				if b := readFileIfExists(t, f); strings.Contains(string(b), "4111 1111 1111 1111") || strings.Contains(string(b), "5555555555554444") {
					t.Errorf("%s holds a full card number", f)
				}
			}
		})
	}
}

// TestQuarantineRepeats: the same rejection in later runs updates its row
// instead of adding one per run; a different reason or data adds a row.
func TestQuarantineRepeats(t *testing.T) {
	w, _, clk := openTest(t, load.Options{})
	bad := load.Rejection{Index: 0, Reason: "unusable id: id is null, not an integer or a string", Data: []byte(`{"id":null,"x":1}`)}
	var last int64
	for range 5 {
		clk.Advance(15 * time.Minute)
		last = startRun(t, w)
		p := page(1, []int{1}, 1, 2)
		p.Rejected = []load.Rejection{bad}
		commit(t, w, last, p)
		if err := w.FinishRun(t.Context(), last, load.RunResult{Status: load.StatusSucceeded}); err != nil {
			t.Fatal(err)
		}
	}
	if got := queryInt(t, w, `SELECT count(*) FROM rejected_cards`); got != 1 {
		t.Fatalf("rows = %d after 5 runs with the same rejection, want 1", got)
	}
	if got := queryInt(t, w, `SELECT times FROM rejected_cards`); got != 5 {
		t.Errorf("times = %d, want 5", got)
	}
	if got := queryInt(t, w, `SELECT last_run_id FROM rejected_cards`); got != last {
		t.Errorf("last_run_id = %d, want %d", got, last)
	}
	run := startRun(t, w)
	p := page(1, []int{1}, 1, 2)
	bad.Data = []byte(`{"id":null,"x":2}`)
	p.Rejected = []load.Rejection{bad}
	commit(t, w, run, p)
	if got := queryInt(t, w, `SELECT count(*) FROM rejected_cards`); got != 2 {
		t.Errorf("rows = %d after different data, want 2", got)
	}
}

// TestRejectedCardsCountAsListed: a stored card that starts coming back
// unstorable, and an item with no id, never make a walk miss cards: no
// removal, and the walk's distinct count still equals the API's total.
func TestRejectedCardsCountAsListed(t *testing.T) {
	w, _, clk := openTest(t, load.Options{})
	ctx := t.Context()
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 15), 1, 15))
	if _, err := finishWalk(ctx, w, run, true); err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("[", 1200) + strings.Repeat("]", 1200)
	for walk := range 3 {
		clk.Advance(15 * time.Minute)
		run := startRun(t, w)
		p := page(1, idRange(1, 14), 1, 16)
		p.Cards = append(p.Cards, load.Card{ID: "15", Data: []byte(`{"id":15,"x":` + deep + `}`)})
		p.Rejected = []load.Rejection{{Index: 15, Reason: `item has no "id"`, Data: []byte(`"oops"`)}}
		if got, want := commit(t, w, run, p), (counts{Unchanged: 14, Rejected: 2}); got != want {
			t.Fatalf("walk %d: commit = %+v, want %+v", walk, got, want)
		}
		sum, err := w.WalkSummary(ctx, load.StreamCards)
		if err != nil {
			t.Fatal(err)
		}
		if sum.DistinctIDs != 16 || sum.LastTotal != 16 {
			t.Errorf("walk %d: distinct %d total %d; want 16 and 16 (rejected items are listed items)", walk, sum.DistinctIDs, sum.LastTotal)
		}
		if n, err := finishWalk(ctx, w, run, true); err != nil || n != 0 {
			t.Fatalf("walk %d: removed %d, %v; want none", walk, n, err)
		}
	}
	if got := queryInt(t, w, `SELECT count(*) FROM cards WHERE removed_at IS NULL`); got != 15 {
		t.Errorf("current cards = %d, want 15", got)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM removal_pending`); got != 0 {
		t.Errorf("pending = %d, want 0", got)
	}
}
