//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// countRuns counts sync_runs rows, or -1 while the warehouse is not there.
func countRuns(t *testing.T, path, where string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return -1
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`SELECT count(*) FROM sync_runs ` + where).Scan(&n); err != nil {
		return -1
	}
	return n
}

// TestReadOnlyWarehouseIsLoud: a root backfill creates the warehouse, so the
// daemon, started as the non-root service user, can only read it (SQLite
// opens such a file read-only without a word). Every scheduled run then
// logs an error line with the cause, `status` turns unhealthy (overdue) and
// `check` fails; once the files are given back to the service user, the
// next run opens the file read-write and succeeds without a restart. With
// the files made 0600 the daemon cannot even open the file to take the
// writer lock: it exits 6 at start with an error line naming the cause (so
// systemd restarts it), and `status` and `check` exit 6 too.
func TestReadOnlyWarehouseIsLoud(t *testing.T) {
	requireRoot(t)
	for _, tt := range []struct {
		name string
		mode os.FileMode // given to the root-owned files; 0 keeps 0640
		// cause is in the error line and check's output.
		cause, recovered string
	}{
		{name: "read-only", cause: "not writable", recovered: "reopened read-write"},
		{name: "lock cannot be opened", mode: 0o600, cause: "permission denied"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			testUnwritableWarehouseIsLoud(t, tt.mode, tt.cause, tt.recovered)
		})
	}
}

