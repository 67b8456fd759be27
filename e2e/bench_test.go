//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// The benchmarks below run the built binary against the simulator on
// loopback and report their figures with b.ReportMetric. Each one is a
// single measured run; use -benchtime 1x:
//
//	go test -tags e2e -run '^$' -bench . -benchtime 1x ./e2e/
//
// The harness helpers take a *testing.T, which a benchmark does not have,
// so benchUpstream, benchDeployment and the small query helpers here build
// the same upstream and deployment for a testing.TB. None of these
// benchmarks asserts a duration: machines are shared and noisy, so the
// figures are reported, not judged.

// benchUpstream is newUpstream for a benchmark.
func benchUpstream(tb testing.TB, opts sim.Options) *upstream {
	tb.Helper()
	if opts.Window == 0 {
		opts.Window = time.Second
	}
	if opts.Limit == 0 {
		opts.Limit = 1 << 30
	}
	if opts.AuthLimit == 0 {
		opts.AuthLimit = 100
	}
	u := &upstream{Server: sim.New(opts), tokens: map[string]bool{}}
	ts := httptest.NewServer(u.Server)
	tb.Cleanup(ts.Close)
	u.URL = ts.URL
	return u
}

// benchDeployment is newDeployment for a benchmark, with info logging (the
// shipped default) and pacing off unless the caller sets a rate.
func benchDeployment(tb testing.TB, up *upstream) *deployment {
	tb.Helper()
	built(tb) // its deployment has no *testing.T to build it later
	dir := tb.TempDir()
	d := &deployment{dir: dir, db: filepath.Join(dir, "warehouse.db"), env: map[string]string{
		"CARDSYNC_API_BASE_URL":        up.URL,
		"CARDSYNC_API_EMAIL":           sim.DefaultEmail,
		"CARDSYNC_API_PASSWORD":        sim.DefaultPassword,
		"CARDSYNC_API_RATE_LIMIT":      "1000000/1s",
		"CARDSYNC_API_AUTH_RATE_LIMIT": "100/1s",
		"CARDSYNC_API_TIMEOUT":         "10s",
		"CARDSYNC_API_MAX_WAIT":        "30s",
		"CARDSYNC_LOG_FORMAT":          "json",
		"CARDSYNC_LOG_LEVEL":           "info",
	}}
	d.env["CARDSYNC_WAREHOUSE_PATH"] = d.db
	return d
}

// runBinary runs the binary to completion and fails the benchmark unless it
// exits 0. It returns the finished command (for its resource usage) and the
// wall time.
func runBinary(b *testing.B, d *deployment, args ...string) (*exec.Cmd, time.Duration) {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	cmd, stdout, stderr := d.command(ctx, args...)
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		b.Fatalf("cardsync %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout, tail(stderr.String(), 4000))
	}
	return cmd, elapsed
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// runPeak runs the binary to completion like runBinary and returns its
// peak resident set in KiB: the last VmHWM read from /proc/PID/status,
// polled every few milliseconds while it runs.
//
// The rusage Maxrss of the finished child is not usable here: Go starts
// children with vfork (CLONE_VM), and on exec Linux folds the hiwater RSS
// of the mm being left (this test process's, simulator included) into the
// child's maxrss, so Maxrss reports max(test process, binary).
func runPeak(b *testing.B, d *deployment, args ...string) (int64, time.Duration) {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	cmd, stdout, stderr := d.command(ctx, args...)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var hwm int64
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				b.Fatalf("cardsync %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout, tail(stderr.String(), 4000))
			}
			if hwm == 0 {
				b.Skip("no /proc/PID/status VmHWM on this platform")
			}
			return hwm, time.Since(start)
		case <-tick.C:
			if v := procField(status, "VmHWM:"); v > 0 {
				hwm = v
			}
		}
	}
}

