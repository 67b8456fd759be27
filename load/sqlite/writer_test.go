package sqlite

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
)

// storeWalk commits pages 1..n of 15 cards (ids 1..15n, revision 1) in a
// run of its own and finishes the walk, as a first backfill would.
func storeWalk(t *testing.T, w *Warehouse, n int) {
	t.Helper()
	run := startRun(t, w)
	for pg := 1; pg <= n; pg++ {
		commit(t, w, run, page(pg, idRange(pg*15-14, pg*15), 1, 15*n))
	}
	if _, err := finishWalk(t.Context(), w, run, true); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(t.Context(), run, load.RunResult{Status: load.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
}

// pageKind is how a test page differs from what storeWalk stored.
type pageKind int

const (
	same     pageKind = iota // the stored cards, unchanged
	changed                  // its first card changed
	fresh                    // its first card replaced by a new one
	rejected                 // an unreadable item added
)

// walkPage builds page n of an n-page walk of the stored cards.
func walkPage(n, pages int, kind pageKind) load.Page {
	p := page(n, idRange(n*15-14, n*15), 1, 15*pages)
	switch kind {
	case changed:
		p.Cards[0].Data = cardJSON(n*15-14, 2)
	case fresh:
		p.Cards[0] = load.Card{ID: fmt.Sprint(100000 + n), Data: cardJSON(100000+n, 1)}
	case rejected:
		p.Rejected = append(p.Rejected, load.Rejection{Index: 15, Reason: `item has no "id"`, Data: []byte(`{"name":"x"}`)})
	}
	return p
}

// batchStep is one page a TestWalkWriterBatches case adds.
type batchStep struct {
	kind    pageKind
	advance time.Duration // clock moved before the page is added
	// wantCommitted lists the pages the Add committed (nil: buffered).
	wantCommitted []int
}

// batchCase is a case of TestWalkWriterBatches: pages added to a walk
// writer with opts.
type batchCase struct {
	name  string
	opts  load.Options
	steps []batchStep
	flush bool
	// wantNext is the checkpoint after the steps (and the Flush).
	wantNext int
	// wantAudit lists the pages with a run_pages row in the run.
	wantAudit []int
}

func TestWalkWriterBatches(t *testing.T) {
	for _, tt := range batchCases() {
		t.Run(tt.name, func(t *testing.T) {
			w, _, clk := openTest(t, tt.opts)
			ctx := t.Context()
			const pages = 6
			storeWalk(t, w, pages)
			run := startRun(t, w)
			ww := w.NewWalkWriter(run, load.StreamCards)
			committed := 0
			for i, s := range tt.steps {
				clk.Advance(s.advance)
				committed = addBatchStep(t, w, ww, run, i+1, pages, s, committed)
			}
			if tt.flush {
				b := ww.Buffered()
				if err := ww.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				committed += b.Pages
				if ww.Buffered().Pages != 0 {
					t.Errorf("%d pages buffered after Flush", ww.Buffered().Pages)
				}
				if err := ww.Flush(ctx); err != nil {
					t.Errorf("second Flush: %v", err)
				}
			}
			checkBatchEnd(t, w, run, tt, committed)
		})
	}
}

// batchCases are the cases of TestWalkWriterBatches.
func batchCases() []batchCase {
	return []batchCase{
		{name: "quiet pages wait for BatchPages", opts: load.Options{BatchPages: 3, BatchDelay: time.Hour},
			steps:    []batchStep{{}, {}, {wantCommitted: []int{1, 2, 3}}, {}, {}},
			wantNext: 4},
		{name: "quiet pages wait for BatchDelay", opts: load.Options{BatchPages: 50, BatchDelay: 10 * time.Second},
			steps: []batchStep{{}, {advance: 4 * time.Second}, {advance: 4 * time.Second},
				{advance: 4 * time.Second, wantCommitted: []int{1, 2, 3, 4}}, {advance: 9 * time.Second}},
			wantNext: 5},
		{name: "the delay counts from the first buffered page", opts: load.Options{BatchPages: 50, BatchDelay: 10 * time.Second},
			steps:    []batchStep{{advance: time.Hour}, {advance: 9 * time.Second}, {advance: time.Second, wantCommitted: []int{1, 2, 3}}},
			wantNext: 4},
		{name: "a changed page waits for CommitDelay", opts: load.Options{BatchPages: 50, CommitDelay: new(2 * time.Second)},
			steps: []batchStep{{}, {}, {kind: changed}, {advance: time.Second},
				{advance: time.Second, wantCommitted: []int{1, 2, 3, 4, 5}}},
			wantNext:  6,
			wantAudit: []int{3}},
		{name: "CommitDelay counts from the first page with changes", opts: load.Options{BatchPages: 50, BatchDelay: time.Hour, CommitDelay: new(2 * time.Second)},
			steps: []batchStep{{advance: time.Minute}, {kind: fresh, advance: time.Minute}, {kind: fresh, advance: time.Second},
				{advance: time.Second, wantCommitted: []int{1, 2, 3, 4}}, {kind: fresh, advance: time.Second}},
			wantNext:  5,
			wantAudit: []int{2, 3}},
		{name: "new cards wait for BatchPages", opts: load.Options{BatchPages: 2, CommitDelay: new(time.Hour)},
			steps:     []batchStep{{kind: fresh}, {wantCommitted: []int{1, 2}}, {kind: fresh}, {kind: fresh, wantCommitted: []int{3, 4}}},
			wantNext:  5,
			wantAudit: []int{1, 3, 4}},
		{name: "a rejected item is a change", opts: load.Options{BatchPages: 50, CommitDelay: new(time.Second)},
			steps:     []batchStep{{}, {kind: rejected}, {advance: time.Second, wantCommitted: []int{1, 2, 3}}},
			wantNext:  4,
			wantAudit: []int{2}},
		{name: "Flush commits changes in hand", opts: load.Options{BatchPages: 50},
			steps: []batchStep{{kind: fresh}, {kind: changed}}, flush: true,
			wantNext:  3,
			wantAudit: []int{1, 2}},
		{name: "Flush commits the buffer", opts: load.Options{BatchPages: 50},
			steps: []batchStep{{}, {}, {}}, flush: true,
			wantNext: 4},
		{name: "BatchPages 1 commits every page", opts: load.Options{BatchPages: 1},
			steps:     []batchStep{{wantCommitted: []int{1}}, {kind: fresh, wantCommitted: []int{2}}},
			wantNext:  3,
			wantAudit: []int{2}},
	}
}

// addBatchStep adds page n (of pages) as step s says and checks what the
// Add committed and what it buffered, the checkpoint and the run's page
// count. committed is the number of pages committed before; it returns the
// number after.
func addBatchStep(t *testing.T, w *Warehouse, ww *WalkWriter, run int64, n, pages int, s batchStep, committed int) int {
	t.Helper()
	ctx := t.Context()
	res, err := ww.Add(ctx, walkPage(n, pages, s.kind))
	if err != nil {
		t.Fatalf("Add page %d: %v", n, err)
	}
	var got []int
	if res.Committed.Pages > 0 {
		got = idRange(res.Committed.FirstPage, res.Committed.LastPage)
		if res.Committed.Pages != len(got) {
			t.Errorf("page %d: committed %d pages from %d to %d", n, res.Committed.Pages, res.Committed.FirstPage, res.Committed.LastPage)
		}
	}
	if !slices.Equal(got, s.wantCommitted) {
		t.Errorf("page %d: committed pages %v, want %v", n, got, s.wantCommitted)
	}
	committed += len(got)
	if want := n - committed; ww.Buffered().Pages != want {
		t.Errorf("page %d: %d pages buffered, want %d", n, ww.Buffered().Pages, want)
	}
	// What is committed is exactly what the checkpoint covers.
	cp, err := w.Checkpoint(ctx, load.StreamCards)
	if err != nil {
		t.Fatal(err)
	}
	if committed > 0 && cp.NextPage != committed+1 {
		t.Errorf("page %d: checkpoint next page %d, want %d", n, cp.NextPage, committed+1)
	}
	if got := queryInt(t, w, `SELECT pages FROM sync_runs WHERE run_id = ?`, run); got != int64(committed) {
		t.Errorf("page %d: sync_runs.pages = %d, want %d", n, got, committed)
	}
	return committed
}

// checkBatchEnd checks, after tt's steps, the checkpoint, the seen ids,
// the audit rows and the walk summary of run with committed pages.
func checkBatchEnd(t *testing.T, w *Warehouse, run int64, tt batchCase, committed int) {
	t.Helper()
	ctx := t.Context()
	cp, err := w.Checkpoint(ctx, load.StreamCards)
	if err != nil {
		t.Fatal(err)
	}
	if cp.NextPage != tt.wantNext || !cp.InProgress || cp.RunID != run {
		t.Errorf("checkpoint %+v, want next page %d of run %d, in progress", cp, tt.wantNext, run)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM walk_seen`); got != int64(committed) {
		t.Errorf("walk_seen holds %d pages, want %d", got, committed)
	}
	var audit []int
	rows, err := w.db.QueryContext(ctx, `SELECT page FROM run_pages WHERE run_id = ? ORDER BY page`, run)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p int
		rows.Scan(&p)
		audit = append(audit, p)
	}
	rows.Close()
	if !slices.Equal(audit, tt.wantAudit) {
		t.Errorf("run_pages rows for pages %v, want %v", audit, tt.wantAudit)
	}
	sum, err := w.WalkSummary(ctx, load.StreamCards)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Pages != committed || sum.LastPage != committed || sum.Runs != 1 {
		t.Errorf("walk summary %+v, want %d pages up to %d, 1 run", sum, committed, committed)
	}
}

// TestWalkWriterResumeAfterKill drops a writer without Flush, as a SIGKILL
// would: the checkpoint points at the first page not committed, every
// change committed is there exactly once, and adding the lost pages again
// applies exactly the changes the dropped batch held, once.
func TestWalkWriterResumeAfterKill(t *testing.T) {
	tests := []struct {
		name  string
		kinds []pageKind // pages added before the kill
		// wantNext is where the next run resumes.
		wantNext int
	}{
		{name: "between batches", kinds: []pageKind{same, same, same}, wantNext: 3},
		{name: "after a changed page", kinds: []pageKind{same, changed, same}, wantNext: 3},
		{name: "nothing committed", kinds: []pageKind{same}, wantNext: 1},
		{name: "a new card in the batch in hand", kinds: []pageKind{same, same, fresh}, wantNext: 3},
		{name: "after a full batch with a new card", kinds: []pageKind{same, same, fresh, same}, wantNext: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const pages = 6
			path := filepath.Join(t.TempDir(), "w.db")
			clk := sim.NewClock()
			opts := load.Options{Now: clk.Now, BatchPages: 2}
			versions, cardRows := addThenKill(t, path, opts, pages, tt.kinds)

			ctx := t.Context()
			w, err := Open(ctx, path, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if _, err := w.AbandonStale(ctx, 0); err != nil {
				t.Fatal(err)
			}
			cp, err := w.Checkpoint(ctx, load.StreamCards)
			if err != nil {
				t.Fatal(err)
			}
			if cp.NextPage != tt.wantNext || cp.InProgress != (tt.wantNext > 1) {
				t.Fatalf("checkpoint after the kill %+v, want next page %d", cp, tt.wantNext)
			}
			if got := queryInt(t, w, `SELECT count(*) FROM card_versions`); got != versions {
				t.Errorf("%d versions after the kill, %d before", got, versions)
			}
			run2 := startRun(t, w)
			lost := addAgain(t, w, run2, cp.NextPage, pages, tt.kinds)
			sum, err := w.WalkSummary(ctx, load.StreamCards)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Pages != pages || sum.DuplicateIDs != 0 || sum.DistinctIDs != 15*pages || sum.TotalChanged {
				t.Errorf("resumed walk summary %+v, want %d pages, %d distinct ids", sum, pages, 15*pages)
			}
			if got := queryInt(t, w, `SELECT count(*) FROM card_versions`); got != versions+int64(lost) {
				t.Errorf("%d versions after resuming, %d before the kill and %d changes fetched again: a change was lost or applied twice", got, versions, lost)
			}
			wantCards := cardRows
			for n, k := range tt.kinds {
				if k == fresh && n+1 >= tt.wantNext {
					wantCards++ // its new card was in the batch the kill dropped
				}
			}
			if got := queryInt(t, w, `SELECT count(*) FROM card_state`); got != wantCards {
				t.Errorf("%d cards after resuming, want %d", got, wantCards)
			}
			wr, err := w.FinishWalk(ctx, run2, load.StreamCards, load.WalkEnd{Consistent: true})
			if err != nil {
				t.Fatal(err)
			}
			// A replaced card (fresh) is missed by this walk: pending, not
			// removed; nothing else is.
			wantPending := 0
			if slices.Contains(tt.kinds, fresh) {
				wantPending = 1
			}
			if wr.Removed != 0 || wr.Pending != wantPending {
				t.Errorf("FinishWalk %+v, want nothing removed, %d pending", wr, wantPending)
			}
		})
	}
}

// TestWalkWriterRemovalAcrossBatches: removals, pending removals and the
// mass-removal guard come out the same whatever the batch size.
func TestWalkWriterRemovalAcrossBatches(t *testing.T) {
	type walk struct {
		cards   int // the walk lists cards 1..cards
		confirm bool
		// want after FinishWalk
		removed, held, pending int
	}
	walks := []walk{
		{cards: 150},
		{cards: 148, pending: 2},                            // two cards gone from the last page
		{cards: 148, removed: 2},                            // confirmed
		{cards: 75, held: 73, pending: 73},                  // an upstream glitch: held
		{cards: 75, held: 73, pending: 73},                  // still held
		{cards: 75, confirm: true, removed: 73, pending: 0}, // -confirm-removals
	}
	for _, batch := range []int{1, 3, 50} {
		t.Run(fmt.Sprintf("BatchPages %d", batch), func(t *testing.T) {
			w, _, clk := openTest(t, load.Options{BatchPages: batch})
			ctx := t.Context()
			for i, wk := range walks {
				clk.Advance(15 * time.Minute)
				run := startRun(t, w)
				ww := w.NewWalkWriter(run, load.StreamCards)
				for pg := 1; (pg-1)*15 < wk.cards; pg++ {
					if _, err := ww.Add(ctx, page(pg, idRange(pg*15-14, min(pg*15, wk.cards)), 1, wk.cards)); err != nil {
						t.Fatal(err)
					}
				}
				if err := ww.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				r, err := w.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: true, ConfirmRemovals: wk.confirm})
				if err != nil {
					t.Fatal(err)
				}
				if r.Removed != wk.removed || r.Held != wk.held || r.Pending != wk.pending {
					t.Errorf("walk %d: removed %d, held %d, pending %d; want %d, %d, %d", i+1, r.Removed, r.Held, r.Pending, wk.removed, wk.held, wk.pending)
				}
				if err := w.FinishRun(ctx, run, load.RunResult{Status: load.StatusSucceeded}); err != nil {
					t.Fatal(err)
				}
			}
			if got := queryInt(t, w, `SELECT count(*) FROM cards WHERE removed_at IS NULL`); got != 75 {
				t.Errorf("%d current cards at the end, want 75", got)
			}
			if got := queryInt(t, w, `SELECT count(*) FROM card_versions WHERE change = 'removed'`); got != 75 {
				t.Errorf("%d removed versions, want 75", got)
			}
		})
	}
}

// TestWalkWriterRejectsOtherStream: a writer belongs to one stream.
func TestWalkWriterRejectsOtherStream(t *testing.T) {
	w, _, _ := openTest(t, load.Options{})
	run := startRun(t, w)
	p := page(1, idRange(1, 15), 1, 15)
	p.Stream = "other"
	if _, err := w.NewWalkWriter(run, load.StreamCards).Add(t.Context(), p); err == nil {
		t.Error("a page of another stream was taken")
	}
}

// addThenKill stores a walk of pages pages in the warehouse at path, adds
// pages of kinds to a walk writer (BatchPages in opts) of the next run and
// drops it without Flush, as a SIGKILL would. It returns the card versions
// and the card rows the warehouse held at the kill.
func addThenKill(t *testing.T, path string, opts load.Options, pages int, kinds []pageKind) (versions, cardRows int64) {
	t.Helper()
	w, err := Open(t.Context(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	storeWalk(t, w, pages)
	run := startRun(t, w)
	ww := w.NewWalkWriter(run, load.StreamCards)
	for i, k := range kinds {
		if _, err := ww.Add(ctx, walkPage(i+1, pages, k)); err != nil {
			t.Fatal(err)
		}
	}
	versions = queryInt(t, w, `SELECT count(*) FROM card_versions`)
	cardRows = queryInt(t, w, `SELECT count(*) FROM card_state`)
	w.Close() // the process dies: no Flush, the run stays "running"
	return versions, cardRows
}

// addAgain adds pages from..pages to a walk writer of run, each page of
// kinds (the pages added before the kill) as it was then, the others
// unchanged, and flushes it. It checks that each page fetched again
// applies its change once, and returns how many changes those pages held
// (lost: the changes in the batch the kill dropped).
func addAgain(t *testing.T, w *Warehouse, run int64, from, pages int, kinds []pageKind) (lost int) {
	t.Helper()
	ctx := t.Context()
	ww := w.NewWalkWriter(run, load.StreamCards)
	for n := from; n <= pages; n++ {
		kind := same
		if n <= len(kinds) {
			kind = kinds[n-1] // the same page, fetched again
		}
		res, err := ww.Add(ctx, walkPage(n, pages, kind))
		if err != nil {
			t.Fatal(err)
		}
		// A page fetched again was not committed before the kill:
		// its change (if it has one) is applied now, once.
		want := 0
		if kind == changed || kind == fresh {
			want = 1
			lost++
		}
		if n <= len(kinds) && res.New+res.Changed != want {
			t.Errorf("page %d fetched again: %+v, want %d new or changed cards", n, res, want)
		}
	}
	if err := ww.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return lost
}
