package sqlite

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
)

func TestCommitPageSameTwiceChangesNothing(t *testing.T) {
	w, _, clk := openTest(t, load.Options{})
	run := startRun(t, w)
	p := page(1, idRange(1, 15), 1, 30)
	if got, want := commit(t, w, run, p), (counts{New: 15}); got != want {
		t.Fatalf("first commit = %+v, want %+v", got, want)
	}
	clk.Advance(time.Minute)
	versions := queryInt(t, w, "SELECT count(*) FROM card_versions")
	cardsBefore := queryString(t, w, "SELECT group_concat(card_id || data || first_seen_at || last_seen_at || updated_at || last_seen_run, '|') FROM cards")
	// total_changes counts rows written by this connection; an unchanged
	// card must not add to it beyond the walk/audit/checkpoint/run rows.
	before := queryInt(t, w, "SELECT total_changes()")
	if got, want := commit(t, w, run, p), (counts{Unchanged: 15}); got != want {
		t.Fatalf("second commit = %+v, want %+v", got, want)
	}
	written := queryInt(t, w, "SELECT total_changes()") - before
	// run_pages upsert, checkpoint upsert, sync_runs counters, walk total: at most 4 rows.
	if written > 4 {
		t.Errorf("second commit wrote %d rows, want <= 4 (no card rows)", written)
	}
	if got := queryInt(t, w, "SELECT count(*) FROM card_versions"); got != versions {
		t.Errorf("versions = %d after the same page twice, want %d", got, versions)
	}
	if got := queryString(t, w, "SELECT group_concat(card_id || data || first_seen_at || last_seen_at || updated_at || last_seen_run, '|') FROM cards"); got != cardsBefore {
		t.Errorf("cards rows changed by an identical page")
	}
	cp, err := w.Checkpoint(t.Context(), load.StreamCards)
	if err != nil {
		t.Fatal(err)
	}
	if cp.NextPage != 2 || cp.TotalPages != 2 || cp.TotalItems != 30 || !cp.InProgress || cp.RunID != run {
		t.Errorf("checkpoint = %+v, want next page 2 of 2, 30 items, in progress, run %d", cp, run)
	}
}

func TestCommitPageChangedAndNew(t *testing.T) {
	w, _, clk := openTest(t, load.Options{})
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 15), 1, 15))
	clk.Advance(time.Hour)
	p := page(1, idRange(6, 20), 1, 15)
	for i := range 5 { // cards 6..10 change
		p.Cards[i].Data = cardJSON(6+i, 2)
	}
	if got, want := commit(t, w, run, p), (counts{New: 5, Changed: 5, Unchanged: 5}); got != want {
		t.Fatalf("commit = %+v, want %+v", got, want)
	}
	if got := queryInt(t, w, "SELECT count(*) FROM card_versions WHERE card_id = '6'"); got != 2 {
		t.Errorf("card 6 versions = %d, want 2", got)
	}
	if got := queryInt(t, w, "SELECT count(*) FROM card_versions WHERE valid_to IS NULL"); got != 20 {
		t.Errorf("current versions = %d, want 20", got)
	}
	if got, want := queryString(t, w, "SELECT valid_to FROM card_versions WHERE card_id = '6' AND version = 1"), "2026-03-01T13:00:00Z"; got != want {
		t.Errorf("closed version valid_to = %q, want %q", got, want)
	}
	if got, want := queryString(t, w, "SELECT updated_at FROM cards WHERE card_id = '6'"), "2026-03-01T13:00:00Z"; got != want {
		t.Errorf("updated_at = %q, want %q", got, want)
	}
	if got, want := queryString(t, w, "SELECT updated_at FROM cards WHERE card_id = '11'"), "2026-03-01T12:00:00Z"; got != want {
		t.Errorf("unchanged card updated_at = %q, want %q", got, want)
	}
	runs, err := w.Runs(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	if r.Pages != 2 || r.CardsSeen != 30 || r.CardsNew != 20 || r.CardsChanged != 5 || r.CardsUnchanged != 5 || r.Requests != 2 {
		t.Errorf("run counters = %+v", r)
	}
}

