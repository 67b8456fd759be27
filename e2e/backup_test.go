//go:build e2e

package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// backupFileRE is the name of a finished backup.
var backupFileRE = regexp.MustCompile(`^warehouse-\d{8}T\d{6}Z(-\d+)?\.db$`)

// rowsOf returns a query's rows as text lines, keyed by the first column.
func rowsOf(t *testing.T, db *sql.DB, q string) map[string]string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := map[string]string{}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprint(vals[0])] = fmt.Sprint(vals[1:]...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBackupDuringSync takes backups with `cardsync backup` while `serve`
// walks a changing account back to back and an analyst holds a read
// transaction open. Every backup passes integrity_check and is the source
// as of one transaction: its history (card versions, finished runs) is a
// prefix of the warehouse's final history, every finished run in it has
// all of its versions, and a first walk caught mid-way holds exactly the
// cards of the pages its checkpoint says were committed.
func TestBackupDuringSync(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 31, Cards: 1500, Limit: 5000})
	d := newDeployment(t, up)
	d.env["CARDSYNC_API_RATE_LIMIT"] = "100/1s" // a 100-page walk takes about a second
	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1s"
	d.env["CARDSYNC_LOG_LEVEL"] = "info"
	serve := d.startBG("serve")
	pollUntil(t, 30*time.Second, "the first committed page", func() bool { return countRuns(t, d.db, "") >= 1 }, serve)

	// The analyst: a snapshot held open for the whole test.
	analyst := openRO(t, d.db)
	tx, err := analyst.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var seen int64
	if err := tx.QueryRow(`SELECT count(*) FROM cards`).Scan(&seen); err != nil {
		t.Fatal(err)
	}

	// Upstream keeps changing.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
				cards := up.Cards()
				up.UpdateCard(cards[(i*37)%len(cards)].ID)
				if i%5 == 0 {
					up.AddCard()
				}
			}
		}
	})

	dir := t.TempDir()
	var backups []string
	deadline := time.Now().Add(60 * time.Second)
	for len(backups) < 12 || countRuns(t, d.db, `WHERE status = 'succeeded'`) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("after 60s: %d backups, %d successful runs", len(backups), countRuns(t, d.db, `WHERE status = 'succeeded'`))
		}
		code, out, errOut := d.run("backup", "-to", dir, "-keep", "100")
		if code != 0 {
			t.Fatalf("backup during the sync: exit %d\n%s", code, lastLines(errOut))
		}
		backups = append(backups, strings.TrimSpace(out))
		time.Sleep(200 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	stopDaemon(t, serve)
	var still int64
	if err := tx.QueryRow(`SELECT count(*) FROM cards`).Scan(&still); err != nil || still != seen {
		t.Errorf("the analyst's snapshot moved: %d cards, then %d (%v)", seen, still, err)
	}
	tx.Rollback()

	final := openRO(t, d.db)
	finalVersions := rowsOf(t, final, `SELECT card_id || '/' || version, valid_from, run_id, change, data FROM card_versions`)
	finalRuns := rowsOf(t, final, `SELECT run_id, status, finished_at, pages, cards_new, cards_changed, cards_removed FROM sync_runs`)
	finalPerRun := rowsOf(t, final, `SELECT run_id, count(*) FROM card_versions GROUP BY run_id`)
	midWalk, midFirstWalk := 0, 0
	for _, b := range backups {
		mid, midFirst := checkBackup(t, b, finalVersions, finalRuns, finalPerRun)
		if mid {
			midWalk++
		}
		if midFirst {
			midFirstWalk++
		}
	}
	t.Logf("%d backups, %d taken mid-walk (%d in the first walk), %d runs", len(backups), midWalk, midFirstWalk, len(finalRuns))
	if midWalk == 0 {
		t.Error("no backup was taken while a walk was in progress")
	}
}

