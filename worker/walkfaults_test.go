package worker

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
)

// cardVersions counts the warehouse's card versions and the cards that
// have more than one.
func cardVersions(t *testing.T, f *fixture) (versions, multi int) {
	t.Helper()
	if err := f.wh.DB().QueryRowContext(t.Context(), `SELECT count(*), (SELECT count(*) FROM (SELECT card_id FROM card_versions GROUP BY card_id HAVING count(*) > 1))
		FROM card_versions`).Scan(&versions, &multi); err != nil {
		t.Fatal(err)
	}
	return versions, multi
}

// TestWalkNeverEndsEarly reproduces the findings over the simulator: after
// a good sync, a page before the last comes back wrong (empty with totals
// unchanged, total_pages shrinking, the same items on every page) while a
// card on page 3 changes. Every walk reads on to page 3 (the change is
// stored where page 3 is served), is inconsistent with the reason and the
// pages, marks no removal, and the second such walk in a row makes the
// account unhealthy, naming both.
func TestWalkNeverEndsEarly(t *testing.T) {
	tests := []struct {
		name    string
		fault   sim.Fault
		reason  string
		pages   []int
		changed int // the change on page 3 is read (page 3 serves its own items)
	}{
		{"page 2 of 3 empty", sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultEmptyPage}, load.ReasonEmptyPage, []int{2}, 1},
		{"total_pages shrinks on page 2", sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultShrinkingTotal}, load.ReasonTotalPagesChanged, []int{2}, 1},
		{"the same items on every page", sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultRepeatedPage}, load.ReasonRepeatedPage, []int{2, 3}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, sim.Options{Seed: 9, Cards: 45}) // 3 pages of 15
			if res, err := f.job.Run(t.Context(), TriggerBackfill, Options{}); err != nil || !res.WalkConsistent {
				t.Fatalf("good sync: %+v, %v", res, err)
			}
			onPage3 := f.srv.Cards()[40].ID
			f.srv.InjectFault(tt.fault)
			for i := range 2 {
				if !f.srv.UpdateCard(onPage3) {
					t.Fatal("update card")
				}
				res, err := f.job.Run(t.Context(), TriggerBackfill, Options{})
				if err != nil || res.Status != load.StatusSucceeded {
					t.Fatalf("walk %d: %v (%+v)", i+1, err, res)
				}
				if res.Pages != 3 || res.WalkConsistent || res.InconsistentReason != tt.reason || !slices.Equal(res.InconsistentPages, tt.pages) {
					t.Errorf("walk %d: %d pages, consistent %v, reason %q pages %v; want 3 pages, inconsistent, %s on %v",
						i+1, res.Pages, res.WalkConsistent, res.InconsistentReason, res.InconsistentPages, tt.reason, tt.pages)
				}
				if res.Changed != tt.changed || res.Removed != 0 || res.PendingRemovals != 0 {
					t.Errorf("walk %d: changed %d removed %d pending %d; want the change on page 3 read (%d), no removal",
						i+1, res.Changed, res.Removed, res.PendingRemovals, tt.changed)
				}
				sum, err := f.wh.Summary(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if len(sum.RecentWalks) == 0 || sum.RecentWalks[0].Reason != tt.reason || !slices.Equal(sum.RecentWalks[0].Pages, tt.pages) {
					t.Errorf("walk %d: recent walks %+v, want the last with %s on %v", i+1, sum.RecentWalks, tt.reason, tt.pages)
				}
				h := Assess(sum, nil, time.Now(), 0, 0, CommandLine{})
				want := WalkText(sum.RecentWalks[0])
				switch i {
				case 0:
					if !h.Healthy || !strings.Contains(strings.Join(h.Warnings, "\n"), "the last walk was inconsistent ("+want+")") ||
						strings.Contains(strings.Join(h.Warnings, "\n"), "upstream") {
						t.Errorf("after one inconsistent walk: healthy %v warnings %q; want a warning naming %q, not blaming upstream", h.Healthy, h.Warnings, want)
					}
				case 1:
					if h.Healthy || len(h.Problems) == 0 || !strings.Contains(h.Problems[0], "the last two walks were inconsistent ("+want+"; ") {
						t.Errorf("after two: healthy %v problems %q; want unhealthy naming %q", h.Healthy, h.Problems, want)
					}
				}
			}
			if got := f.currentCards(t); got != 45 {
				t.Errorf("%d current cards, want 45 (no removal)", got)
			}
			// A consistent walk clears it.
			f.srv.ClearFaults()
			if res, err := f.job.Run(t.Context(), TriggerBackfill, Options{}); err != nil || !res.WalkConsistent {
				t.Fatalf("walk after the fault: %+v, %v", res, err)
			}
			sum, _ := f.wh.Summary(t.Context())
			if h := Assess(sum, nil, time.Now(), 0, 0, CommandLine{}); !h.Healthy || len(h.Warnings) != 0 {
				t.Errorf("after a consistent walk: healthy %v warnings %q problems %q", h.Healthy, h.Warnings, h.Problems)
			}
		})
	}
}

// TestRefetchedPageStoredOnce: a page empty on its first answer only is
// asked for again and stored once; the walk is consistent.
func TestRefetchedPageStoredOnce(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 3, Cards: 45})
	f.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultEmptyPage, Times: 1})
	res, err := f.job.Run(t.Context(), TriggerBackfill, Options{})
	if err != nil || !res.WalkConsistent || res.Pages != 3 || res.New != 45 {
		t.Fatalf("run: %+v, %v; want a consistent walk of 3 pages and 45 new cards", res, err)
	}
	if got := f.srv.Stats().PageRequests[2]; got != 2 {
		t.Errorf("page 2 requested %d times, want 2", got)
	}
	if v, multi := cardVersions(t, f); v != 45 || multi != 0 {
		t.Errorf("%d card versions (%d cards with several), want 45 (one each)", v, multi)
	}
}

