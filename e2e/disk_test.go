//go:build e2e

package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	loadsqlite "github.com/cardsync/cardsync/load/sqlite"

	"modernc.org/sqlite"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// sqliteFull is SQLITE_FULL, "database or disk is full".
const sqliteFull = 13

// newJob builds a worker.Job the way cmd/cardsync's backfill does, against
// the simulator and the warehouse at path, in this process.
func newJob(t *testing.T, up *upstream, path string, opts load.Options) *worker.Job {
	t.Helper()
	client, err := extract.New(extract.Config{
		BaseURL:       up.URL,
		Email:         sim.DefaultEmail,
		Password:      extract.Secret(sim.DefaultPassword),
		RateLimit:     extract.Rate{N: 1000, Per: time.Second},
		AuthRateLimit: extract.Rate{N: 100, Per: time.Second},
		Timeout:       5 * time.Second,
		MaxWait:       10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := loadsqlite.OpenLock(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	wh, err := loadsqlite.Open(t.Context(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close() })
	return &worker.Job{Client: client, Warehouse: wh, Lock: lock, Version: "e2e"}
}

// TestDiskFullMaxPageCount caps the warehouse some pages above its size
// (PRAGMA max_page_count on the writer's single connection): the run fails
// with a warehouse error (SQLITE_FULL), the checkpoint is the last committed
// page and matches the rows, the file is intact; with the cap raised the
// next run resumes there and ends equal to the simulator, having fetched
// again at most the batch that did not fit. It runs with every page that
// changes something committed at once (commit_delay "0") and with the
// default batches of up to load.DefaultBatchPages pages.
func TestDiskFullMaxPageCount(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts load.Options
		// headroom is the cap above the empty warehouse's size, in
		// database pages: room for some commits, not for the walk.
		headroom   int64
		maxRefetch int64
	}{
		{name: "page by page", opts: load.Options{CommitDelay: new(time.Duration(0))}, headroom: 40, maxRefetch: 1},
		{name: "batches", opts: load.Options{}, headroom: 250, maxRefetch: load.DefaultBatchPages},
	} {
		t.Run(tt.name, func(t *testing.T) {
			testDiskFullMaxPageCount(t, tt.opts, tt.headroom, tt.maxRefetch)
		})
	}
}

func testDiskFullMaxPageCount(t *testing.T, opts load.Options, headroom, maxRefetch int64) {
	cards := 3000
	if testing.Short() {
		cards = 1500 // 100 pages: room for two batches before the cap
	}
	up := newUpstream(t, sim.Options{Seed: 41, Cards: cards, Limit: 5000})
	path := filepath.Join(t.TempDir(), "warehouse.db")
	job := newJob(t, up, path, opts)
	db := job.Warehouse.(*loadsqlite.Warehouse).DB()
	pageCount := func() int64 {
		var n int64
		if err := db.QueryRow(`PRAGMA page_count`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	start := pageCount()
	// The writer holds exactly one connection, so the pragma sticks.
	var limit int64
	if err := db.QueryRow(`PRAGMA max_page_count = ` + strconv.FormatInt(start+headroom, 10)).Scan(&limit); err != nil {
		t.Fatal(err)
	}
	t.Logf("page_count %d, max_page_count %d", start, limit)

	res, err := job.Run(t.Context(), worker.TriggerBackfill, worker.Options{})
	if err == nil {
		t.Fatalf("run with a full database succeeded: %+v", res)
	}
	if !errors.Is(err, worker.ErrWarehouse) {
		t.Errorf("error %v does not wrap worker.ErrWarehouse", err)
	}
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code()&0xff != sqliteFull {
		t.Errorf("error %v is not SQLITE_FULL", err)
	}
	if !strings.Contains(err.Error(), "full") {
		t.Errorf("error %q does not say the database is full", err)
	}
	next, open := cardsCheckpoint(t, path)
	t.Logf("failed after %d committed pages (status %s): %v", next-1, res.Status, err)
	if next <= 1 || !open || int(next) > cards/15 {
		t.Fatalf("checkpoint next page %d (walk open %v): want a failure mid-walk after at least one page", next, open)
	}
	if int64(res.Pages) != next-1 {
		t.Errorf("run reports %d pages, checkpoint %d committed", res.Pages, next-1)
	}
	assertStructural(t, path)
	assertCheckpointMatchesRows(t, path)
	if got := pageCount(); got > limit {
		t.Errorf("page_count %d beyond max_page_count %d", got, limit)
	}
	runs := syncRuns(t, path)
	if len(runs) != 1 || runs[0].status != "failed" || !strings.Contains(runs[0].errText, "full") {
		t.Errorf("runs after disk full = %v, want one failed run naming the full database", runs)
	}

	if _, err := db.Exec(`PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	res, err = job.Run(t.Context(), worker.TriggerBackfill, worker.Options{})
	if err != nil {
		t.Fatalf("run with space again: %v", err)
	}
	if !res.Resumed || int64(res.StartPage) != next {
		t.Errorf("second run resumed=%v at page %d, want a resume at %d", res.Resumed, res.StartPage, next)
	}
	assertTruth(t, up, path)
	if n := extraFetches(up.Stats()); n > maxRefetch {
		t.Errorf("%d pages fetched twice, want <= %d (the batch that did not fit)", n, maxRefetch)
	}
}

// TestDiskFullTmpfs runs the binary with its warehouse on a 512 KiB tmpfs
// (root only), committing every page with new cards at once
// (warehouse.commit_delay "0"; TestDiskFullMaxPageCount covers batches):
// the backfill exits 6 (warehouse error) saying the disk is full, the warehouse is intact with its committed rows matching the
// checkpoint; after the filesystem grows, the next backfill resumes and
// ends equal to the simulator.
func TestDiskFullTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs (non-root: run under `unshare -rm`)")
	}
	dir := t.TempDir()
	mnt := filepath.Join(dir, "tiny")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); the max_page_count test covers disk full", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	cards := 3000
	up := newUpstream(t, sim.Options{Seed: 42, Cards: cards, Limit: 5000})
	d := newDeployment(t, up)
	d.db = filepath.Join(mnt, "warehouse.db")
	d.env["CARDSYNC_WAREHOUSE_PATH"] = d.db
	d.env["CARDSYNC_LOG_LEVEL"] = "info"
	d.env["CARDSYNC_WAREHOUSE_COMMIT_DELAY"] = "0"

	code, stdout, stderr := d.run("backfill")
	if code != 6 {
		t.Fatalf("backfill on a full disk: exit %d, want 6 (warehouse)\n%s\n%s", code, stdout, lastLines(stderr))
	}
	last := lastLines(stderr)
	if i := strings.LastIndex(last, "\n"); i >= 0 {
		last = last[i+1:]
	}
	t.Logf("error line: %s", last)
	if !strings.Contains(last, "database or disk is full") {
		t.Errorf("last stderr line does not say the database or disk is full: %s", last)
	}
	next, open := cardsCheckpoint(t, d.db)
	t.Logf("failed after %d committed pages", next-1)
	if next <= 1 || !open {
		t.Fatalf("checkpoint next page %d (walk open %v): want a failure mid-walk after at least one page", next, open)
	}
	assertStructural(t, d.db)
	assertCheckpointMatchesRows(t, d.db)
	for _, r := range syncRuns(t, d.db) {
		t.Logf("after disk full: %v", r)
	}

	if out, err := exec.Command("mount", "-o", "remount,size=64m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("grow tmpfs: %v: %s", err, out)
	}
	code, stdout, stderr = d.run("backfill")
	if code != 0 {
		t.Fatalf("backfill with space again: exit %d\n%s\n%s", code, stdout, lastLines(stderr))
	}
	if got := resumedAtPage(stdout); got != next {
		t.Errorf("backfill resumed at page %d, want %d", got, next)
	}
	assertTruth(t, up, d.db)
}