// checkBackup checks backup b against the warehouse's final card versions,
// runs and versions per run, and reports whether it was taken mid-walk
// (and in the first walk).
func checkBackup(t *testing.T, b string, finalVersions, finalRuns, finalPerRun map[string]string) (midWalk, midFirstWalk bool) {
	t.Helper()
	if !backupFileRE.MatchString(filepath.Base(b)) {
		t.Errorf("backup named %s", b)
		return false, false
	}
	fi, err := os.Stat(b)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("backup %s: %v, mode %v; want 0640", b, err, fi.Mode())
	}
	assertStructural(t, b)
	db := openRO(t, b)
	for key, row := range rowsOf(t, db, `SELECT card_id || '/' || version, valid_from, run_id, change, data FROM card_versions`) {
		if finalVersions[key] != row {
			t.Fatalf("%s: card version %s is not the warehouse's:\n got %s\nwant %s", b, key, row, finalVersions[key])
		}
	}
	perRun := rowsOf(t, db, `SELECT run_id, count(*) FROM card_versions GROUP BY run_id`)
	for id, row := range rowsOf(t, db, `SELECT run_id, status, finished_at, pages, cards_new, cards_changed, cards_removed FROM sync_runs`) {
		if strings.HasPrefix(row, "running") {
			continue
		}
		if finalRuns[id] != row {
			t.Errorf("%s: finished run %s differs from the warehouse's:\n got %s\nwant %s", b, id, row, finalRuns[id])
		}
		if perRun[id] != finalPerRun[id] {
			t.Errorf("%s: finished run %s has %s versions, the warehouse %s", b, id, perRun[id], finalPerRun[id])
		}
	}
	var cpRun, next int64
	_ = db.QueryRow(`SELECT coalesce(run_id, 0), next_page FROM sync_checkpoints WHERE stream = 'cards'`).Scan(&cpRun, &next)
	if next > 1 {
		midWalk = true
		if cpRun == 1 && queryInt(t, db, `SELECT count(*) FROM sync_walks WHERE finished_at IS NOT NULL`) == 0 {
			midFirstWalk = true
			// The first walk: only new cards, 15 to a page (cards added
			// upstream meanwhile land after them, so the last page
			// committed may be a short one past the first total).
			if n := queryInt(t, db, `SELECT count(*) FROM cards`); n > 15*(next-1) || n <= 15*(next-2) {
				t.Errorf("%s: checkpoint at page %d of the first walk but %d cards", b, next, n)
			}
		}
	}
	return midWalk, midFirstWalk
}

