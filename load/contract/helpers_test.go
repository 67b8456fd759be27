package contract

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/postgres/pgtest"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
)

// store is what the contract tests need of either warehouse.
type store interface {
	StartRun(ctx context.Context, trigger, version string) (int64, error)
	CommitPage(ctx context.Context, runID int64, p load.Page) (load.PageResult, error)
	FinishWalk(ctx context.Context, runID int64, stream string, end load.WalkEnd) (load.WalkResult, error)
	ResetCheckpoint(ctx context.Context, stream string) error
	Checkpoint(ctx context.Context, stream string) (load.Checkpoint, error)
	Summary(ctx context.Context) (load.Summary, error)
	SaveAccount(ctx context.Context, runID int64, a load.Account) error
	FinishRun(ctx context.Context, runID int64, r load.RunResult) error
	Runs(ctx context.Context, n int) ([]load.Run, error)
	PruneFields(ctx context.Context, cutoff time.Time) (int, error)
	// Optimize: a file's WAL checkpoint, nothing on a server.
	Optimize(ctx context.Context) error
}

// walkWriter is what the contract tests need of either WalkWriter.
type walkWriter interface {
	Add(ctx context.Context, p load.Page) (load.PageResult, error)
	Flush(ctx context.Context) error
	Buffered() load.Batch
	FieldsSkipped() int
}

// backend is one warehouse under test: its store, a new WalkWriter, and a
// query returning the first column of every row as text (the queries are
// written in SQL both databases read).
type backend struct {
	name   string
	s      store
	writer func(run int64) walkWriter
	query  func(t testing.TB, q string) []string
	clk    *sim.Clock
}

// backends returns an SQLite and a PostgreSQL warehouse with the same
// options, for tests whose body runs against both.
func backends(t *testing.T, maxRemoved float64, batchPages int) []backend {
	t.Helper()
	var out []backend
	{
		clk := sim.NewClock()
		w, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "w.db"), load.Options{Now: clk.Now, MaxRemovedFraction: maxRemoved, BatchPages: batchPages})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		out = append(out, backend{name: "sqlite", s: w, clk: clk,
			writer: func(run int64) walkWriter { return w.NewWalkWriter(run, load.StreamCards) },
			query: func(t testing.TB, q string) []string {
				t.Helper()
				return sqliteTexts(t, w.DB(), q)
			}})
	}
	if server != nil {
		w, _, clk := openPG(t, postgres.Options{Common: load.Options{MaxRemovedFraction: maxRemoved, BatchPages: batchPages}})
		out = append(out, backend{name: "postgres", s: w, clk: clk,
			writer: func(run int64) walkWriter { return w.NewWalkWriter(run, load.StreamCards) },
			query:  func(t testing.TB, q string) []string { t.Helper(); return pgQuery(t, w, q) }})
	} else if os.Getenv(pgtest.EnvRequire) != "" {
		t.Fatal(pgtest.ErrNoServer)
	}
	return out
}

// server is the package's PostgreSQL server (nil: tests that need it skip).
var server *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, func(s *pgtest.Server) { server = s })) }

// openPG opens a Warehouse on a fresh database of the test server.
func openPG(t testing.TB, opts postgres.Options) (*postgres.Warehouse, string, *sim.Clock) {
	t.Helper()
	pgtest.Need(t, server)
	url := server.NewDatabase(t)
	clk := sim.NewClock()
	if opts.Common.Now == nil {
		opts.Common.Now = clk.Now
	}
	w, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w, url, clk
}

func pgQuery(t testing.TB, w *postgres.Warehouse, q string, args ...any) []string {
	t.Helper()
	rows, err := w.Pool().Query(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		vs, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, textOf(vs[0]))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return got
}

func textOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(v)
}

func one(t testing.TB, rows []string) string {
	t.Helper()
	if len(rows) != 1 {
		t.Fatalf("want one row, got %q", rows)
	}
	return rows[0]
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

func startRun(t testing.TB, s store) int64 {
	t.Helper()
	id, err := s.StartRun(context.Background(), load.TriggerSchedule, "test")
	if err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	return id
}

type counts struct{ New, Changed, Returned, Unchanged, Rejected int }

func commit(t testing.TB, s store, run int64, p load.Page) counts {
	t.Helper()
	r, err := s.CommitPage(context.Background(), run, p)
	if err != nil {
		t.Fatalf("CommitPage %d: %v", p.Number, err)
	}
	return counts{r.New, r.Changed, r.Returned, r.Unchanged, r.Rejected}
}

// sorted joins rows with commas (the rows come ordered by the query).
func joined(rows []string) string { return strings.Join(rows, ",") }

// uniqueFieldsPage is page n (10 cards) of a walk of total cards, each
// card with "id" and ten top-level fields of its own: card i holds
// u<10i> … u<10i+9>.
func uniqueFieldsPage(n, total int) load.Page {
	p := load.Page{Stream: load.StreamCards, Number: n, TotalPages: (total + 9) / 10, TotalItems: total}
	for c := range 10 {
		id := (n-1)*10 + c
		parts := []string{fmt.Sprintf(`"id":%d`, id)}
		for f := range 10 {
			parts = append(parts, fmt.Sprintf(`"u%04d":%d`, id*10+f, f))
		}
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(id), Data: []byte("{" + strings.Join(parts, ",") + "}")})
	}
	return p
}

// cardJSON is load's test card (~600 bytes) whose content depends on id
// and rev.
func cardJSON(id, rev int) []byte {
	return fmt.Appendf(nil, `{"id":%d,"name":"Card holder %d","card_number":"5244 53** **** %04d","type":"virtual","brand":"mastercard","status":"active","currency":"USD","balance":"%d.%02d","spent":%d.5,"limit":{"daily":"1000.00","monthly":"10000.00","per_transaction":"500.00"},"billing_address":{"line1":"%d Main Street","city":"Springfield","state":"IL","postal_code":"62701","country":"US"},"labels":["ads","travel","team-%d"],"expiry":"12/29","created_at":"2024-01-%02dT10:00:00Z","updated_at":"2025-02-%02dT08:30:00Z","revision":%d,"notes":null,"is_locked":false}`,
		id, id, id%10000, id*3+rev, rev%100, rev, id, id%7, id%28+1, rev%28+1, rev)
}

// sqliteTexts runs q on a SQLite warehouse's database and returns its
// first column's values as text (textOf).
func sqliteTexts(t testing.TB, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, textOf(v))
	}
	return got
}
