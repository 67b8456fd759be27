package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The binary in the background, and waiting on the warehouse it writes:
// shared by the smoke test and the full tier.

// watchEvery is how often the tests look at the warehouse (read-only) while
// the binary runs; every wait also has a deadline.
const watchEvery = 20 * time.Millisecond

// bgProc is the built binary running in the background.
type bgProc struct {
	cmd            *exec.Cmd
	stdout, stderr *lockedWriter
	done           chan struct{}
	err            error
}

// start starts the binary with args; t.Cleanup kills it if the test did
// not wait for it.
func (d *deployment) startBG(args ...string) *bgProc {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.t.Context(), 2*time.Minute)
	cmd, stdout, stderr := d.command(ctx, args...)
	if err := cmd.Start(); err != nil {
		cancel()
		d.t.Fatalf("start %v: %v", args, err)
	}
	p := &bgProc{cmd: cmd, stdout: stdout, stderr: stderr, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		cancel()
		close(p.done)
	}()
	d.t.Cleanup(func() {
		if !p.exited() {
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *bgProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to exit and returns its exit code (-1 when a
// signal ended it).
func (p *bgProc) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("%v still running after %s; killed\nstderr:\n%s", p.cmd.Args[1:], timeout, lastLines(p.stderr.String()))
	}
	return p.cmd.ProcessState.ExitCode()
}

// lastLines returns the last lines of a log, for failure messages.
func lastLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 25 {
		lines = lines[len(lines)-25:]
	}
	return strings.Join(lines, "\n")
}

// roWatch reads the warehouse read-only while a process writes it. It opens
// a SQLite file only once the writer has created its WAL; a PostgreSQL
// database at once (its tables may not exist yet).
type roWatch struct {
	t    *testing.T
	path string
	db   *sql.DB
}

func newROWatch(t *testing.T, path string) *roWatch { return &roWatch{t: t, path: path} }

// int runs a one-value query; ok is false while the warehouse or its
// tables do not exist yet.
func (w *roWatch) int(q string) (n int64, ok bool) {
	if w.db == nil {
		if _, err := os.Stat(w.path + "-wal"); err != nil && !isPostgres(w.path) {
			return 0, false
		}
		w.db = openRO(w.t, w.path)
	}
	var v sql.NullInt64
	if err := w.db.QueryRow(q).Scan(&v); err != nil {
		return 0, false
	}
	return v.Int64, true
}

// pollUntil polls cond every watchEvery pollUntil it holds. It fails the test at
// the deadline, or at once if one of the processes exits meanwhile.
func pollUntil(t *testing.T, timeout time.Duration, what string, cond func() bool, procs ...*bgProc) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for !cond() {
		for _, p := range procs {
			if p.exited() {
				t.Fatalf("waiting for %s: %v exited (%v)\nstdout:\n%s\nstderr:\n%s", what, p.cmd.Args[1:], p.err, p.stdout, lastLines(p.stderr.String()))
			}
		}
		if time.Now().After(deadline) {
			var logs strings.Builder
			for _, p := range procs {
				fmt.Fprintf(&logs, "\n%v stderr:\n%s\n", p.cmd.Args[1:], lastLines(p.stderr.String()))
			}
			t.Fatalf("timed out after %s waiting for %s%s", timeout, what, logs.String())
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("waiting for %s: %v", what, t.Context().Err())
		case <-tick.C:
		}
	}
}

// waitPages waits pollUntil the warehouse has at least n committed pages.
func waitPages(t *testing.T, w *roWatch, n int64, procs ...*bgProc) {
	t.Helper()
	pollUntil(t, 20*time.Second, fmt.Sprintf("%d committed pages", n), func() bool {
		got, ok := w.int(`SELECT count(*) FROM run_pages`)
		return ok && got >= n
	}, procs...)
}

// cardsCheckpoint returns the cards checkpoint's next page and whether a
// walk is open.
func cardsCheckpoint(t *testing.T, path string) (int64, bool) {
	t.Helper()
	db := openRO(t, path)
	var next int64
	if err := db.QueryRow(`SELECT next_page FROM sync_checkpoints WHERE stream = 'cards'`).Scan(&next); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	open := queryInt(t, db, `SELECT count(*) FROM sync_walks WHERE stream = 'cards' AND finished_at IS NULL`)
	return next, open == 1
}

// resumedAtPage returns the page a backfill's summary says it resumed at, or 0.
func resumedAtPage(stdout string) int64 {
	m := resumedPageRE.FindStringSubmatch(stdout)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

var resumedPageRE = regexp.MustCompile(`resumed an interrupted walk at page (\d+)`)