func testUnwritableWarehouseIsLoud(t *testing.T, mode os.FileMode, cause, recovered string) {
	up := newUpstream(t, sim.Options{Seed: 71, Cards: 40})
	d := newDeployment(t, up)
	d.asService(t)
	cred := d.cred
	d.cred = nil // root
	d.backfillOK(t)
	d.cred = cred
	files := []string{d.db, d.db + "-wal", d.db + "-shm"}
	if mode != 0 {
		for _, f := range files {
			if err := os.Chmod(f, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1s"
	d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
	d.env["CARDSYNC_LOG_LEVEL"] = "info"
	if mode != 0 {
		code, _, stderr := d.run("serve")
		if code != 6 || !strings.Contains(stderr, `"level":"ERROR","msg":"cannot start: `) || !strings.Contains(stderr, cause) {
			t.Errorf("serve with a warehouse it cannot open: exit %d, want 6 and an error line naming %q:\n%s", code, cause, lastLines(stderr))
		}
	}
	serve := d.startBG("serve")
	defer func() {
		if t.Failed() {
			t.Log(lastLines(stderrSoFar(serve)))
		}
	}()
	if mode == 0 {
		pollUntil(t, 30*time.Second, "three runs that could not start", func() bool {
			return strings.Count(stderrSoFar(serve), "run could not start") >= 3
		}, serve)
		lines := stderrSoFar(serve)
		if !strings.Contains(lines, `"level":"ERROR","msg":"run could not start: `) || !strings.Contains(lines, cause) {
			t.Errorf("no error line naming the cause (%s):\n%s", cause, lastLines(lines))
		}
		time.Sleep(3 * time.Second) // two whole schedule slots with no run recorded
	} else if code := serve.wait(t, 30*time.Second); code != 6 {
		t.Fatalf("serve exit %d, want 6", code)
	}
	code, out, errOut := d.run("status")
	if mode == 0 && (code != 1 || !strings.HasPrefix(out, "UNHEALTHY: ") || !strings.Contains(out, "overdue: the schedule expected a run")) {
		t.Errorf("status exit %d, want 1, unhealthy and overdue:\n%s%s", code, out, errOut)
	}
	if mode != 0 && code != 6 {
		t.Errorf("status of a warehouse it cannot read: exit %d, want 6:\n%s%s", code, out, errOut)
	}
	if code, out, errOut := d.run("check"); code != 6 || !strings.Contains(out+errOut, cause) {
		t.Errorf("check exit %d, want 6 and %q:\n%s%s", code, cause, out, errOut)
	}
	for _, f := range files {
		if err := os.Chown(f, serviceUID, serviceGID); err != nil {
			t.Fatal(err)
		}
	}
	if mode != 0 {
		serve = d.startBG("serve") // as systemd's Restart=on-failure would
	}
	ok := countRuns(t, d.db, `WHERE status = 'succeeded'`)
	pollUntil(t, 30*time.Second, "a successful run after the fix, without a restart", func() bool {
		return countRuns(t, d.db, `WHERE status = 'succeeded'`) > ok
	}, serve)
	if recovered != "" && !strings.Contains(stderrSoFar(serve), recovered) {
		t.Errorf("no line says %q:\n%s", recovered, lastLines(stderrSoFar(serve)))
	}
	stopDaemon(t, serve)
	if code, out, _ := d.run("status"); code != 0 {
		t.Errorf("status after recovery: exit %d\n%s", code, out)
	}
	assertTruth(t, up, d.db)
}

// TestWarehouseDeletedWhileServing deletes the warehouse under a running
// daemon: the next run says so at error level, writes the open database
// back, and goes on; after the stop every run and card is in the file.
func TestWarehouseDeletedWhileServing(t *testing.T) {
	for _, what := range []string{"the database file", "the database, -wal and -shm"} {
		t.Run(what, func(t *testing.T) {
			up := newUpstream(t, sim.Options{Seed: 72, Cards: 60})
			d := newDeployment(t, up)
			d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1s"
			d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
			d.env["CARDSYNC_LOG_LEVEL"] = "info"
			serve := d.startBG("serve")
			pollUntil(t, 30*time.Second, "two successful runs", func() bool { return countRuns(t, d.db, `WHERE status = 'succeeded'`) >= 2 }, serve)
			up.UpdateCard(up.Cards()[3].ID)
			remove := []string{d.db}
			if strings.Contains(what, "-wal") {
				remove = append(remove, d.db+"-wal", d.db+"-shm")
			}
			for _, f := range remove {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
			pollUntil(t, 30*time.Second, "the write-back and two more runs", func() bool {
				return strings.Contains(stderrSoFar(serve), "written back") && countRuns(t, d.db, `WHERE status = 'succeeded'`) >= 4
			}, serve)
			stopDaemon(t, serve)
			lines := stderrSoFar(serve)
			if !strings.Contains(lines, `"level":"ERROR","msg":"the warehouse file was deleted while cardsync had it open; the open database was written back`) {
				t.Errorf("no error line for the deletion:\n%s", lastLines(lines))
			}
			db := openRO(t, d.db)
			if first := queryInt(t, db, `SELECT min(run_id) FROM sync_runs`); first != 1 {
				t.Errorf("the history lost its first runs (first run id %d)", first)
			}
			if n := queryInt(t, db, `SELECT count(*) FROM sync_runs WHERE status = 'running'`); n != 0 {
				t.Errorf("%d runs left running after a clean stop", n)
			}
			assertTruth(t, up, d.db)
		})
	}
}

// TestSIGHUPReloads edits the config file under a running daemon and sends
// SIGHUP: the new schedule and log level apply from the next run; an
// invalid file keeps the running configuration and logs why; SIGHUP never
// leaves a run marked running; SIGTERM still stops cleanly.
func TestSIGHUPReloads(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 73, Cards: 30})
	d := newDeployment(t, up)
	cfg := filepath.Join(d.dir, "cardsync.toml")
	write := func(body string) {
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	delete(d.env, "CARDSYNC_LOG_LEVEL")
	write("[schedule]\ncron = \"@every 1h\"\nrun_on_start = true\n[log]\nlevel = \"info\"\n")
	serve := d.startBG("serve", "-config", cfg)
	pollUntil(t, 30*time.Second, "the start-up run", func() bool { return countRuns(t, d.db, `WHERE status = 'succeeded'`) == 1 }, serve)
	write("[schedule]\ncron = \"@every 1s\"\nrun_on_start = true\n[log]\nlevel = \"debug\"\n")
	if err := serve.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 30*time.Second, "runs on the reloaded schedule", func() bool { return countRuns(t, d.db, `WHERE status = 'succeeded'`) >= 3 }, serve)
	lines := stderrSoFar(serve)
	// healthy_within follows the schedule when not set, so it changes too.
	if !regexp.MustCompile(`"msg":"configuration reloaded","changes":"schedule.cron, log(, metrics.healthy_within)?"`).MatchString(lines) {
		t.Errorf("no reload line naming the changes:\n%s", lastLines(lines))
	}
	if !strings.Contains(lines, `"level":"DEBUG"`) {
		t.Errorf("the reloaded log level did not apply:\n%s", lastLines(lines))
	}
	write("[schedule]\ncron = \"61 * * * *\"\n")
	if err := serve.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 30*time.Second, "the failed reload to be logged", func() bool {
		return strings.Contains(stderrSoFar(serve), `"msg":"reload failed; the current configuration stays in use"`)
	}, serve)
	if !strings.Contains(stderrSoFar(serve), "cardsync.toml:2") {
		t.Errorf("the failed reload does not name the file and line:\n%s", lastLines(stderrSoFar(serve)))
	}
	n := countRuns(t, d.db, `WHERE status = 'succeeded'`)
	pollUntil(t, 30*time.Second, "runs going on after the failed reload", func() bool { return countRuns(t, d.db, `WHERE status = 'succeeded'`) >= n+2 }, serve)
	stopDaemon(t, serve)
	if n := countRuns(t, d.db, `WHERE status = 'running'`); n != 0 {
		t.Errorf("%d runs left running", n)
	}
}

// TestSIGHUPKeepsSchedule: a config tool that reloads more often than the
// schedule runs never starves the runs: a reload that leaves the schedule
// alone keeps the next run where it was.
func TestSIGHUPKeepsSchedule(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 75, Cards: 15})
	d := newDeployment(t, up)
	cfg := filepath.Join(d.dir, "cardsync.toml")
	delete(d.env, "CARDSYNC_LOG_LEVEL")
	levels := []string{"info", "debug"}
	write := func(level string) {
		body := "[schedule]\ncron = \"@every 3s\"\n[log]\nlevel = \"" + level + "\"\n"
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("info")
	serve := d.startBG("serve", "-config", cfg)
	pollUntil(t, 30*time.Second, "the daemon to start", func() bool {
		return strings.Contains(stderrSoFar(serve), "cardsync serving")
	}, serve)
	// A reload every second (the log level flips) for 10 seconds.
	for i := range 10 {
		time.Sleep(time.Second)
		write(levels[i%2])
		if err := serve.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	if n := countRuns(t, d.db, `WHERE status = 'succeeded'`); n < 2 {
		t.Errorf("%d runs in 10 s of @every 3s with a reload every second, want at least 2:\n%s", n, lastLines(stderrSoFar(serve)))
	}
	if !strings.Contains(stderrSoFar(serve), `"schedule_kept":true`) {
		t.Errorf("no reload line says the schedule was kept:\n%s", lastLines(stderrSoFar(serve)))
	}
	stopDaemon(t, serve)
}

// TestJournalPriorities: with JOURNAL_STREAM naming stderr (as systemd sets
// it for a unit logging to the journal), every line starts with its syslog
// priority, so `journalctl -p err` shows failed runs; without it, output is
// unchanged.
func TestJournalPriorities(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 74, Cards: 30})
	d := newDeployment(t, up)
	run := func(journal bool, env map[string]string) []string {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd, _, _ := d.command(ctx, "backfill")
		cmd.Stderr = w
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		if journal {
			var st syscall.Stat_t
			if err := syscall.Fstat(int(w.Fd()), &st); err != nil {
				t.Fatal(err)
			}
			cmd.Env = append(cmd.Env, fmt.Sprintf("JOURNAL_STREAM=%d:%d", st.Dev, st.Ino))
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		var lines []string
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		_ = cmd.Wait()
		return lines
	}
	prio := regexp.MustCompile(`^<([0-7])>\{"time":.*"level":"([A-Z]+)"`)
	want := map[string]string{"DEBUG": "7", "INFO": "6", "WARN": "4", "ERROR": "3"}
	check := func(lines []string, wantLevels ...string) {
		t.Helper()
		seen := map[string]bool{}
		for _, l := range lines {
			m := prio.FindStringSubmatch(l)
			if m == nil || want[m[2]] != m[1] {
				t.Errorf("line without its priority prefix: %q", l)
				continue
			}
			seen[m[2]] = true
		}
		for _, lv := range wantLevels {
			if !seen[lv] {
				t.Errorf("no %s line seen in %d lines", lv, len(lines))
			}
		}
	}
	check(run(true, nil), "DEBUG", "INFO")
	check(run(true, map[string]string{"CARDSYNC_API_PASSWORD": "wrong"}), "ERROR")
	for _, l := range run(false, nil) {
		if strings.HasPrefix(l, "<") {
			t.Errorf("a prefix without JOURNAL_STREAM: %q", l)
		}
	}
}