// TestInconsistentWalkResumes: a walk that met an empty page and was then
// interrupted resumes from its checkpoint; the page anomaly, committed
// with its page, still marks the walk, and no card is stored twice.
func TestInconsistentWalkResumes(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 2, Cards: 100}) // 7 pages
	f.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultEmptyPage})
	ctx, cancel := context.WithCancel(t.Context())
	f.srv.OnPageServed(func(page int) {
		if page == 4 {
			cancel()
		}
	})
	res, err := f.job.Run(ctx, TriggerBackfill, Options{})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("first run: status %q err %v, want interrupted", res.Status, err)
	}
	sum, err := f.wh.WalkSummary(t.Context(), Stream)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reason != load.ReasonEmptyPage || !slices.Equal(sum.AnomalyPages, []int{2}) {
		t.Fatalf("open walk: reason %q pages %v, want empty_page on [2] committed with the page", sum.Reason, sum.AnomalyPages)
	}
	f.srv.OnPageServed(nil)
	res, err = f.job.Run(t.Context(), TriggerBackfill, Options{})
	if err != nil || !res.Resumed {
		t.Fatalf("resumed run: %+v, %v", res, err)
	}
	if res.WalkConsistent || res.InconsistentReason != load.ReasonEmptyPage || !slices.Equal(res.InconsistentPages, []int{2}) {
		t.Errorf("resumed walk: consistent %v reason %q pages %v; want empty_page on [2]", res.WalkConsistent, res.InconsistentReason, res.InconsistentPages)
	}
	if v, multi := cardVersions(t, f); v != 85 || multi != 0 {
		t.Errorf("%d card versions (%d cards with several), want 85, one each (page 2 never held its 15)", v, multi)
	}
}

// TestRepeatedPageIntoEmptyWarehouse: a first walk whose pages all serve
// the same items (cards the warehouse has never stored, on pages committed
// in one batch) succeeds: each card is stored once, with one version, the
// repeats count as unchanged, never new twice, and the walk is
// inconsistent (repeated_page on pages 2 and 3, no removal), which status
// warns about after one such walk and calls unhealthy after two in a row.
func TestRepeatedPageIntoEmptyWarehouse(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 9, Cards: 45}) // 3 pages of 15
	f.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultRepeatedPage})
	for i := range 2 {
		res, err := f.job.Run(t.Context(), TriggerBackfill, Options{})
		if err != nil || res.Status != load.StatusSucceeded {
			t.Fatalf("walk %d: %v (%+v)", i+1, err, res)
		}
		wantNew, wantUnchanged := 15, 30
		if i > 0 {
			wantNew, wantUnchanged = 0, 45
		}
		if res.Pages != 3 || res.WalkConsistent || res.InconsistentReason != load.ReasonRepeatedPage || !slices.Equal(res.InconsistentPages, []int{2, 3}) {
			t.Errorf("walk %d: %d pages, consistent %v, reason %q pages %v; want 3 pages, inconsistent, repeated_page on [2 3]",
				i+1, res.Pages, res.WalkConsistent, res.InconsistentReason, res.InconsistentPages)
		}
		if res.New != wantNew || res.Changed != 0 || res.Unchanged != wantUnchanged || res.Removed != 0 || res.PendingRemovals != 0 {
			t.Errorf("walk %d: new %d changed %d unchanged %d removed %d pending %d; want %d new, %d unchanged, no removal",
				i+1, res.New, res.Changed, res.Unchanged, res.Removed, res.PendingRemovals, wantNew, wantUnchanged)
		}
		if got := f.currentCards(t); got != 15 {
			t.Errorf("walk %d: %d current cards, want the 15 served", i+1, got)
		}
		if v, multi := cardVersions(t, f); v != 15 || multi != 0 {
			t.Errorf("walk %d: %d card versions (%d cards with several), want 15, one each", i+1, v, multi)
		}
		sum, err := f.wh.Summary(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.RecentWalks) == 0 || sum.RecentWalks[0].Reason != load.ReasonRepeatedPage {
			t.Fatalf("walk %d: recent walks %+v, want the last with repeated_page", i+1, sum.RecentWalks)
		}
		h := Assess(sum, nil, time.Now(), 0, 0, CommandLine{})
		want := WalkText(sum.RecentWalks[0])
		switch i {
		case 0:
			if !h.Healthy || !strings.Contains(strings.Join(h.Warnings, "\n"), "the last walk was inconsistent ("+want+")") {
				t.Errorf("after one inconsistent walk: healthy %v warnings %q problems %q; want healthy with a warning naming %q", h.Healthy, h.Warnings, h.Problems, want)
			}
		case 1:
			if h.Healthy || len(h.Problems) == 0 || !strings.Contains(h.Problems[0], "the last two walks were inconsistent ("+want+"; ") {
				t.Errorf("after two: healthy %v problems %q; want unhealthy naming %q", h.Healthy, h.Problems, want)
			}
		}
	}
	// Once the pages are served right the rest is stored and the walk is
	// consistent.
	f.srv.ClearFaults()
	if res, err := f.job.Run(t.Context(), TriggerBackfill, Options{}); err != nil || !res.WalkConsistent || res.New != 30 {
		t.Fatalf("walk after the fault: %+v, %v; want consistent, 30 new", res, err)
	}
	if v, multi := cardVersions(t, f); v != 45 || multi != 0 {
		t.Errorf("%d card versions (%d cards with several), want 45, one each", v, multi)
	}
}
