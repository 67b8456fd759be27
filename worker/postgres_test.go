package worker

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/sim"
)

// pgStore opens a store of account on the PostgreSQL database url for
// holder (commits of pages with changes at once).
func pgStore(t *testing.T, url, account, holder string, ttl time.Duration, hold bool) *Store {
	t.Helper()
	st, err := OpenTarget(t.Context(), Target{URL: url, Holder: holder, LeaseTTL: ttl},
		load.Options{Account: account, CommitDelay: new(time.Duration(0))}, hold)
	if err != nil {
		t.Fatalf("open store for %s: %v", holder, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// pgFixture is a simulator of cards cards and a client of it.
func pgFixture(t *testing.T, cards int) (*sim.Server, *extract.Client) {
	t.Helper()
	f := newFixture(t, sim.Options{Cards: cards, Seed: 7})
	return f.srv, f.job.Client
}

// pgCards returns the ids of account's current cards in the warehouse and
// how many card versions it holds.
func pgCards(t *testing.T, st *Store) (ids []string, versions int) {
	t.Helper()
	pool := st.Warehouse.(*postgres.Warehouse).Pool()
	rows, err := pool.Query(t.Context(), `SELECT card_id FROM card_state WHERE account = $1 AND removed_at IS NULL ORDER BY card_id`, st.Warehouse.Account())
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM card_versions WHERE account = $1`, st.Warehouse.Account()).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids, versions
}

func simIDs(srv *sim.Server) []string {
	var ids []string
	for _, c := range srv.Cards() {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	return ids
}

func TestPostgresJobMatchesSimulator(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	srv, client := pgFixture(t, 100)
	st := pgStore(t, url, "acme", "replica-a", 10*time.Second, false)
	res, err := st.Job(client, nil, JobOptions{Version: "test"}).Run(t.Context(), TriggerBackfill, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.WalkComplete || !res.WalkConsistent || res.Cards != 100 {
		t.Fatalf("result %+v: want a complete, consistent walk of 100 cards", res)
	}
	ids, versions := pgCards(t, st)
	if want := simIDs(srv); !slices.Equal(ids, want) {
		t.Errorf("warehouse holds %d cards, simulator %d", len(ids), len(want))
	}
	if versions != 100 {
		t.Errorf("card versions = %d, want 100", versions)
	}
	// The run released its lease: another replica may take it at once.
	other := pgStore(t, url, "acme", "replica-b", 10*time.Second, false)
	if err := other.Lock.(*LeaseLock).AcquireContext(t.Context()); err != nil {
		t.Errorf("after the run, another replica cannot take the lease: %v", err)
	}
}

func TestPostgresSecondWriterRefused(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	_, client := pgFixture(t, 20)
	first := pgStore(t, url, "acme", "replica-a", 10*time.Second, true)
	second := pgStore(t, url, "acme", "replica-b", 10*time.Second, false)
	_, err := second.Job(client, nil, JobOptions{Version: "test"}).Run(t.Context(), TriggerSchedule, Options{})
	var held *postgres.LeaseHeldError
	if !errors.Is(err, load.ErrLocked) || !errors.As(err, &held) || held.Holder != "replica-a" {
		t.Fatalf("second writer: err %v, want ErrLocked naming replica-a's lease", err)
	}
	runs, err := first.Warehouse.Runs(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 0 {
		t.Errorf("the refused run wrote %d run rows", len(runs))
	}
	// A one-shot command refused the same way (backfill's exit code 4).
	if _, err := OpenTarget(t.Context(), Target{URL: url, Holder: "replica-c", LeaseTTL: 10 * time.Second},
		load.Options{Account: "acme"}, true); !errors.Is(err, load.ErrLocked) {
		t.Errorf("holding open: err %v, want ErrLocked", err)
	}
	// Another account is not held back.
	if _, err := OpenTarget(t.Context(), Target{URL: url, Holder: "replica-c", LeaseTTL: 10 * time.Second},
		load.Options{Account: "other"}, true); err != nil {
		t.Errorf("another account: %v", err)
	}
}

// TestPostgresLeaseLostMidWalk takes replica A's lease away in the middle
// of its walk (it expires and replica B takes the account): A's next
// commit is refused by its fencing token and writes nothing, and B's run
// resumes from the checkpoint A left; no card is stored twice.
func TestPostgresLeaseLostMidWalk(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	f := newFixture(t, sim.Options{Cards: 150, Seed: 11}) // 10 pages
	a := pgStore(t, url, "acme", "replica-a", time.Minute, false)
	b := pgStore(t, url, "acme", "replica-b", time.Minute, false)
	pool := a.Warehouse.(*postgres.Warehouse).Pool()
	var pages atomic.Int32
	client := rewriteClientWith(t, &fixture{srv: f.srv}, func(r *http.Request) {
		if r.URL.Path != "/cards" || pages.Add(1) != 5 {
			return
		}
		// Before page 5 is served: A's lease lapses and B takes it.
		if _, err := pool.Exec(context.Background(), `UPDATE sync_leases SET expires_at = now() - interval '1 second' WHERE account = 'acme'`); err != nil {
			t.Error(err)
		}
		if err := b.Lock.(*LeaseLock).AcquireContext(context.Background()); err != nil {
			t.Errorf("B takes the expired lease: %v", err)
		}
	}, nil)
	res, err := a.Job(client, nil, JobOptions{Version: "test"}).Run(t.Context(), TriggerSchedule, Options{})
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("A's run: err %v, want ErrLeaseLost", err)
	}
	if res.Pages != 4 {
		t.Errorf("A committed %d pages, want 4 (page 5's commit refused)", res.Pages)
	}
	ids, versions := pgCards(t, b)
	if len(ids) != 60 || versions != 60 {
		t.Errorf("after A: %d cards, %d versions; want 60 and 60 (4 pages)", len(ids), versions)
	}
	// B holds the lease (taken above); its run resumes at page 5.
	bres, err := b.Job(f.job.Client, nil, JobOptions{Version: "test"}).Run(t.Context(), TriggerSchedule, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bres.Resumed || bres.StartPage != 5 || len(bres.Abandoned) != 1 {
		t.Errorf("B's run: resumed %v at page %d, abandoned %v; want a resume at page 5 marking A's run abandoned",
			bres.Resumed, bres.StartPage, bres.Abandoned)
	}
	ids, versions = pgCards(t, b)
	if want := simIDs(f.srv); !slices.Equal(ids, want) || versions != len(want) {
		t.Errorf("after B: %d cards, %d versions; want %d of each", len(ids), versions, len(want))
	}
	runs, err := b.Warehouse.Runs(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == res.RunID && r.Status != load.StatusAbandoned {
			t.Errorf("A's run %d: status %s, want abandoned", r.ID, r.Status)
		}
	}
}

// TestPostgresWalkNeverEndsEarly: on PostgreSQL, page 2 of 3 empty after a
// good sync while a card on page 3 changes: the change is stored, the walk
// is inconsistent with empty_page on page 2 (sync_walks), and the second
// such walk makes the account unhealthy, naming reason and page.
func TestPostgresWalkNeverEndsEarly(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	srv, client := pgFixture(t, 45)
	st := pgStore(t, url, "acme", "replica-a", 10*time.Second, false)
	job := st.Job(client, nil, JobOptions{Version: "test"})
	if res, err := job.Run(t.Context(), TriggerBackfill, Options{}); err != nil || !res.WalkConsistent {
		t.Fatalf("good sync: %+v, %v", res, err)
	}
	onPage3 := srv.Cards()[40].ID
	srv.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultEmptyPage})
	for i := range 2 {
		srv.UpdateCard(onPage3)
		res, err := job.Run(t.Context(), TriggerBackfill, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Pages != 3 || res.Changed != 1 || res.WalkConsistent || res.InconsistentReason != load.ReasonEmptyPage || !slices.Equal(res.InconsistentPages, []int{2}) {
			t.Errorf("walk %d: %+v; want 3 pages, the change read, empty_page on page 2", i+1, res)
		}
	}
	var reason, pages string
	if err := st.Warehouse.(*postgres.Warehouse).Pool().QueryRow(t.Context(), `SELECT inconsistent_reason, inconsistent_pages FROM sync_walks
		WHERE account = 'acme' ORDER BY walk_id DESC LIMIT 1`).Scan(&reason, &pages); err != nil || reason != "empty_page" || pages != "[2]" {
		t.Errorf("sync_walks: %q %q (%v), want empty_page [2]", reason, pages, err)
	}
	sum, err := st.Warehouse.Summary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	h := Assess(sum, nil, time.Now(), 0, 0, CommandLine{})
	if h.Healthy || len(h.Problems) == 0 || !strings.Contains(h.Problems[0], "empty_page on page 2; walk") {
		t.Errorf("after two inconsistent walks: healthy %v problems %q; want unhealthy naming empty_page on page 2", h.Healthy, h.Problems)
	}
	if ids, _ := pgCards(t, st); len(ids) != 45 {
		t.Errorf("%d current cards, want 45 (no removal)", len(ids))
	}
}