// TestBackupKilled kills `cardsync backup` with SIGKILL at random moments
// of a slow copy (a warehouse padded to about 50 MB): no file ever appears
// under a backup's name unless it is whole and passes integrity_check, and
// the next backup removes what the killed ones left.
func TestBackupKilled(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 32, Cards: 300})
	d := newDeployment(t, up)
	if code, _, errOut := d.run("backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, lastLines(errOut))
	}
	// Padding makes the copy and its check take a while; it is not a
	// cardsync table, and nothing reads it.
	db, err := sql.Open("sqlite", "file:"+d.db+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE padding (b BLOB);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 14000)
		INSERT INTO padding SELECT randomblob(3500) FROM n;
		CREATE INDEX padding_b ON padding (substr(b, 1, 64));`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	dir := t.TempDir()
	start := time.Now()
	if code, _, errOut := d.run("backup", "-to", dir); code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, lastLines(errOut))
	}
	whole := time.Since(start)
	t.Logf("one backup of the padded warehouse takes %v", whole)

	rng := rand.New(rand.NewPCG(3, 2))
	midCopy := 0
	for round := range 10 {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		cmd, _, _ := d.command(ctx, "backup", "-to", dir, "-keep", "100")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(whole))))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		cancel()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		temp := false
		for _, e := range entries {
			switch {
			case backupFileRE.MatchString(e.Name()):
				var ok string
				if err := openRO(t, filepath.Join(dir, e.Name())).QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
					t.Errorf("round %d: %s under a backup's name fails integrity_check: %q %v", round, e.Name(), ok, err)
				}
			case strings.HasPrefix(e.Name(), ".backup-"):
				temp = true
			}
		}
		if temp {
			midCopy++
		}
	}
	t.Logf("%d of 10 kills left a temporary file (killed mid-copy)", midCopy)
	if midCopy == 0 {
		t.Error("no kill landed during a copy; the test proves nothing")
	}
	if code, _, errOut := d.run("backup", "-to", dir, "-keep", "2"); code != 0 {
		t.Fatalf("backup after the kills: exit %d\n%s", code, lastLines(errOut))
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if strings.HasPrefix(e.Name(), ".backup-") && e.Name() != ".backup.lock" {
			t.Errorf("%s left after the next backup", e.Name())
		}
	}
	if n := len(names); n != 3 { // two backups and the lock file
		t.Errorf("backup directory after -keep 2: %v", names)
	}
}

// TestRestoreThenBackfill: a backup taken while a walk was interrupted is
// restored over a warehouse that moved on; the next backfill resumes at the
// restored checkpoint's page, and the warehouse ends equal to the
// simulator. A file that is not a warehouse is refused with exit 6 and
// changes nothing.
func TestRestoreThenBackfill(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 33, Cards: 1500, Limit: 5000})
	d := newDeployment(t, up)
	d.env["CARDSYNC_API_RATE_LIMIT"] = "80/1s"
	d.env["CARDSYNC_WAREHOUSE_COMMIT_DELAY"] = "0"
	bf := d.startBG("backfill")
	pollUntil(t, 30*time.Second, "ten committed pages", func() bool {
		n := countRuns(t, d.db, "")
		return n >= 1 && queryInt(t, openRO(t, d.db), `SELECT coalesce(max(next_page), 0) FROM sync_checkpoints`) > 10
	}, bf)
	if err := bf.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	bf.wait(t, 30*time.Second)
	code, out, errOut := d.run("backup")
	if code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, lastLines(errOut))
	}
	backup := strings.TrimSpace(out)
	restoredNext := queryInt(t, openRO(t, backup), `SELECT next_page FROM sync_checkpoints WHERE stream = 'cards'`)

	d.env["CARDSYNC_API_RATE_LIMIT"] = "1000/1s"
	if code, _, errOut := d.run("backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, lastLines(errOut))
	}
	for i, c := range up.Cards()[:40] {
		if i%2 == 0 {
			up.UpdateCard(c.ID)
		} else if i%7 == 0 {
			up.RemoveCard(c.ID)
		}
	}
	up.AddCard()
	if code, _, errOut := d.run("backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, lastLines(errOut))
	}

	junk := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("junk", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	runsBefore := countRuns(t, d.db, "")
	if code, _, errOut := d.run("restore", junk); code != 6 {
		t.Errorf("restore of junk: exit %d, want 6\n%s", code, lastLines(errOut))
	}
	if n := countRuns(t, d.db, ""); n != runsBefore {
		t.Errorf("a refused restore changed the warehouse: %d runs, was %d", n, runsBefore)
	}

	// The warehouse holds two runs the backup lacks: -force.
	code, out, errOut = d.run("restore", "-force", backup)
	if code != 0 {
		t.Fatalf("restore: exit %d\n%s\n%s", code, out, lastLines(errOut))
	}
	kept := keptAs(t, out)
	if n := countRuns(t, kept, ""); n != runsBefore {
		t.Errorf("%s has %d runs, want the replaced warehouse's %d", kept, n, runsBefore)
	}
	code, _, errOut = d.run("backfill")
	if code != 0 {
		t.Fatalf("backfill after restore: exit %d\n%s", code, lastLines(errOut))
	}
	if want := fmt.Sprintf(`"first_page":%d`, restoredNext); !strings.Contains(errOut, want) || !strings.Contains(errOut, `"resumes_walk_of_run":1`) {
		t.Errorf("the backfill after the restore did not resume at the restored checkpoint (page %d):\n%s", restoredNext, lastLines(errOut))
	}
	// That walk read its first pages before the removals upstream; the
	// next two walks miss the removed cards and confirm them (two-walk
	// rule).
	for range 2 {
		if code, _, errOut := d.run("backfill"); code != 0 {
			t.Fatalf("backfill: exit %d\n%s", code, lastLines(errOut))
		}
	}
	assertTruth(t, up, d.db)
}

// keptAs returns the file restore said it kept the replaced warehouse in.
func keptAs(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^the replaced warehouse is kept as (.+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("restore did not say where it kept the replaced warehouse:\n%s", out)
	}
	return m[1]
}

// TestRestoreUnderServe: restored while `serve` runs, the warehouse is
// adopted by the daemon's next run (said at error level), which syncs it
// back to the simulator's truth; a restore that meets a run in progress
// exits 4 and is simply retried.
func TestRestoreUnderServe(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 34, Cards: 300})
	d := newDeployment(t, up)
	if code, _, errOut := d.run("backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, lastLines(errOut))
	}
	code, out, errOut := d.run("backup")
	if code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, lastLines(errOut))
	}
	backup := strings.TrimSpace(out)
	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1s"
	d.env["CARDSYNC_LOG_LEVEL"] = "info"
	serve := d.startBG("serve")
	pollUntil(t, 30*time.Second, "two more successful runs", func() bool { return countRuns(t, d.db, `WHERE status = 'succeeded'`) >= 3 }, serve)
	for _, c := range up.Cards()[:10] {
		up.UpdateCard(c.ID)
	}
	up.RemoveCard(up.Cards()[20].ID)
	up.AddCard()
	locked := 0
	for {
		code, _, errOut := d.run("restore", "-force", backup)
		if code == 0 {
			break
		}
		if code != 4 || locked > 50 {
			t.Fatalf("restore under serve: exit %d\n%s", code, lastLines(errOut))
		}
		locked++
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("restore met a run in progress %d times", locked)
	pollUntil(t, 30*time.Second, "two runs on the restored warehouse", func() bool {
		return countRuns(t, d.db, `WHERE status = 'succeeded'`) >= 3
	}, serve)
	stopDaemon(t, serve)
	if !strings.Contains(serve.stderr.String(), `"level":"ERROR","msg":"the warehouse file was replaced by another cardsync warehouse (a restore?); cardsync now writes to it"`) {
		t.Errorf("the daemon did not say it adopted the restored file:\n%s", lastLines(serve.stderr.String()))
	}
	assertTruth(t, up, d.db)
}

// TestRestoreWaitUnderServe: `serve` runs every second, each run about 2 s
// (20 pages at 10 requests a second). A restore without -wait that meets a
// run in progress exits 4, changes nothing, and names the ways on: -wait,
// or stopping serve. restore -wait that meets one logs that it waits and
// restores as soon as the run ends; the daemon adopts the restored file at
// its next run and syncs it back to the simulator's truth.
func TestRestoreWaitUnderServe(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 35, Cards: 300})
	d := newDeployment(t, up)
	if code, _, errOut := d.run("backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, lastLines(errOut))
	}
	code, out, errOut := d.run("backup")
	if code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, lastLines(errOut))
	}
	backup := strings.TrimSpace(out)
	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1s"
	d.env["CARDSYNC_API_RATE_LIMIT"] = "10/1s"
	d.env["CARDSYNC_LOG_LEVEL"] = "info"
	serve := d.startBG("serve")
	running := func() bool { return countRuns(t, d.db, `WHERE status = 'running'`) > 0 }
	for _, c := range up.Cards()[:10] {
		up.UpdateCard(c.ID)
	}
	// A restore started while a run goes on may still find the lock free
	// when the run ended in between: it then simply restores. Try until
	// one meets a run.
	refused := false
	for try := 0; try < 10 && !refused; try++ {
		pollUntil(t, 30*time.Second, "a run in progress", running, serve)
		code, _, errOut := d.run("restore", "-force", backup)
		switch code {
		case 0:
			continue
		case 4:
			refused = true
		default:
			t.Fatalf("restore during a run: exit %d\n%s", code, lastLines(errOut))
		}
		for _, want := range []string{"refused, nothing changed: sync in progress (pid ", "(a run in progress)", "Run it again with -wait", "stop serve first"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("restore during a run says %q, want it to contain %q", errOut, want)
			}
		}
		if kept, _ := filepath.Glob(d.db + ".before-restore-*"); try == 0 && len(kept) > 0 {
			t.Errorf("a refused restore kept %v", kept)
		}
	}
	if !refused {
		t.Fatal("no restore met a run in progress in 10 tries")
	}
	waited := false
	for try := 0; try < 10 && !waited; try++ {
		pollUntil(t, 30*time.Second, "a run in progress", running, serve)
		code, out, errOut := d.run("restore", "-force", "-wait", backup)
		if code != 0 || !strings.Contains(out, "restored "+backup) {
			t.Fatalf("restore -wait during a run: exit %d\n%s\n%s", code, out, lastLines(errOut))
		}
		waited = strings.Contains(errOut, `"msg":"waiting for the sync in progress to end before restoring"`)
	}
	if !waited {
		t.Fatal("no restore -wait met a run in progress in 10 tries")
	}
	pollUntil(t, 60*time.Second, "two runs on the restored warehouse", func() bool {
		return countRuns(t, d.db, `WHERE status = 'succeeded'`) >= 3
	}, serve)
	stopDaemon(t, serve)
	if !strings.Contains(serve.stderr.String(), `"msg":"the warehouse file was replaced by another cardsync warehouse (a restore?); cardsync now writes to it"`) {
		t.Errorf("the daemon did not say it adopted the restored file:\n%s", lastLines(serve.stderr.String()))
	}
	assertTruth(t, up, d.db)
}
