package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestMassRemovalGuard: a consistent walk that would remove more than
// MaxRemovedFraction of the live cards and more than 10, or lists nothing,
// removes nothing; the two-walk rule still decides ordinary removals; a
// walk with ConfirmRemovals applies held removals it confirms.
func TestMassRemovalGuard(t *testing.T) {
	tests := []struct {
		name     string
		live     int
		listed   []int // cards listed by each later walk (ids 1..len)
		fraction float64
		confirm  []bool // per later walk
		// per later walk: removed, held
		wantRemoved []int
		wantHeld    []int
	}{
		{name: "10% removed: applied after two walks", live: 100, listed: []int{90, 90},
			wantRemoved: []int{0, 10}, wantHeld: []int{0, 0}},
		{name: "90% vanish: held walk after walk, then confirmed", live: 100, listed: []int{10, 10, 10, 10},
			confirm: []bool{false, false, false, true}, wantRemoved: []int{0, 0, 0, 90}, wantHeld: []int{90, 90, 90, 0}},
		{name: "just over the fraction", live: 50, listed: []int{39, 39}, wantRemoved: []int{0, 0}, wantHeld: []int{11, 11}},
		{name: "at the fraction", live: 50, listed: []int{40, 40}, wantRemoved: []int{0, 10}, wantHeld: []int{0, 0}},
		{name: "10 cards or fewer are never held by the fraction", live: 20, listed: []int{10, 10}, wantRemoved: []int{0, 10}, wantHeld: []int{0, 0}},
		{name: "empty list after a small warehouse is held", live: 5, listed: []int{0, 0}, wantRemoved: []int{0, 0}, wantHeld: []int{5, 5}},
		{name: "empty list confirmed", live: 5, listed: []int{0, 0}, confirm: []bool{false, true}, wantRemoved: []int{0, 5}, wantHeld: []int{5, 0}},
		{name: "configured fraction", live: 100, listed: []int{60, 60}, fraction: 0.5, wantRemoved: []int{0, 40}, wantHeld: []int{0, 0}},
		{name: "recovery clears held misses", live: 100, listed: []int{10, 100, 100}, wantRemoved: []int{0, 0, 0}, wantHeld: []int{90, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, _, clk := openTest(t, load.Options{MaxRemovedFraction: tt.fraction})
			ctx := t.Context()
			walk := func(n int, confirm bool) load.WalkResult {
				t.Helper()
				clk.Advance(15 * time.Minute)
				run := startRun(t, w)
				for pg := 1; pg == 1 || (pg-1)*15 < n; pg++ {
					hi := min(pg*15, n)
					commit(t, w, run, page(pg, idRange((pg-1)*15+1, hi), 1, n))
				}
				r, err := w.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: true, ConfirmRemovals: confirm})
				if err != nil {
					t.Fatal(err)
				}
				if got := queryInt(t, w, `SELECT removals_held FROM sync_runs WHERE run_id = ?`, run); got != int64(r.Held) {
					t.Errorf("sync_runs.removals_held = %d, want %d", got, r.Held)
				}
				return r
			}
			walk(tt.live, false)
			for i, n := range tt.listed {
				confirm := i < len(tt.confirm) && tt.confirm[i]
				r := walk(n, confirm)
				if r.Removed != tt.wantRemoved[i] || r.Held != tt.wantHeld[i] {
					t.Errorf("walk %d listing %d of %d: removed %d held %d; want removed %d held %d",
						i+1, n, tt.live, r.Removed, r.Held, tt.wantRemoved[i], tt.wantHeld[i])
				}
			}
			st, err := w.Summary(ctx)
			if err != nil {
				t.Fatal(err)
			}
			last := len(tt.listed) - 1
			if st.RemovalsHeld != int64(tt.wantHeld[last]) {
				t.Errorf("status removals held = %d, want %d", st.RemovalsHeld, tt.wantHeld[last])
			}
			removed := 0
			for _, n := range tt.wantRemoved {
				removed += n
			}
			if got := queryInt(t, w, `SELECT count(*) FROM cards WHERE removed_at IS NOT NULL`); got != int64(removed) {
				t.Errorf("cards marked removed = %d, want %d", got, removed)
			}
		})
	}
}

// TestGuardIgnoresInconsistentWalks: an inconsistent walk never holds nor
// removes anything, whatever it missed.
func TestGuardIgnoresInconsistentWalks(t *testing.T) {
	w, _, _ := openTest(t, load.Options{})
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 15), 1, 15))
	if _, err := finishWalk(t.Context(), w, run, true); err != nil {
		t.Fatal(err)
	}
	run = startRun(t, w)
	commit(t, w, run, page(1, nil, 1, 0))
	r, err := w.FinishWalk(t.Context(), run, load.StreamCards, load.WalkEnd{Consistent: false})
	if err != nil || r.Held != 0 || r.Removed != 0 || r.Pending != 0 {
		t.Fatalf("FinishWalk = %+v, %v; want nothing held, removed or pending", r, err)
	}
	_ = fmt.Sprint
}