// TestCommitPageErrorLeavesNothing: a page that fails part-way (the disk
// fills after some cards were written, or the run row is missing at the
// end) leaves nothing of itself. (Odd cards are not errors: they are
// quarantined, see TestQuarantine.)
func TestCommitPageErrorLeavesNothing(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(t *testing.T, w *Warehouse, p *load.Page, run *int64)
	}{
		{"disk full mid-page", func(t *testing.T, w *Warehouse, p *load.Page, _ *int64) {
			for i := range p.Cards { // big cards, so the page needs new database pages
				p.Cards[i].Data = []byte(fmt.Sprintf(`{"id":%d,"blob":"%s"}`, 16+i, strings.Repeat("z", 3000)))
			}
			n := queryInt(t, w, "PRAGMA page_count")
			if _, err := w.db.ExecContext(t.Context(), fmt.Sprintf("PRAGMA max_page_count = %d", n+3)); err != nil {
				t.Fatal(err)
			}
		}},
		{"unknown run", func(_ *testing.T, _ *Warehouse, _ *load.Page, run *int64) { *run = 999 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, _, _ := openTest(t, load.Options{})
			run := startRun(t, w)
			commit(t, w, run, page(1, idRange(1, 15), 1, 30))
			p := page(2, idRange(16, 30), 1, 30)
			p.Cards[0].Data = cardJSON(16, 1)
			commitRun := run
			tt.break_(t, w, &p, &commitRun)
			if _, err := w.CommitPage(t.Context(), commitRun, p); err == nil {
				t.Fatal("CommitPage succeeded, want error")
			}
			if _, err := w.db.ExecContext(t.Context(), "PRAGMA max_page_count = 4294967294"); err != nil {
				t.Fatal(err)
			}
			for q, want := range map[string]int64{
				"SELECT count(*) FROM cards":                          15,
				"SELECT count(*) FROM card_versions":                  15,
				"SELECT count(*) FROM run_pages":                      1,
				"SELECT next_page FROM sync_checkpoints":              2,
				"SELECT pages FROM sync_runs":                         1,
				"SELECT count(*) FROM walk_seen":                      1,
				"SELECT json_array_length(ids) FROM walk_seen":        15,
				"SELECT count(*) FROM card_fields WHERE last_run = 1": queryInt(t, w, "SELECT count(*) FROM card_fields"),
			} {
				if got := queryInt(t, w, q); got != want {
					t.Errorf("%s = %d, want %d", q, got, want)
				}
			}
		})
	}
}

