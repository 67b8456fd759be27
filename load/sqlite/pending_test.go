package sqlite

import (
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestTwoWalkRemoval drives sequences of walks over cards 1..5 and checks,
// after each one, what FinishWalk confirmed removed, which cards wait in
// removal_pending and which are marked removed.
func TestTwoWalkRemoval(t *testing.T) {
	all, four := idRange(1, 5), idRange(1, 4)
	tests := []struct {
		name  string
		walks []removalWalk
	}{
		{name: "missed once is pending, not removed", walks: []removalWalk{
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
		}},
		{name: "missed by two consecutive consistent walks is removed", walks: []removalWalk{
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
			{ids: four, consistent: true, wantRemoved: 1, wantGone: "5"},
			{ids: four, consistent: true, wantGone: "5"},
		}},
		{name: "missed then seen is cleared and starts over", walks: []removalWalk{
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
		}},
		{name: "inconsistent walk adds nothing", walks: []removalWalk{
			{ids: all, consistent: true},
			{ids: four},
			{ids: idRange(1, 2)},
		}},
		{name: "inconsistent walk clears seen cards", walks: []removalWalk{
			{ids: all, consistent: true},
			{ids: idRange(1, 3), consistent: true, wantPending: "4,5"},
			{ids: idRange(1, 4), wantPending: "5"},
			{ids: idRange(1, 3), consistent: true, wantRemoved: 1, wantPending: "4", wantGone: "5"},
		}},
		{name: "inconsistent walk in between neither confirms nor resets", walks: []removalWalk{
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
			{ids: four, wantPending: "5"},
			{ids: four, consistent: true, wantRemoved: 1, wantGone: "5"},
		}},
		{name: "reset walk clears seen cards", walks: []removalWalk{
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
			{ids: []int{5}, reset: true},
			{ids: four, consistent: true, wantPending: "5"},
		}},
		{name: "returned card is not pending", walks: []removalWalk{
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
			{ids: four, consistent: true, wantRemoved: 1, wantGone: "5"},
			{ids: all, consistent: true},
			{ids: four, consistent: true, wantPending: "5"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, _, clk := openTest(t, load.Options{})
			ctx := t.Context()
			run := startRun(t, w)
			for i, wk := range tt.walks {
				clk.Advance(time.Hour)
				commit(t, w, run, page(1, wk.ids, 1, len(wk.ids)))
				if wk.reset {
					if err := w.ResetCheckpoint(ctx, load.StreamCards); err != nil {
						t.Fatal(err)
					}
				} else {
					n, err := finishWalk(ctx, w, run, wk.consistent)
					if err != nil {
						t.Fatal(err)
					}
					if n != wk.wantRemoved {
						t.Errorf("walk %d: FinishWalk = %d, want %d", i+1, n, wk.wantRemoved)
					}
				}
				checkAfterWalk(t, w, i, wk)
			}
		})
	}
}

// removalWalk is one walk of TestTwoWalkRemoval over cards 1..5.
type removalWalk struct {
	ids        []int
	consistent bool
	reset      bool // the walk is abandoned by ResetCheckpoint instead of finished
	// after the walk:
	wantRemoved int    // FinishWalk's return
	wantPending string // removal_pending ids, comma-separated
	wantGone    string // ids with removed_at set
}

// checkAfterWalk checks, after walk i (from 0), what waits in
// removal_pending and what is marked removed, and that every count of
// pending removals agrees.
func checkAfterWalk(t *testing.T, w *Warehouse, i int, wk removalWalk) {
	t.Helper()
	ctx := t.Context()
	if got := queryString(t, w, "SELECT coalesce(group_concat(card_id), '') FROM (SELECT card_id FROM removal_pending ORDER BY card_id)"); got != wk.wantPending {
		t.Errorf("walk %d: pending = %q, want %q", i+1, got, wk.wantPending)
	}
	if got := queryString(t, w, "SELECT coalesce(group_concat(card_id), '') FROM (SELECT card_id FROM cards WHERE removed_at IS NOT NULL ORDER BY card_id)"); got != wk.wantGone {
		t.Errorf("walk %d: removed = %q, want %q", i+1, got, wk.wantGone)
	}
	pending := queryInt(t, w, "SELECT count(*) FROM removal_pending")
	if got := queryInt(t, w, "SELECT pending_removals FROM sync_walks ORDER BY walk_id DESC LIMIT 1"); got != pending {
		t.Errorf("walk %d: sync_walks.pending_removals = %d, want %d", i+1, got, pending)
	}
	if got := queryInt(t, w, "SELECT pending_removals FROM sync_health"); got != pending {
		t.Errorf("walk %d: sync_health.pending_removals = %d, want %d", i+1, got, pending)
	}
	if n, err := w.PendingRemovals(ctx); err != nil || int64(n) != pending {
		t.Errorf("walk %d: PendingRemovals = %d, %v; want %d", i+1, n, err, pending)
	}
	if st, err := w.Summary(ctx); err != nil || st.PendingRemovals != pending {
		t.Errorf("walk %d: Status.PendingRemovals = %d, %v; want %d", i+1, st.PendingRemovals, err, pending)
	}
	// A pending card is still current; a removed one has a
	// closing 'removed' version and is never pending.
	if got := queryInt(t, w, `SELECT count(*) FROM removal_pending p JOIN cards c USING (card_id) WHERE c.removed_at IS NOT NULL`); got != 0 {
		t.Errorf("walk %d: %d removed cards still pending", i+1, got)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM cards c WHERE (c.removed_at IS NOT NULL) !=
			((SELECT change FROM card_versions v WHERE v.card_id = c.card_id AND v.valid_to IS NULL) = 'removed')`); got != 0 {
		t.Errorf("walk %d: %d cards whose removed_at disagrees with their current version", i+1, got)
	}
}