// procField reads a "kB" field such as VmRSS: from a /proc status file
// (0 when absent).
func procField(path, name string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// benchDB opens the warehouse read-only (openRO for a testing.TB).
func benchDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// benchInt is queryInt for a testing.TB.
func benchInt(tb testing.TB, db *sql.DB, q string, args ...any) int64 {
	tb.Helper()
	var n sql.NullInt64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n.Int64
}

// BenchmarkPacing walks 310 pages (4,650 cards) with the built binary
// against the simulator at its limit, with the window scaled to one second
// on both sides (sim: 180 per 1s fixed window; client 180/1s). It reports
// the achieved page rate over the walk (first to last page served) divided
// by the allowed rate, the most requests the simulator accepted in any
// one-second window, and the 429s it sent.
func BenchmarkPacing(b *testing.B) {
	if testing.Short() {
		b.Skip("benchmark runs the binary for seconds")
	}
	const limit = 180
	cards := benchCards(4650)
	for b.Loop() {
		up := benchUpstream(b, sim.Options{Seed: 1, Cards: cards, Limit: limit, Window: time.Second})
		var mu sync.Mutex
		var first, last time.Time
		pages := 0
		up.OnPageServed(func(int) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if pages == 0 {
				first = now
			}
			last = now
			pages++
		})
		d := benchDeployment(b, up)
		d.env["CARDSYNC_API_RATE_LIMIT"] = fmt.Sprintf("%d/1s", limit)
		_, wall := runBinary(b, d, "backfill", "-no-progress")
		st := up.Stats()
		if want := (cards + 14) / 15; pages != want {
			b.Fatalf("%d pages served, want %d", pages, want)
		}
		// n pages span n-1 intervals of the allowed rate.
		walk := last.Sub(first)
		b.ReportMetric(float64(pages-1)/walk.Seconds()/limit, "rate_ratio")
		b.ReportMetric(float64(st.RateLimited), "429s")
		b.ReportMetric(float64(st.General.MaxInWindow), "max_in_window")
		b.ReportMetric(float64(limit), "limit")
		b.ReportMetric(float64(st.Requests[sim.EndpointCards]+st.Requests[sim.EndpointAccount])/wall.Seconds()/limit, "wall_rate_ratio")
		b.ReportMetric(walk.Seconds(), "walk_s")
	}
}

// BenchmarkThroughput backfills 10,000 cards (667 pages) with pacing off
// and reports cards per second end to end: process start to exit, HTTP
// on loopback, decoding and SQLite commits (synchronous=FULL, one
// transaction per page).
func BenchmarkThroughput(b *testing.B) {
	if testing.Short() {
		b.Skip("benchmark runs the binary for seconds")
	}
	cards := benchCards(10000)
	for b.Loop() {
		up := benchUpstream(b, sim.Options{Seed: 1, Cards: cards})
		d := benchDeployment(b, up)
		_, wall := runBinary(b, d, "backfill", "-no-progress")
		db := benchDB(b, d.db)
		if n := benchInt(b, db, `SELECT count(*) FROM cards`); n != int64(cards) {
			b.Fatalf("%d cards stored, want %d", n, cards)
		}
		b.ReportMetric(float64(cards)/wall.Seconds(), "cards/s")
		b.ReportMetric(wall.Seconds(), "wall_s")
	}
}

// BenchmarkMemory reports the binary's peak RSS for backfills of 10,000
// and of 100,000 cards with pacing off. Streaming pages into SQLite keeps
// the second within 1.2x of the first (rss_ratio).
func BenchmarkMemory(b *testing.B) {
	if testing.Short() {
		b.Skip("benchmark runs a 100,000-card backfill")
	}
	for b.Loop() {
		var rss [2]int64
		for i, cards := range []int{benchCards(10000), benchCards(100000)} {
			up := benchUpstream(b, sim.Options{Seed: 1, Cards: cards})
			d := benchDeployment(b, up)
			rss[i], _ = runPeak(b, d, "backfill", "-no-progress")
		}
		b.ReportMetric(float64(rss[0]), "rss_10k_KiB")
		b.ReportMetric(float64(rss[1]), "rss_100k_KiB")
		b.ReportMetric(float64(rss[1])/float64(rss[0]), "rss_ratio")
	}
}

// dbSize checkpoints the WAL (TRUNCATE) and returns the size of the
// database file plus its WAL, and the page and freelist counts.
func dbSize(b *testing.B, path string) (bytes, pages, free int64) {
	b.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var busy, logPages, done int
	if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &done); err != nil || busy != 0 {
		b.Fatalf("wal_checkpoint(TRUNCATE): busy %d, %v", busy, err)
	}
	pages = benchInt(b, db, `PRAGMA page_count`)
	free = benchInt(b, db, `PRAGMA freelist_count`)
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			bytes += fi.Size()
		}
	}
	return bytes, pages, free
}

