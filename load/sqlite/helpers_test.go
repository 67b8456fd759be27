package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"

	"github.com/cardsync/cardsync/sim"
)

func openTest(t *testing.T, opts load.Options) (*Warehouse, string, *sim.Clock) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "warehouse.db")
	clk := sim.NewClock()
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	w, err := Open(t.Context(), path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w, path, clk
}

// cardJSON returns a realistic card record (~600 bytes) whose content
// depends on id and rev.
func cardJSON(id, rev int) []byte {
	return fmt.Appendf(nil, `{"id":%d,"name":"Card holder %d","card_number":"5244 53** **** %04d","type":"virtual","brand":"mastercard","status":"active","currency":"USD","balance":"%d.%02d","spent":%d.5,"limit":{"daily":"1000.00","monthly":"10000.00","per_transaction":"500.00"},"billing_address":{"line1":"%d Main Street","city":"Springfield","state":"IL","postal_code":"62701","country":"US"},"labels":["ads","travel","team-%d"],"expiry":"12/29","created_at":"2024-01-%02dT10:00:00Z","updated_at":"2025-02-%02dT08:30:00Z","revision":%d,"notes":null,"is_locked":false}`,
		id, id, id%10000, id*3+rev, rev%100, rev, id, id%7, id%28+1, rev%28+1, rev)
}

func page(n int, ids []int, rev int, total int) load.Page {
	p := load.Page{Stream: load.StreamCards, Number: n, TotalPages: (total + 14) / 15, TotalItems: total,
		FetchedAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), Duration: 120 * time.Millisecond,
		BodySHA256: fmt.Sprintf("%064x", n), Requests: 1}
	for _, id := range ids {
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(id), Data: cardJSON(id, rev)})
	}
	return p
}

func idRange(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func startRun(t *testing.T, w *Warehouse) int64 {
	t.Helper()
	id, err := w.StartRun(t.Context(), load.TriggerSchedule, "test")
	if err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	return id
}

// counts is PageResult without its rejection details, so tests can compare
// results with ==.
type counts struct{ New, Changed, Returned, Unchanged, Rejected int }

func commit(t *testing.T, w *Warehouse, run int64, p load.Page) counts {
	t.Helper()
	r, err := w.CommitPage(t.Context(), run, p)
	if err != nil {
		t.Fatalf("CommitPage %d: %v", p.Number, err)
	}
	return counts{r.New, r.Changed, r.Returned, r.Unchanged, r.Rejected}
}

func queryInt(t *testing.T, w *Warehouse, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := w.db.QueryRowContext(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func queryString(t *testing.T, w *Warehouse, q string, args ...any) string {
	t.Helper()
	var s string
	if err := w.db.QueryRowContext(t.Context(), q, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// finishWalk closes the walk as the worker does (guard on, no confirmation)
// and returns how many cards it marked removed.
func finishWalk(ctx context.Context, w *Warehouse, run int64, consistent bool) (int, error) {
	r, err := w.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: consistent})
	return r.Removed, err
}

// readFileIfExists returns the file's bytes, or nil when it does not exist.
func readFileIfExists(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return b
}

// rawDB opens a database file with no warehouse logic (no migration).
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	return db
}