func TestRemovalOnlyOnCompleteWalk(t *testing.T) {
	w, _, clk := openTest(t, load.Options{})
	ctx := t.Context()
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 15), 1, 30))
	commit(t, w, run, page(2, idRange(16, 30), 1, 30))
	if n, err := finishWalk(ctx, w, run, true); err != nil || n != 0 {
		t.Fatalf("FinishWalk = %d, %v; want 0, nil", n, err)
	}

	// Second walk, interrupted after page 1, resumed by another run: cards
	// 1..15 seen in the first attempt must count (union over attempts).
	clk.Advance(time.Hour)
	run2 := startRun(t, w)
	commit(t, w, run2, page(1, idRange(1, 15), 1, 28))
	if err := w.FinishRun(ctx, run2, load.RunResult{Status: load.StatusFailed, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	cp, _ := w.Checkpoint(ctx, load.StreamCards)
	if cp.NextPage != 2 || !cp.InProgress {
		t.Fatalf("checkpoint after failed run = %+v, want resume at page 2", cp)
	}
	run3 := startRun(t, w)
	commit(t, w, run3, page(2, idRange(15, 28), 1, 28)) // 15 duplicated, 29 and 30 gone

	sum, err := w.WalkSummary(ctx, load.StreamCards)
	if err != nil {
		t.Fatal(err)
	}
	want := load.WalkSummary{WalkID: sum.WalkID, StartedAt: sum.StartedAt, StartedRun: run2, Runs: 2, Pages: 2, LastPage: 2,
		TotalPages: 2, DistinctIDs: 28, DuplicateIDs: 1, FirstTotal: 28, LastTotal: 28, MinTotal: 28, MaxTotal: 28}
	if !reflect.DeepEqual(sum, want) {
		t.Errorf("WalkSummary = %+v\nwant %+v", sum, want)
	}

	// An inconsistent finish marks nothing.
	if n, err := finishWalk(ctx, w, run3, false); err != nil || n != 0 {
		t.Fatalf("inconsistent FinishWalk = %d, %v; want 0, nil", n, err)
	}
	if got := queryInt(t, w, "SELECT count(*) FROM cards WHERE removed_at IS NOT NULL"); got != 0 {
		t.Fatalf("removed after inconsistent walk = %d, want 0", got)
	}
	if cp, _ := w.Checkpoint(ctx, load.StreamCards); cp.NextPage != 1 || cp.InProgress {
		t.Errorf("checkpoint after FinishWalk = %+v, want page 1, not in progress", cp)
	}

	// A complete walk misses 29 and 30: pending, not removed yet.
	clk.Advance(time.Hour)
	commit(t, w, run3, page(1, idRange(1, 15), 1, 28))
	commit(t, w, run3, page(2, idRange(16, 28), 1, 28))
	if n, err := finishWalk(ctx, w, run3, true); err != nil || n != 0 {
		t.Fatalf("first complete walk missing 29, 30: FinishWalk = %d, %v; want 0, nil", n, err)
	}
	if got := queryString(t, w, "SELECT group_concat(card_id) FROM (SELECT card_id FROM removal_pending ORDER BY card_id)"); got != "29,30" {
		t.Errorf("pending = %q, want 29,30", got)
	}
	if n, err := w.PendingRemovals(ctx); err != nil || n != 2 {
		t.Errorf("PendingRemovals = %d, %v; want 2, nil", n, err)
	}

	// The next complete walk misses them too: removed.
	clk.Advance(time.Hour)
	commit(t, w, run3, page(1, idRange(1, 15), 1, 28))
	commit(t, w, run3, page(2, idRange(16, 28), 1, 28))
	n, err := finishWalk(ctx, w, run3, true)
	if err != nil || n != 2 {
		t.Fatalf("FinishWalk = %d, %v; want 2, nil", n, err)
	}
	checkRemovedAfterTwoWalks(t, w)
	checkCardReturns(t, w, run3, clk)
}

// checkRemovedAfterTwoWalks: cards 29 and 30, missed by two complete walks,
// are removed (a closing version, no pending row), the others current.
func checkRemovedAfterTwoWalks(t *testing.T, w *Warehouse) {
	t.Helper()
	if got := queryInt(t, w, "SELECT count(*) FROM removal_pending"); got != 0 {
		t.Errorf("pending after confirmation = %d, want 0", got)
	}
	if got, want := queryString(t, w, "SELECT group_concat(card_id) FROM (SELECT card_id FROM cards WHERE removed_at IS NOT NULL ORDER BY card_id)"), "29,30"; got != want {
		t.Errorf("removed = %q, want %q", got, want)
	}
	if got := queryInt(t, w, "SELECT count(*) FROM cards_current"); got != 28 {
		t.Errorf("cards_current = %d, want 28", got)
	}
	if got := queryString(t, w, "SELECT change || ':' || version FROM card_versions WHERE card_id = '29' AND valid_to IS NULL"); got != "removed:2" {
		t.Errorf("current version of 29 = %q, want removed:2", got)
	}
	if got := queryInt(t, w, "SELECT count(*) FROM card_versions WHERE card_id = '29' AND version = 1 AND valid_to IS NOT NULL"); got != 1 {
		t.Errorf("version 1 of 29 not closed")
	}
	if got := queryString(t, w, "SELECT last_seen_at FROM cards WHERE card_id = '1'"); got != "2026-03-01T15:00:00Z" {
		t.Errorf("last_seen_at of card 1 = %q, want the last walk's time", got)
	}
	if got := queryInt(t, w, "SELECT count(*) FROM walk_seen"); got != 0 {
		t.Errorf("walk_seen rows left = %d, want 0", got)
	}
}

// checkCardReturns: card 30, removed, comes back an hour later in run: a
// new version, removed_at NULL; no card is ever deleted.
func checkCardReturns(t *testing.T, w *Warehouse, run int64, clk *sim.Clock) {
	t.Helper()
	ctx := t.Context()
	clk.Advance(time.Hour)
	if got, want := commit(t, w, run, page(1, []int{30}, 1, 29)), (counts{Returned: 1}); got != want {
		t.Errorf("returning card = %+v, want %+v", got, want)
	}
	if got := queryString(t, w, "SELECT change || ':' || version FROM card_versions WHERE card_id = '30' AND valid_to IS NULL"); got != "returned:3" {
		t.Errorf("current version of 30 = %q, want returned:3", got)
	}
	if got := queryInt(t, w, "SELECT removed_at IS NULL FROM cards WHERE card_id = '30'"); got != 1 {
		t.Errorf("card 30 still removed")
	}
	// Never hard-delete.
	if got := queryInt(t, w, "SELECT count(*) FROM cards"); got != 30 {
		t.Errorf("cards = %d, want 30", got)
	}
	st, err := w.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cards != 30 || st.CurrentCards != 29 || st.RemovedCards != 1 || st.LastWalkConsistent == nil || !*st.LastWalkConsistent {
		t.Errorf("Status = %+v", st)
	}
}

func TestResetCheckpoint(t *testing.T) {
	w, _, _ := openTest(t, load.Options{})
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 15), 1, 30))
	if err := w.ResetCheckpoint(t.Context(), load.StreamCards); err != nil {
		t.Fatal(err)
	}
	cp, err := w.Checkpoint(t.Context(), load.StreamCards)
	if err != nil {
		t.Fatal(err)
	}
	if cp.NextPage != 1 || cp.InProgress {
		t.Errorf("checkpoint = %+v, want page 1, not in progress", cp)
	}
	if got := queryString(t, w, "SELECT outcome FROM sync_walks"); got != "reset" {
		t.Errorf("walk outcome = %q, want reset", got)
	}
}

