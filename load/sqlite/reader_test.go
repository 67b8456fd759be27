package sqlite

import (
	"database/sql"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// TestReaderHoldsSnapshotWhile1000PagesCommit: an analyst holds BEGIN;
// SELECT on a read-only connection while the worker commits 1,000 pages.
// The writer never fails, the held snapshot never moves, a polling reader
// never sees half a page, and the post-run TRUNCATE gives up quickly while
// the snapshot is held and empties the WAL once it is released.
func TestReaderHoldsSnapshotWhile1000PagesCommit(t *testing.T) {
	pages := 1000
	if testing.Short() {
		pages = 200
	}
	w, path, _ := openTest(t, load.Options{Synchronous: "NORMAL"})
	ctx := t.Context()
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 15), 1, 15*pages))

	r, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	held, err := r.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := held.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var before int
	if err := held.QueryRowContext(ctx, "SELECT count(*) FROM cards").Scan(&before); err != nil {
		t.Fatal(err)
	}

	// A second analyst polls without a transaction.
	stopPolling := pollCards(t, r.db)

	var slowest time.Duration
	for n := 2; n <= pages; n++ {
		start := time.Now()
		p := page(n, idRange(n*15-14, n*15), 1, 15*pages)
		for i := range p.Cards {
			p.Cards[i].Data = []byte(`{"id":` + p.Cards[i].ID + `}`) // small rows keep the held WAL small
		}
		if _, err := w.CommitPage(ctx, run, p); err != nil {
			t.Fatalf("page %d: %v", n, err)
		}
		slowest = max(slowest, time.Since(start))
		if n%250 == 0 {
			var got int
			if err := held.QueryRowContext(ctx, "SELECT count(*) FROM cards").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != before {
				t.Errorf("held snapshot moved: %d cards, want %d", got, before)
			}
		}
	}
	if torn := stopPolling(); len(torn) > 0 {
		t.Errorf("polling reader saw partial pages: %v", torn[:min(5, len(torn))])
	}
	t.Logf("slowest page commit with a reader holding a snapshot: %v", slowest)

	walHeld := fileSize(path + "-wal")
	start := time.Now()
	if err := w.Optimize(ctx); err != nil {
		t.Fatalf("Optimize with a held snapshot: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Optimize blocked %v with a reader holding a snapshot", d)
	}
	if _, err := held.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if got := queryInt(t, r, "SELECT count(*) FROM cards"); got != int64(15*pages) {
		t.Errorf("after the reader's commit it sees %d cards, want %d", got, 15*pages)
	}
	held.Close()
	r.Close()
	if err := w.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("WAL %d bytes while the snapshot was held, %d after TRUNCATE", walHeld, fi.Size())
	if fi.Size() != 0 {
		t.Errorf("WAL is %d bytes after TRUNCATE with no reader, want 0", fi.Size())
	}
}

// pollCards starts an analyst counting the cards of db again and again,
// without a transaction; stop ends it and returns the counts that were not
// a whole number of 15-card pages.
func pollCards(t *testing.T, db *sql.DB) (stop func() []int) {
	ctx := t.Context()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var torn []int
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			var n int
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM cards").Scan(&n); err != nil {
				t.Errorf("polling reader: %v", err)
				return
			}
			if n%15 != 0 {
				torn = append(torn, n)
			}
		}
	})
	return func() []int {
		close(done)
		wg.Wait()
		return torn
	}
}
