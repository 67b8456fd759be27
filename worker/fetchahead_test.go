package worker

import (
	"errors"
	"testing"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/sim"
)

// TestFetchAheadStoresEveryPage: with FetchAhead the walk fetches while
// its pages commit, and stores the same as page by page: every card, every
// page counted once, every request counted.
func TestFetchAheadStoresEveryPage(t *testing.T) {
	base := newFixture(t, sim.Options{Seed: 31, Cards: 300}) // 20 pages
	want, err := base.job.Run(t.Context(), TriggerBackfill, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, sim.Options{Seed: 31, Cards: 300})
	f.job.FetchAhead = 4
	res, err := f.job.Run(t.Context(), TriggerBackfill, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != 20 || res.New != 300 || !res.WalkConsistent {
		t.Errorf("run %+v, want 20 pages, 300 new cards, a consistent walk", res)
	}
	if got := f.currentCards(t); got != 300 {
		t.Errorf("%d current cards, want 300", got)
	}
	if res.Requests != want.Requests || res.AuthRequests != want.AuthRequests {
		t.Errorf("run counted %d requests (%d for tokens), page by page %d (%d)", res.Requests, res.AuthRequests, want.Requests, want.AuthRequests)
	}
}

// TestFetchAheadCommitsPagesInHandOnAFetchError: pages fetched before a
// failed fetch are committed, as page by page: the next run resumes at the
// refused page.
func TestFetchAheadCommitsPagesInHandOnAFetchError(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 32, Cards: 100})
	f.job.FetchAhead = 4
	f.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultStatus, Status: 403, Pages: []int{3}})
	res, err := f.job.Run(t.Context(), TriggerBackfill, Options{})
	var se *extract.StatusError
	if !errors.As(err, &se) || se.StatusCode != 403 || res.Status != "failed" {
		t.Fatalf("run: status %q err %v, want failed with a 403", res.Status, err)
	}
	if cp, _ := f.wh.Checkpoint(t.Context(), Stream); cp.NextPage != 3 || res.Pages != 2 {
		t.Errorf("checkpoint next page %d after %d pages, want 3 after 2 (page 3 refused)", cp.NextPage, res.Pages)
	}
}