// TestMaxWaitBoundsAFailingRun: with api.max_wait 3s and a server that is
// slow and failing, the run gives up within about max_wait plus one
// attempt, not several times over.
func TestMaxWaitBoundsAFailingRun(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 76, Cards: 30, Faults: []sim.Fault{
		{Endpoint: "cards", Kind: sim.FaultLatency, Latency: 700 * time.Millisecond},
		{Endpoint: "cards", Kind: sim.FaultStatus, Status: 503},
	}})
	d := newDeployment(t, up)
	d.env["CARDSYNC_API_MAX_WAIT"] = "3s"
	d.env["CARDSYNC_API_TIMEOUT"] = "2s"
	d.env["CARDSYNC_API_RATE_LIMIT"] = "2/1s"
	start := time.Now()
	code, _, errOut := d.run("backfill")
	spent := time.Since(start)
	if code != 5 {
		t.Fatalf("backfill exit %d, want 5\n%s", code, lastLines(errOut))
	}
	// 3s of max_wait + one 2s attempt + start-up; before the fix a run spent
	// max_wait in backoff alone, plus every attempt and pacing wait.
	if spent > 8*time.Second {
		t.Errorf("the failing run took %v with api.max_wait 3s", spent)
	}
	if !strings.Contains(errOut, "would pass api.max_wait") {
		t.Errorf("no error naming api.max_wait:\n%s", lastLines(errOut))
	}
}

