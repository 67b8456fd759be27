package contract

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/redact/redacttest"
)

// TestTwoWalkRemoval runs load's two-walk removal sequences against both
// warehouses: after each walk, the same removals, pending cards and
// removed cards.
func TestTwoWalkRemoval(t *testing.T) {
	type walk struct {
		ids         []int
		consistent  bool
		reset       bool
		wantRemoved int
		wantPending string
		wantGone    string
	}
	all, four := idRange(1, 5), idRange(1, 4)
	tests := []struct {
		name  string
		walks []walk
	}{
		{name: "missed once is pending, not removed", walks: []walk{
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
		}},
		{name: "missed by two consecutive consistent walks is removed", walks: []walk{
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
			{ids: four, consistent: true, wantRemoved: 1, wantGone: "5"},
			{ids: four, consistent: true, wantGone: "5"},
		}},
		{name: "missed then seen is cleared and starts over", walks: []walk{
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
		}},
		{name: "inconsistent walk clears seen cards", walks: []walk{
			{ids: all, consistent: true},
			{ids: idRange(1, 3), consistent: true, wantPending: "4,5"},
			{ids: idRange(1, 4), wantPending: "5"},
			{ids: idRange(1, 3), consistent: true, wantRemoved: 1, wantPending: "4", wantGone: "5"},
		}},
		{name: "reset walk clears seen cards", walks: []walk{
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
			{ids: []int{5}, reset: true},
			{ids: four, consistent: true, wantPending: "5"},
		}},
		{name: "returned card is not pending", walks: []walk{
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
			{ids: four, consistent: true, wantRemoved: 1, wantGone: "5"},
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, b := range backends(t, 0, 0) {
				t.Run(b.name, func(t *testing.T) {
					ctx := t.Context()
					run := startRun(t, b.s)
					for i, wk := range tt.walks {
						b.clk.Advance(time.Hour)
						commit(t, b.s, run, page(1, wk.ids, 1, len(wk.ids)))
						if wk.reset {
							if err := b.s.ResetCheckpoint(ctx, load.StreamCards); err != nil {
								t.Fatal(err)
							}
						} else {
							r, err := b.s.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: wk.consistent})
							if err != nil {
								t.Fatal(err)
							}
							if r.Removed != wk.wantRemoved {
								t.Errorf("walk %d: removed %d, want %d", i+1, r.Removed, wk.wantRemoved)
							}
						}
						if got := joined(b.query(t, "SELECT card_id FROM removal_pending ORDER BY card_id")); got != wk.wantPending {
							t.Errorf("walk %d: pending = %q, want %q", i+1, got, wk.wantPending)
						}
						if got := joined(b.query(t, "SELECT card_id FROM cards WHERE removed_at IS NOT NULL ORDER BY card_id")); got != wk.wantGone {
							t.Errorf("walk %d: removed = %q, want %q", i+1, got, wk.wantGone)
						}
						pending := one(t, b.query(t, "SELECT count(*) FROM removal_pending"))
						if got := one(t, b.query(t, "SELECT pending_removals FROM sync_health")); got != pending {
							t.Errorf("walk %d: sync_health.pending_removals = %s, want %s", i+1, got, pending)
						}
						if got := one(t, b.query(t, `SELECT count(*) FROM cards c WHERE (c.removed_at IS NOT NULL) !=
								((SELECT change FROM card_versions v WHERE v.card_id = c.card_id AND v.valid_to IS NULL) = 'removed')`)); got != "0" {
							t.Errorf("walk %d: %s cards whose removed_at disagrees with their current version", i+1, got)
						}
					}
				})
			}
		})
	}
}