// cardRows returns what a re-run must not change, per card: every cards
// column except the last_seen_* bookkeeping.
func cardRows(b *testing.B, db *sql.DB) map[string]string {
	b.Helper()
	rows, err := db.Query(`SELECT card_id, data, first_seen_at, updated_at, coalesce(removed_at, ''), first_seen_run FROM cards`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, data, first, updated, removed string
		var run int64
		if err := rows.Scan(&id, &data, &first, &updated, &removed, &run); err != nil {
			b.Fatal(err)
		}
		out[id] = fmt.Sprint(data, first, updated, removed, run)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// writtenKiB is what a finished process wrote to storage (rusage oublock,
// 512-byte units on Linux).
func writtenKiB(cmd *exec.Cmd) int64 {
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return ru.Oublock / 2
	}
	return 0
}

// BenchmarkRerun backfills 10,000 cards, then backfills twice more with no
// upstream change, and reports for the first re-run the card rows it
// rewrote: cards whose content columns changed plus card_versions rows
// added (goal 0, cross-checked with the run's own cards_new, cards_changed
// and cards_removed); the card_state rows whose stored last_seen_* the run
// rewrote (the walk's close restamped all of them before schema 3); what it
// wrote to storage; and the database growth
// (file + WAL after a TRUNCATE WAL checkpoint) after the first re-run and after
// the second, when the free pages the first left behind are reused.
func BenchmarkRerun(b *testing.B) {
	if testing.Short() {
		b.Skip("benchmark runs the binary three times")
	}
	cards := benchCards(10000)
	for b.Loop() {
		up := benchUpstream(b, sim.Options{Seed: 1, Cards: cards})
		d := benchDeployment(b, up)
		first, _ := runBinary(b, d, "backfill", "-no-progress")
		size0, _, _ := dbSize(b, d.db)
		db := benchDB(b, d.db)
		before := cardRows(b, db)
		versionsBefore := benchInt(b, db, `SELECT count(*) FROM card_versions`)
		db.Close()

		rerun, _ := runBinary(b, d, "backfill", "-no-progress")
		size1, pages1, free1 := dbSize(b, d.db)
		db = benchDB(b, d.db)
		var runID, newN, changed, unchanged, removed int64
		var status string
		if err := db.QueryRow(`SELECT run_id, status, cards_new, cards_changed, cards_unchanged, cards_removed
			FROM sync_runs ORDER BY run_id DESC LIMIT 1`).Scan(&runID, &status, &newN, &changed, &unchanged, &removed); err != nil {
			b.Fatal(err)
		}
		if status != "succeeded" || unchanged+newN+changed != int64(cards) {
			b.Fatalf("re-run %d %s: new %d changed %d unchanged %d", runID, status, newN, changed, unchanged)
		}
		after := cardRows(b, db)
		rewritten := benchInt(b, db, `SELECT count(*) FROM card_versions`) - versionsBefore
		for id, row := range after {
			if before[id] != row {
				rewritten++
			}
		}
		// cards is a view (schema 3): last_seen_* of a current card come
		// from the last complete walk, so count the stored rows the run
		// wrote instead.
		restamped := benchInt(b, db, `SELECT count(*) FROM card_state WHERE last_seen_run = ?`, runID)
		db.Close()

		runBinary(b, d, "backfill", "-no-progress")
		size2, pages2, _ := dbSize(b, d.db)

		b.ReportMetric(float64(rewritten), "rows_rewritten")
		b.ReportMetric(float64(newN+changed+removed), "run_new+changed+removed")
		b.ReportMetric(float64(restamped), "last_seen_restamped")
		b.ReportMetric(float64(size1-size0), "db_growth_bytes")
		b.ReportMetric(float64(size2-size1), "db_growth_2nd_rerun_bytes")
		b.ReportMetric(float64(pages2-pages1), "db_growth_2nd_rerun_pages")
		b.ReportMetric(float64(free1), "freelist_pages_after_rerun")
		b.ReportMetric(float64(pages1), "db_pages")
		b.ReportMetric(float64(size0), "db_bytes")
		b.ReportMetric(float64(writtenKiB(first)), "backfill_written_KiB")
		b.ReportMetric(float64(writtenKiB(rerun)), "rerun_written_KiB")
	}
}

// benchSmokeEnv, when set (TestREADME sets it), shrinks every benchmark's
// card count to a twentieth (at least 150): the docs' benchmark commands
// then prove in seconds that they run; their figures mean nothing.
const benchSmokeEnv = "BENCH_SMOKE"

// benchCards is a benchmark's card count n, or its smoke size.
func benchCards(n int) int {
	if os.Getenv(benchSmokeEnv) == "" {
		return n
	}
	return max(n/20, 150)
}
