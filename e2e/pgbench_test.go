//go:build e2e

package e2e

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load/postgres/pgtest"
	"github.com/cardsync/cardsync/sim"
)

// pgBenchCards is the size of BenchmarkPostgresBackfill's backfill (a smoke size under BENCH_SMOKE).
func pgBenchCards() int { return benchCards(20000) }

// BenchmarkPostgresBackfill backfills 20,000 new cards from the simulator
// with pacing off, side by side, with the built binary: into a fresh
// SQLite file (synchronous=FULL, as shipped) and into a fresh database of a
// throwaway PostgreSQL started from the Debian binaries with the server's
// shipped durability (fsync, synchronous_commit and full_page_writes on;
// not the package's test server, which runs with fsync off). It reports
// each side's wall time and their ratio (pg/sqlite_new, goal <= 2), then
// re-runs both with no upstream change and reports the re-runs' wall
// times and the card rows the PostgreSQL re-run wrote (card_state and
// card_versions rows whose xmin is newer than the re-run's start; goal 0:
// an unchanged page costs no card write, only the checkpoint and run
// bookkeeping).
func BenchmarkPostgresBackfill(b *testing.B) {
	if testing.Short() {
		b.Skip("benchmark runs two 20,000-card backfills")
	}
	srv := durablePG(b)
	for b.Loop() {
		lite := benchDeployment(b, benchUpstream(b, sim.Options{Seed: 1, Cards: pgBenchCards()}))
		_, liteNew := runBinary(b, lite, "backfill", "-no-progress")
		if n := benchInt(b, benchDB(b, lite.db), `SELECT count(*) FROM cards`); n != int64(pgBenchCards()) {
			b.Fatalf("SQLite: %d cards stored, want %d", n, pgBenchCards())
		}

		pgd := benchDeployment(b, benchUpstream(b, sim.Options{Seed: 1, Cards: pgBenchCards()}))
		pgd.db = srv.NewDatabase(b)
		delete(pgd.env, "CARDSYNC_WAREHOUSE_PATH")
		pgd.env["CARDSYNC_WAREHOUSE_URL"] = pgd.db
		_, pgNew := runBinary(b, pgd, "backfill", "-no-progress")
		db := benchPostgres(b, pgd.db)
		if n := benchInt(b, db, `SELECT count(*) FROM cards`); n != int64(pgBenchCards()) {
			b.Fatalf("PostgreSQL: %d cards stored, want %d", n, pgBenchCards())
		}

		_, liteSame := runBinary(b, lite, "backfill", "-no-progress")
		xid := benchInt(b, db, `SELECT txid_current()`)
		_, pgSame := runBinary(b, pgd, "backfill", "-no-progress")
		written := benchInt(b, db, `SELECT (SELECT count(*) FROM card_state WHERE xmin::text::bigint > $1)
			+ (SELECT count(*) FROM card_versions WHERE xmin::text::bigint > $1)`, xid)

		b.ReportMetric(liteNew.Seconds(), "sqlite_new_s")
		b.ReportMetric(pgNew.Seconds(), "pg_new_s")
		b.ReportMetric(pgNew.Seconds()/liteNew.Seconds(), "pg/sqlite_new")
		b.ReportMetric(liteSame.Seconds(), "sqlite_unchanged_s")
		b.ReportMetric(pgSame.Seconds(), "pg_unchanged_s")
		b.ReportMetric(pgSame.Seconds()/liteSame.Seconds(), "pg/sqlite_unchanged")
		b.ReportMetric(float64(written), "pg_unchanged_card_rows_written")
	}
}

// durablePG starts a throwaway PostgreSQL with fsync on for one benchmark
// (pgtest.StartDurable), stopped when it ends; it skips without the
// Debian binaries (fails with CARDSYNC_REQUIRE_TOOLS set).
func durablePG(b *testing.B) *pgtest.Server {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), 2*time.Minute)
	defer cancel()
	srv, err := pgtest.StartDurable(ctx)
	if err != nil {
		if errors.Is(err, pgtest.ErrNoServer) && os.Getenv(pgtest.EnvRequire) == "" {
			b.Skip(err)
		}
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			b.Error(err)
		}
	})
	return srv
}

// benchPostgres opens a PostgreSQL warehouse to read (openPostgresRO for a
// testing.TB; the xid probe needs a writable session, so it is not
// read-only).
func benchPostgres(tb testing.TB, url string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxIdleConns(0)
	tb.Cleanup(func() { db.Close() })
	return db
}