// TestMassRemovalGuard: the guard holds a mass removal on both warehouses,
// and a confirmed walk applies it.
func TestMassRemovalGuard(t *testing.T) {
	tests := []struct {
		name        string
		live        int
		listed      []int
		confirm     []bool
		wantRemoved []int
		wantHeld    []int
	}{
		{name: "10% removed: applied after two walks", live: 100, listed: []int{90, 90}, wantRemoved: []int{0, 10}, wantHeld: []int{0, 0}},
		{name: "90% vanish: held, then confirmed", live: 100, listed: []int{10, 10, 10}, confirm: []bool{false, false, true},
			wantRemoved: []int{0, 0, 90}, wantHeld: []int{90, 90, 0}},
		{name: "empty list after a small warehouse is held", live: 5, listed: []int{0, 0}, wantRemoved: []int{0, 0}, wantHeld: []int{5, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, b := range backends(t, 0, 0) {
				t.Run(b.name, func(t *testing.T) {
					walk := func(n int, confirm bool) load.WalkResult {
						t.Helper()
						b.clk.Advance(15 * time.Minute)
						run := startRun(t, b.s)
						for pg := 1; pg == 1 || (pg-1)*15 < n; pg++ {
							commit(t, b.s, run, page(pg, idRange((pg-1)*15+1, min(pg*15, n)), 1, n))
						}
						r, err := b.s.FinishWalk(t.Context(), run, load.StreamCards, load.WalkEnd{Consistent: true, ConfirmRemovals: confirm})
						if err != nil {
							t.Fatal(err)
						}
						return r
					}
					walk(tt.live, false)
					for i, n := range tt.listed {
						r := walk(n, i < len(tt.confirm) && tt.confirm[i])
						if r.Removed != tt.wantRemoved[i] || r.Held != tt.wantHeld[i] {
							t.Errorf("walk %d listing %d of %d: removed %d held %d; want %d, %d", i+1, n, tt.live, r.Removed, r.Held, tt.wantRemoved[i], tt.wantHeld[i])
						}
					}
					st, err := b.s.Summary(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					if want := int64(tt.wantHeld[len(tt.wantHeld)-1]); st.RemovalsHeld != want {
						t.Errorf("Summary.RemovalsHeld = %d, want %d", st.RemovalsHeld, want)
					}
				})
			}
		})
	}
}

// TestCommitCounts: new, unchanged, changed and returned cards are counted
// alike by both warehouses, and a page committed twice changes nothing.
func TestCommitCounts(t *testing.T) {
	for _, b := range backends(t, 0, 0) {
		t.Run(b.name, func(t *testing.T) {
			run := startRun(t, b.s)
			steps := []struct {
				p    load.Page
				want counts
			}{
				{page(1, idRange(1, 15), 1, 30), counts{New: 15}},
				{page(1, idRange(1, 15), 1, 30), counts{Unchanged: 15}},
				{page(1, idRange(1, 15), 2, 30), counts{Changed: 15}},
				{page(2, idRange(10, 20), 2, 30), counts{New: 5, Unchanged: 6}},
			}
			for i, s := range steps {
				if got := commit(t, b.s, run, s.p); got != s.want {
					t.Errorf("step %d: %+v, want %+v", i+1, got, s.want)
				}
			}
			if got := one(t, b.query(t, "SELECT count(*) FROM card_versions")); got != "35" {
				t.Errorf("card_versions = %s, want 35", got)
			}
			cp, err := b.s.Checkpoint(t.Context(), "")
			if err != nil || cp.NextPage != 3 || !cp.InProgress {
				t.Errorf("Checkpoint = %+v, %v; want next page 3, in progress", cp, err)
			}
		})
	}
}

// TestCardFieldsAsSQLite: the same pages give both warehouses the same
// card_fields rows (but first_seen_at's type) and cards_flat columns.
func TestCardFieldsAsSQLite(t *testing.T) {
	var got [][]string
	for _, b := range backends(t, 0, 0) {
		run := startRun(t, b.s)
		commit(t, b.s, run, page(1, idRange(1, 3), 1, 6))
		p := page(2, idRange(4, 6), 1, 6)
		p.Cards[1].Data = []byte(`{"id":5,"Status":"x","late":null,"spent":"n/a"}`)
		commit(t, b.s, run, p)
		rows := b.query(t, `SELECT name || '|' || json_types || '|' || first_run || '|' || last_run || '|' || coalesce(column_name, '') || '|' || in_flat_view FROM card_fields`)
		slices.Sort(rows)
		got = append(got, rows)
	}
	if len(got) == 2 && !slices.Equal(got[0], got[1]) {
		t.Errorf("card_fields differ\nsqlite:   %q\npostgres: %q", got[0], got[1])
	}
}

// TestFieldBoundsAsSQLite: both warehouses keep the same bounds on
// card_fields: a walk meeting 1,500 unique field names (and "id") records
// load.MaxNewFieldsPerWalk of them and counts the other 501 once each; a
// complete walk 91 days later that sees 101 of them, then PruneFields
// with the default retention, leaves those 101 in card_fields and
// cards_flat.
func TestFieldBoundsAsSQLite(t *testing.T) {
	ctx := t.Context()
	for _, b := range backends(t, 1, 1) {
		t.Run(b.name, func(t *testing.T) {
			run := startRun(t, b.s)
			ww := b.writer(run)
			for n := 1; n <= 15; n++ {
				if _, err := ww.Add(ctx, uniqueFieldsPage(n, 150)); err != nil {
					t.Fatal(err)
				}
			}
			if err := ww.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got := one(t, b.query(t, `SELECT count(*) FROM card_fields`)); got != fmt.Sprint(load.MaxNewFieldsPerWalk) {
				t.Errorf("card_fields has %s rows, want %d", got, load.MaxNewFieldsPerWalk)
			}
			if want, skipped := 1501-load.MaxNewFieldsPerWalk, ww.FieldsSkipped(); skipped != want {
				t.Errorf("%d fields skipped, want %d", skipped, want)
			}
			if _, err := b.s.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
				t.Fatal(err)
			}
			b.clk.Advance(91 * 24 * time.Hour)
			run = startRun(t, b.s)
			ww = b.writer(run)
			if _, err := ww.Add(ctx, uniqueFieldsPage(1, 10)); err != nil {
				t.Fatal(err)
			}
			if err := ww.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := b.s.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
				t.Fatal(err)
			}
			n, err := b.s.PruneFields(ctx, b.clk.Now().Add(-load.DefaultFieldRetention))
			if err != nil || n != load.MaxNewFieldsPerWalk-101 {
				t.Fatalf("PruneFields = %d, %v; want %d", n, err, load.MaxNewFieldsPerWalk-101)
			}
			if got := one(t, b.query(t, `SELECT count(*) FROM card_fields`)); got != "101" {
				t.Errorf("card_fields has %s rows after the prune, want 101", got)
			}
			columns := `SELECT count(*) FROM pragma_table_info('cards_flat')`
			if b.name == "postgres" {
				columns = `SELECT count(*) FROM information_schema.columns WHERE table_name = 'cards_flat'`
			}
			if got := one(t, b.query(t, columns)); got != "104" {
				t.Errorf("cards_flat has %s columns after the prune, want 104", got)
			}
		})
	}
}