func TestCardsFlatRegenerated(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	run := startRun(t, w)
	p := page(1, nil, 1, 2)
	p.Cards = []load.Card{{ID: "1", Data: []byte(`{"id":1,"status":"active","limits":{"daily":"5.00"},"tags":["a"]}`)}}
	commit(t, w, run, p)
	if got := queryString(t, w, `SELECT status || '|' || limits || '|' || tags FROM cards_flat`); got != `active|{"daily":"5.00"}|["a"]` {
		t.Errorf("cards_flat row = %q", got)
	}
	// A new field, with hostile names, appears: the view gains columns.
	p.Cards = []load.Card{{ID: "2", Data: []byte(`{"id":2,"status":"frozen","Status":"x","card_id":"c","we'ird \"name\"":7,"removed_at":1}`)}}
	commit(t, w, run, p)
	rows, err := w.db.QueryContext(t.Context(), `SELECT * FROM cards_flat WHERE card_id = '2'`)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	rows.Close()
	if got, want := strings.Join(cols, ","), `card_id,id,limits,status,tags,Status_2,card_id_2,removed_at_2,we'ird "name",removed_at,account`; got != want {
		t.Errorf("cards_flat columns = %s\nwant %s", got, want)
	}
	if got := queryInt(t, w, `SELECT "we'ird ""name""" FROM cards_flat WHERE card_id = '2'`); got != 7 {
		t.Errorf("hostile column = %d, want 7", got)
	}
	if got := queryString(t, w, `SELECT json_types FROM card_fields WHERE name = 'removed_at'`); got != "number" {
		t.Errorf("json_types = %q", got)
	}
	_ = path
}

func TestRunsLifecycle(t *testing.T) {
	w, _, clk := openTest(t, load.Options{})
	ctx := t.Context()
	if _, err := w.StartRun(ctx, "manual", "v"); err == nil {
		t.Error("StartRun accepted an unknown trigger")
	}
	stale := startRun(t, w)
	clk.Advance(10 * time.Minute)
	fresh := startRun(t, w)
	clk.Advance(3 * time.Minute)
	if err := w.Heartbeat(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	ids, err := w.AbandonStale(ctx, 5*time.Minute)
	if err != nil || len(ids) != 1 || ids[0] != stale {
		t.Fatalf("AbandonStale = %v, %v; want [%d], nil", ids, err, stale)
	}
	if got := queryString(t, w, "SELECT status FROM sync_runs WHERE run_id = ?", stale); got != load.StatusAbandoned {
		t.Errorf("stale run status = %q", got)
	}
	if err := w.Heartbeat(ctx, stale); !errors.Is(err, load.ErrRunNotRunning) {
		t.Errorf("Heartbeat of abandoned run = %v, want ErrRunNotRunning", err)
	}
	yes := true
	if err := w.FinishRun(ctx, fresh, load.RunResult{Status: load.StatusSucceeded, WalkConsistent: &yes, Requests: 3}); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, fresh, load.RunResult{Status: load.StatusSucceeded}); !errors.Is(err, load.ErrRunNotRunning) {
		t.Errorf("second FinishRun = %v, want ErrRunNotRunning", err)
	}
	failed := startRun(t, w)
	if err := w.FinishRun(ctx, failed, load.RunResult{Status: load.StatusFailed, Error: "upstream down"}); err != nil {
		t.Fatal(err)
	}
	st, err := w.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.FailuresInARow != 1 || st.LastSuccessRun != fresh || st.LastSuccessAt == nil || len(st.Runs) != 3 || st.Runs[0].Error != "upstream down" {
		t.Errorf("Status = %+v", st)
	}
}
