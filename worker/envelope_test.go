package worker

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/sim"
)

// TestEnvelopeNumbersBoundTheWalk, on both warehouses, over the simulator:
// an inflated total_pages (on every page, or 1e9 on a later page) costs at
// most extract.PhantomSlack requests more than the real pages and records
// phantom_pages on the walk (sync_walks), which status names; total_pages
// and current_page written as PHP floats (2.0) are those integers, a
// consistent walk; a total_pages with a fraction is recorded as
// fractional_pagination, and no run fails.
func TestEnvelopeNumbersBoundTheWalk(t *testing.T) {
	tests := []struct {
		name     string
		cards    int
		fault    sim.Fault
		requests int64 // /cards requests of a walk
		reason   string
		pages    []int
	}{
		{"total_pages 2000 on every page", 30, sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultPhantomPages}, 4,
			load.ReasonPhantomPages, []int{1}},
		{"total_pages 1e9 on page 2", 30, sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultPhantomPages, Claim: 1e9, Pages: []int{2}}, 4,
			load.ReasonPhantomPages, []int{2, 3}},
		{"PHP floats", 38, sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultFloatPagination}, 3, "", nil},
		{"total_pages without ceil()", 38, sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultFractionalPages}, 3,
			load.ReasonFractionalPagination, []int{1}},
	}
	type warehouse struct {
		name string
		open func(t *testing.T, f *fixture) (*Job, func(q string) string)
	}
	warehouses := []warehouse{
		{"sqlite", func(t *testing.T, f *fixture) (*Job, func(string) string) {
			return f.job, func(q string) string {
				var s string
				if err := f.wh.DB().QueryRowContext(t.Context(), q).Scan(&s); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return s
			}
		}},
		{"postgres", func(t *testing.T, f *fixture) (*Job, func(string) string) {
			st := pgStore(t, pgServer(t).NewDatabase(t), "acme", "replica-a", 10*time.Second, false)
			pool := st.Warehouse.(*postgres.Warehouse).Pool()
			return st.Job(f.job.Client, nil, JobOptions{Version: "test"}), func(q string) string {
				var s string
				if err := pool.QueryRow(t.Context(), q).Scan(&s); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return s
			}
		}},
	}
	for _, wh := range warehouses {
		for _, tt := range tests {
			t.Run(wh.name+"/"+tt.name, func(t *testing.T) {
				f := newFixture(t, sim.Options{Seed: 5, Cards: tt.cards, Faults: []sim.Fault{tt.fault}})
				job, query := wh.open(t, f)
				for i := range 2 {
					before := f.srv.Stats().Requests[sim.EndpointCards]
					res, err := job.Run(t.Context(), TriggerBackfill, Options{})
					if err != nil || res.Status != load.StatusSucceeded {
						t.Fatalf("walk %d: %v (%+v)", i+1, err, res)
					}
					if n := f.srv.Stats().Requests[sim.EndpointCards] - before; n != tt.requests {
						t.Errorf("walk %d: %d /cards requests, want %d", i+1, n, tt.requests)
					}
					if res.WalkConsistent != (tt.reason == "") || res.InconsistentReason != tt.reason || !slices.Equal(res.InconsistentPages, tt.pages) {
						t.Errorf("walk %d: consistent %v, reason %q on %v; want reason %q on %v",
							i+1, res.WalkConsistent, res.InconsistentReason, res.InconsistentPages, tt.reason, tt.pages)
					}
					if res.Removed != 0 || res.PendingRemovals != 0 {
						t.Errorf("walk %d: removed %d, pending %d; want none", i+1, res.Removed, res.PendingRemovals)
					}
				}
				// What the warehouse recorded of the last walk.
				got := query(`SELECT coalesce(inconsistent_reason, '') || ' ' || coalesce(inconsistent_pages, '') FROM sync_walks ORDER BY walk_id DESC LIMIT 1`)
				want := " "
				if tt.reason != "" {
					pages, _ := json.Marshal(tt.pages)
					want = tt.reason + " " + string(pages)
				}
				if got != want {
					t.Errorf("sync_walks: %q, want %q", got, want)
				}
				if n := query(`SELECT CAST(count(*) AS TEXT) FROM card_state WHERE removed_at IS NULL`); n != strconv.Itoa(tt.cards) {
					t.Errorf("%s current cards, want %d", n, tt.cards)
				}
				sum, err := job.Warehouse.Summary(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				h := Assess(sum, nil, time.Now(), 0, 0, CommandLine{})
				if tt.reason == "" {
					if !h.Healthy || len(h.Warnings) != 0 {
						t.Errorf("status: healthy %v warnings %q problems %q; want healthy, no warning", h.Healthy, h.Warnings, h.Problems)
					}
					return
				}
				named := tt.reason + " on " + PagesText(tt.pages)
				if h.Healthy || len(h.Problems) == 0 || !strings.Contains(h.Problems[0], named) {
					t.Errorf("status after two such walks: healthy %v problems %q; want unhealthy naming %q", h.Healthy, h.Problems, named)
				}
			})
		}
	}
}