// TestReturnedCountedApart: a card removed by two walks that is listed
// again is counted as returned, never as changed, by both warehouses: in
// the page result, in sync_runs.cards_returned (cards_changed 0) and in
// Runs; its version says returned. A returned card whose content changed
// too is counted once, as returned (rev 2: the other four changed).
func TestReturnedCountedApart(t *testing.T) {
	for _, rev := range []int{1, 2} {
		t.Run(fmt.Sprintf("content rev %d", rev), func(t *testing.T) {
			for _, b := range backends(t, 0, 0) {
				t.Run(b.name, func(t *testing.T) {
					ctx := t.Context()
					for _, ids := range [][]int{idRange(1, 5), idRange(1, 4), idRange(1, 4)} {
						b.clk.Advance(time.Hour)
						run := startRun(t, b.s)
						commit(t, b.s, run, page(1, ids, 1, len(ids)))
						if _, err := b.s.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
							t.Fatal(err)
						}
					}
					if got := joined(b.query(t, "SELECT card_id FROM cards WHERE removed_at IS NOT NULL")); got != "5" {
						t.Fatalf("removed = %q, want 5", got)
					}
					b.clk.Advance(time.Hour)
					run := startRun(t, b.s)
					if got, want := commit(t, b.s, run, page(1, idRange(1, 5), rev, 5)), (counts{Returned: 1, Changed: 4 * (rev - 1), Unchanged: 4 * (2 - rev)}); got != want {
						t.Errorf("page = %+v, want %+v", got, want)
					}
					q := fmt.Sprintf("SELECT cards_returned || ',' || cards_changed || ',' || cards_unchanged FROM sync_runs WHERE run_id = %d", run)
					if got, want := one(t, b.query(t, q)), fmt.Sprintf("1,%d,%d", 4*(rev-1), 4*(2-rev)); got != want {
						t.Errorf("sync_runs returned,changed,unchanged = %s, want %s", got, want)
					}
					if got := one(t, b.query(t, "SELECT change FROM card_versions WHERE card_id = '5' AND valid_to IS NULL")); got != "returned" {
						t.Errorf("current version of 5 = %q, want returned", got)
					}
					runs, err := b.s.Runs(ctx, 1)
					if err != nil || len(runs) != 1 {
						t.Fatalf("Runs = %v, %v", runs, err)
					}
					if r := runs[0]; r.ID != run || r.CardsReturned != 1 || r.CardsChanged != int64(4*(rev-1)) {
						t.Errorf("Runs[0] = run %d returned %d changed %d; want run %d returned 1 changed %d", r.ID, r.CardsReturned, r.CardsChanged, run, 4*(rev-1))
					}
				})
			}
		})
	}
}

