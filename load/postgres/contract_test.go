package postgres

import (
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
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