// TestAnalystAfterManualReadWriteOpen: a root sqlite3 opening the warehouse
// read-write while the daemon is stopped removes -wal and -shm on close. A
// non-root analyst's `cardsync status` still reads it (immutable, nothing
// writes); `cardsync check` as the service user brings the files back, and
// the analyst's own sqlite3 mode=ro works again.
func TestAnalystAfterManualReadWriteOpen(t *testing.T) {
	requireRoot(t)
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Fatal("sqlite3 CLI not installed")
	}
	up := newUpstream(t, sim.Options{Seed: 77, Cards: 30})
	d := newDeployment(t, up)
	d.asService(t)
	d.backfillOK(t)
	if out, err := exec.Command(cli, d.db, "SELECT count(*) FROM cards").CombinedOutput(); err != nil {
		t.Fatalf("root sqlite3: %v %s", err, out)
	}
	if _, err := os.Stat(d.db + "-shm"); err == nil {
		t.Fatal("-shm still there after a plain read-write open: the scenario does not happen")
	}
	analyst := *d
	analyst.cred = &syscall.Credential{Uid: analystUID, Gid: analystUID, Groups: []uint32{serviceGID}}
	code, out, errOut := analyst.run("status")
	if code != 0 || !strings.Contains(out, "healthy") {
		t.Errorf("analyst status without -wal/-shm: exit %d\n%s%s", code, out, errOut)
	}
	ro := func() (string, error) {
		cmd := exec.Command(cli, "file:"+d.db+"?mode=ro", "SELECT count(*) FROM cards")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: analyst.cred}
		o, err := cmd.CombinedOutput()
		return string(o), err
	}
	if out, err := ro(); err == nil {
		t.Logf("analyst sqlite3 mode=ro worked without -shm (%s): nothing to fix on this SQLite", strings.TrimSpace(out))
	}
	if code, out, errOut := d.run("check"); code != 0 || !strings.Contains(out, "warehouse writable") {
		t.Fatalf("service check: exit %d\n%s%s", code, out, errOut)
	}
	for _, s := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(d.db + s); err != nil {
			t.Errorf("check did not bring %s back: %v", s, err)
		}
	}
	if out, err := ro(); err != nil || strings.TrimSpace(out) != "30" {
		t.Errorf("analyst sqlite3 mode=ro after check: %q, %v; want 30", out, err)
	}
}