// TestResumeAfterDroppedWriter: pages buffered by a WalkWriter that is
// dropped (the process died) are not stored, the checkpoint stays after
// the last committed batch, and resuming from it stores every change once.
func TestResumeAfterDroppedWriter(t *testing.T) {
	for _, b := range backends(t, 0, 2) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			run := startRun(t, b.s)
			ww := b.writer(run)
			for n := 1; n <= 3; n++ { // pages 1-2 commit together, 3 stays buffered
				if _, err := ww.Add(ctx, page(n, idRange(n*15-14, n*15), 1, 90)); err != nil {
					t.Fatal(err)
				}
			}
			if got := ww.Buffered(); got.Pages != 1 || got.FirstPage != 3 {
				t.Fatalf("Buffered = %+v, want page 3", got)
			}
			// The writer is dropped without Flush.
			cp, err := b.s.Checkpoint(ctx, "")
			if err != nil || cp.NextPage != 3 {
				t.Fatalf("checkpoint %+v, %v; want next page 3", cp, err)
			}
			if got := one(t, b.query(t, "SELECT count(*) FROM card_state")); got != "30" {
				t.Fatalf("%s cards stored, want 30 (the buffered page is lost)", got)
			}
			run2 := startRun(t, b.s)
			ww = b.writer(run2)
			for n := cp.NextPage; n <= 6; n++ {
				if _, err := ww.Add(ctx, page(n, idRange(n*15-14, n*15), 1, 90)); err != nil {
					t.Fatal(err)
				}
			}
			if err := ww.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got := one(t, b.query(t, "SELECT count(*) FROM card_versions")); got != "90" {
				t.Errorf("%s versions, want 90 (each card once)", got)
			}
			r, err := b.s.FinishWalk(ctx, run2, "", load.WalkEnd{Consistent: true})
			if err != nil || r.Live != 90 || r.Missed != 0 {
				t.Errorf("FinishWalk %+v, %v; want 90 live, none missed", r, err)
			}
			if got := one(t, b.query(t, "SELECT pages FROM sync_walks")); got != "6" {
				t.Errorf("walk pages %s, want 6", got)
			}
		})
	}
}

// TestCommitFailureLeavesNothing: a batch whose transaction fails (here:
// its run does not exist) stores no card, no checkpoint, no seen ids.
func TestCommitFailureLeavesNothing(t *testing.T) {
	for _, b := range backends(t, 0, 0) {
		t.Run(b.name, func(t *testing.T) {
			if _, err := b.s.CommitPage(t.Context(), 999, page(1, idRange(1, 15), 1, 15)); err == nil {
				t.Fatal("commit for a missing run succeeded")
			}
			for _, q := range []string{"card_state", "card_versions", "sync_checkpoints", "walk_seen", "sync_walks", "run_pages"} {
				if got := one(t, b.query(t, "SELECT count(*) FROM "+q)); got != "0" {
					t.Errorf("%s has %s rows after a failed commit", q, got)
				}
			}
		})
	}
}

// TestQuarantine: unusable items are stored in rejected_cards (redacted),
// count as listed, and a repeat only counts; cards PostgreSQL cannot hold
// (\u0000 in jsonb) are quarantined rather than failing the page.
func TestQuarantine(t *testing.T) {
	pan := redacttest.PANCorpus()[0]
	for _, b := range backends(t, 0, 0) {
		t.Run(b.name, func(t *testing.T) {
			run := startRun(t, b.s)
			p := page(1, idRange(1, 3), 1, 6)
			p.Cards = append(p.Cards,
				load.Card{ID: "", Data: []byte(`{"id":""}`)},
				load.Card{ID: "2", Data: []byte(`{"id":2,"dup":true}`)},
			)
			p.Rejected = []load.Rejection{{Index: 9, CardID: "7", Reason: "not an object: " + pan.Digits, Data: []byte(`["` + pan.Digits + `"]`)}}
			got := commit(t, b.s, run, p)
			if got != (counts{New: 3, Rejected: 3}) {
				t.Fatalf("commit %+v", got)
			}
			commit(t, b.s, run, p)
			if got := joined(b.query(t, "SELECT times FROM rejected_cards ORDER BY rejected_id")); got != "2,2,2" {
				t.Errorf("rejected times %s, want 2,2,2", got)
			}
			for _, row := range b.query(t, "SELECT reason || ' ' || data FROM rejected_cards") {
				if strings.Contains(row, pan.Digits) {
					t.Errorf("rejected row holds a full card number: %s", row)
				}
			}
			if b.name == "postgres" {
				bad := page(2, []int{4}, 1, 6)
				bad.Cards = append(bad.Cards, load.Card{ID: "5", Data: []byte(`{"id":5,"note":"a\u0000b"}`)})
				if got := commit(t, b.s, run, bad); got != (counts{New: 1, Rejected: 1}) {
					t.Errorf("page with \\u0000: %+v, want the card quarantined", got)
				}
			}
		})
	}
}
