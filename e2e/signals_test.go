//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// syncRun is one sync_runs row.
type syncRun struct {
	id                 int64
	trigger, status    string
	started, finished  string
	errText            string
	pages, cards       int64
	ended              bool
	startedAt, endedAt time.Time
}

// syncRuns reads every run row, oldest first.
func syncRuns(t *testing.T, path string) []syncRun {
	t.Helper()
	db := openRO(t, path)
	rows, err := db.Query(`SELECT run_id, trigger, status, ` + utcText(path, "started_at") + `, coalesce(` + utcText(path, "finished_at") + `, ''), coalesce(error, ''),
		pages, cards_seen FROM sync_runs ORDER BY run_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []syncRun
	for rows.Next() {
		var r syncRun
		if err := rows.Scan(&r.id, &r.trigger, &r.status, &r.started, &r.finished, &r.errText,
			&r.pages, &r.cards); err != nil {
			t.Fatal(err)
		}
		r.ended = r.finished != ""
		r.startedAt, _ = time.Parse(time.RFC3339, r.started)
		r.endedAt, _ = time.Parse(time.RFC3339, r.finished)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (r syncRun) String() string {
	return fmt.Sprintf("run %d %s %s [%s, %s] pages=%d cards=%d err=%q", r.id, r.trigger, r.status, r.started, r.finished, r.pages, r.cards, r.errText)
}

// assertRunHistory checks the run history after lock contention: no run is
// left running, no two runs overlap in time, and every complete walk was
// finished by exactly one succeeded run (and no succeeded run finished no
// walk).
func assertRunHistory(t *testing.T, path string) []syncRun {
	t.Helper()
	runs := syncRuns(t, path)
	for _, r := range runs {
		if r.status == "running" || !r.ended {
			t.Errorf("left unfinished: %v", r)
		}
	}
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			// Times have one-second resolution: a run that starts in the
			// second another ended touches it without overlapping.
			if a.startedAt.Before(b.endedAt) && b.startedAt.Before(a.endedAt) {
				t.Errorf("runs overlap:\n  %v\n  %v", a, b)
			}
		}
	}
	db := openRO(t, path)
	walks := queryInt(t, db, `SELECT count(*) FROM sync_walks WHERE outcome = 'complete'`)
	finishedBySuccess := queryInt(t, db, `SELECT count(*) FROM sync_walks w JOIN sync_runs r ON r.run_id = w.finished_run
		WHERE w.outcome = 'complete' AND r.status = 'succeeded'`)
	succeeded := queryInt(t, db, `SELECT count(*) FROM sync_runs WHERE status = 'succeeded'`)
	if walks != finishedBySuccess || succeeded != walks {
		t.Errorf("%d complete walks, %d of them finished by a succeeded run; %d succeeded runs", walks, finishedBySuccess, succeeded)
	}
	return runs
}

// TestSIGTERMServe stops the daemon with SIGTERM in the middle of its
// start-up walk: it must exit 0 (serve.wait fails the test past 30 s, the
// unit's TimeoutStopSec; the latency is logged, not asserted: machines are
// shared and noisy), record the run as interrupted
// and keep the checkpoint; a backfill then resumes from that checkpoint and
// the warehouse equals the simulator.
func TestSIGTERMServe(t *testing.T) {
	// 100 pages at 40 a second: the first batch commits after 1 s and the
	// signal comes while the walk has more than a second to go.
	const cards = 1500
	up := newUpstream(t, sim.Options{Seed: 21, Cards: cards, Limit: 5000})
	d := newDeployment(t, up)
	// 40 requests/s: a walk of 100 pages takes about 2.5 s.
	d.env["CARDSYNC_API_RATE_LIMIT"] = "40/1s"
	d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
	serve := d.startBG("serve")
	w := newROWatch(t, d.db)
	waitPages(t, w, 3, serve)

	sent := time.Now()
	if err := serve.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := serve.wait(t, 30*time.Second)
	latency := time.Since(sent)
	t.Logf("serve exited %d, %s after SIGTERM", code, latency.Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("serve exit code %d, want 0\nstderr:\n%s", code, lastLines(serve.stderr.String()))
	}
	if !strings.Contains(serve.stderr.String(), "stopped cleanly") {
		t.Errorf("serve did not log a clean stop:\n%s", lastLines(serve.stderr.String()))
	}

	assertStructural(t, d.db)
	assertCheckpointMatchesRows(t, d.db)
	runs := syncRuns(t, d.db)
	if len(runs) != 1 || runs[0].status != "interrupted" || runs[0].trigger != "schedule" ||
		!strings.HasPrefix(runs[0].errText, "interrupted:") || !runs[0].ended {
		t.Fatalf("runs after SIGTERM = %v, want one finished schedule run, interrupted", runs)
	}
	next, open := cardsCheckpoint(t, d.db)
	if next <= 1 || !open || int(next) > cards/15 {
		t.Fatalf("checkpoint after SIGTERM: next page %d, walk open %v; want a kept mid-walk checkpoint", next, open)
	}
	if committed := runs[0].pages; committed != next-1 {
		t.Errorf("interrupted run recorded %d pages, checkpoint says %d committed", committed, next-1)
	}

	d.env["CARDSYNC_API_RATE_LIMIT"] = "1000/1s"
	code, stdout, stderr := d.run("backfill")
	if code != 0 {
		t.Fatalf("backfill after SIGTERM: exit %d\n%s\n%s", code, stdout, lastLines(stderr))
	}
	if got := resumedAtPage(stdout); got != next {
		t.Errorf("backfill resumed at page %d, want the checkpoint's %d; stdout:\n%s", got, next, stdout)
	}
	assertTruth(t, up, d.db)
	assertRunHistory(t, d.db)
	// The page in flight when the signal came may have been served but
	// not received; nothing else is fetched twice.
	if n := extraFetches(up.Stats()); n > 1 {
		t.Errorf("%d pages fetched twice across one SIGTERM, want <= 1", n)
	}
}

// TestSIGTERMBackfill stops a backfill with SIGTERM, SIGINT (Ctrl-C) or
// SIGHUP mid-walk: exit code 130, the run interrupted, the checkpoint kept;
// the next backfill resumes.
func TestSIGTERMBackfill(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) { testSignalBackfill(t, sig) })
	}
}

func testSignalBackfill(t *testing.T, sig syscall.Signal) {
	// 100 pages at 40 a second: the first batch commits after 1 s and the
	// signal comes while the walk has more than a second to go.
	const cards = 1500
	up := newUpstream(t, sim.Options{Seed: 22, Cards: cards, Limit: 5000})
	d := newDeployment(t, up)
	d.env["CARDSYNC_API_RATE_LIMIT"] = "40/1s"
	bf := d.startBG("backfill")
	waitPages(t, newROWatch(t, d.db), 3, bf)
	sent := time.Now()
	if err := bf.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	code := bf.wait(t, 30*time.Second)
	t.Logf("backfill exited %d, %s after %v", code, time.Since(sent).Round(time.Millisecond), sig)
	if code != 130 {
		t.Fatalf("backfill exit code %d, want 130 (interrupted)\nstderr:\n%s", code, lastLines(bf.stderr.String()))
	}
	if !strings.Contains(bf.stderr.String(), "interrupted") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", lastLines(bf.stderr.String()))
	}
	assertStructural(t, d.db)
	assertCheckpointMatchesRows(t, d.db)
	runs := syncRuns(t, d.db)
	if len(runs) != 1 || runs[0].status != "interrupted" || runs[0].trigger != "backfill" {
		t.Fatalf("runs after %v = %v, want one backfill run, interrupted", sig, runs)
	}
	next, open := cardsCheckpoint(t, d.db)
	if next <= 1 || !open {
		t.Fatalf("checkpoint after %v: next page %d, walk open %v", sig, next, open)
	}
	d.env["CARDSYNC_API_RATE_LIMIT"] = "1000/1s"
	code, stdout, stderr := d.run("backfill")
	if code != 0 {
		t.Fatalf("second backfill: exit %d\n%s\n%s", code, stdout, lastLines(stderr))
	}
	if got := resumedAtPage(stdout); got != next {
		t.Errorf("backfill resumed at page %d, want %d", got, next)
	}
	assertTruth(t, up, d.db)
	assertRunHistory(t, d.db)
}

// TestTwoWriters starts a second sync while a slow one holds the writer
// lock: exactly one writes; the other backfill exits 4 naming the holder's
// pid, and a daemon skips its run instead of overlapping.
func TestTwoWriters(t *testing.T) { testTwoWriters(t, toSQLite) }

// testTwoWriters is TestTwoWriters on dest. With PostgreSQL the lock is the
// account's lease, its holder hostname:pid.
func testTwoWriters(t *testing.T, dest destination) {
	// A slow first sync (20 requests/s: about 3 s for 60 pages, its first
	// batch of pages committed after 1 s) so the second certainly starts
	// while it holds the lock.
	const cards = 900
	const slow = "20/1s"

	t.Run("backfill+backfill", func(t *testing.T) {
		up := newUpstream(t, sim.Options{Seed: 31, Cards: cards, Limit: 5000})
		d := newDeploymentTo(t, up, dest)
		d.env["CARDSYNC_API_RATE_LIMIT"] = slow
		first := d.startBG("backfill")
		waitPages(t, newROWatch(t, d.db), 1, first)
		code, stdout, stderr := d.run("backfill")
		assertLockedOut(t, dest, code, stderr, first)
		if first.exited() {
			t.Fatal("the first backfill finished before the second was refused: the overlap was not real")
		}
		if strings.Contains(stdout, "run ") {
			t.Errorf("refused backfill printed a run summary: %s", stdout)
		}
		if code := first.wait(t, time.Minute); code != 0 {
			t.Fatalf("first backfill exit %d\n%s", code, lastLines(first.stderr.String()))
		}
		assertTruth(t, up, d.db)
		if runs := assertRunHistory(t, d.db); len(runs) != 1 || runs[0].status != "succeeded" {
			t.Errorf("runs = %v, want exactly one, succeeded", runs)
		}
	})

	t.Run("serve+backfill", func(t *testing.T) {
		up := newUpstream(t, sim.Options{Seed: 32, Cards: cards, Limit: 5000})
		d := newDeploymentTo(t, up, dest)
		d.env["CARDSYNC_API_RATE_LIMIT"] = slow
		d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
		serve := d.startBG("serve")
		w := newROWatch(t, d.db)
		waitPages(t, w, 1, serve)
		code, _, stderr := d.run("backfill")
		assertLockedOut(t, dest, code, stderr, serve)
		pollUntil(t, time.Minute, "the daemon's run to succeed", func() bool {
			n, ok := w.int(`SELECT count(*) FROM sync_runs WHERE status = 'succeeded'`)
			return ok && n == 1
		}, serve)
		stopDaemon(t, serve)
		assertTruth(t, up, d.db)
		if runs := assertRunHistory(t, d.db); len(runs) != 1 || runs[0].trigger != "schedule" {
			t.Errorf("runs = %v, want exactly one schedule run", runs)
		}
	})

	t.Run("backfill+serve", func(t *testing.T) {
		up := newUpstream(t, sim.Options{Seed: 33, Cards: cards, Limit: 5000})
		d := newDeploymentTo(t, up, dest)
		d.env["CARDSYNC_API_RATE_LIMIT"] = slow
		d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
		bf := d.startBG("backfill")
		waitPages(t, newROWatch(t, d.db), 1, bf)
		// The daemon's start-up run finds the lock taken and skips; the
		// daemon itself keeps serving (the next schedule tick will run).
		skipped := "run skipped: another sync holds the warehouse"
		if dest == toPostgres {
			// Replicas meet held leases every tick: said at debug.
			d.env["CARDSYNC_LOG_LEVEL"] = "debug"
			skipped = "run skipped: another replica holds the account's lease"
		}
		serve := d.startBG("serve")
		pollUntil(t, 20*time.Second, "the daemon to skip its run", func() bool {
			return strings.Contains(stderrSoFar(serve), skipped)
		}, serve, bf)
		if code := bf.wait(t, time.Minute); code != 0 {
			t.Fatalf("backfill exit %d\n%s", code, lastLines(bf.stderr.String()))
		}
		stopDaemon(t, serve)
		if !strings.Contains(serve.stderr.String(), lockHolder(t, dest, bf)) {
			t.Errorf("the daemon's skip does not name the backfill (%s):\n%s", lockHolder(t, dest, bf), lastLines(serve.stderr.String()))
		}
		assertTruth(t, up, d.db)
		if runs := assertRunHistory(t, d.db); len(runs) != 1 || runs[0].trigger != "backfill" {
			t.Errorf("runs = %v, want exactly one backfill run", runs)
		}
	})
}

// stderrSoFar reads a running process's stderr under its writer's lock.
func stderrSoFar(p *bgProc) string {
	lw := p.cmd.Stderr.(*lockedWriter)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.String()
}

// assertLockedOut checks that a second sync was refused with exit code 4
// and the README's message naming the holder: "sync in progress (pid N)",
// or with PostgreSQL "lease held by HOLDER until …".
func assertLockedOut(t *testing.T, dest destination, code int, stderr string, holder *bgProc) {
	t.Helper()
	if code != 4 {
		t.Fatalf("second sync exit code %d, want 4 (locked)\nstderr:\n%s", code, lastLines(stderr))
	}
	want := lockHolder(t, dest, holder)
	if dest == toPostgres {
		want = "lease held by " + want + " until"
	}
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, lastLines(stderr))
	}
}

// lockHolder is how a refusal names the process holding the lock: "sync in
// progress (pid N)" for a SQLite file lock, the lease's holder with
// PostgreSQL: the default holder, the host name and the process's random
// instance id, as the process logs it (its run's start line).
func lockHolder(t *testing.T, dest destination, holder *bgProc) string {
	t.Helper()
	if dest != toPostgres {
		return fmt.Sprintf("sync in progress (pid %d)", holder.cmd.Process.Pid)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(regexp.QuoteMeta(host) + `-[0-9a-f]{6}`).FindString(holder.stderr.String())
	if m == "" {
		t.Fatalf("the process does not log its holder (%s-…):\n%s", host, lastLines(holder.stderr.String()))
	}
	return m
}

// stopDaemon sends SIGTERM to a daemon and expects a clean exit 0.
func stopDaemon(t *testing.T, serve *bgProc) time.Duration {
	t.Helper()
	sent := time.Now()
	if err := serve.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := serve.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("serve exit %d after SIGTERM\n%s", code, lastLines(serve.stderr.String()))
	}
	return time.Since(sent)
}

var runDurationRE = regexp.MustCompile(`run \d+ succeeded in (\S+):`)
