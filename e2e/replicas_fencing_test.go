//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReplicaDuplicateHolderRefused: a second `cardsync serve` given the
// [cluster] holder of a live one is refused at start with exit 4, naming
// the holder and both processes' instance ids; the first goes on.
func TestReplicaDuplicateHolderRefused(t *testing.T) {
	s := newReplicaSetup(t, []string{"c1"}, 3*time.Second)
	s.d.env["CARDSYNC_CLUSTER_HOLDER"] = "same-holder"
	first, _ := s.serveReplica(t)
	var instance string
	pollUntil(t, 30*time.Second, "the first replica joined", func() bool {
		_, instance = replicaHolder(first)
		return instance != ""
	}, first)
	s.d.env["CARDSYNC_METRICS_LISTEN"] = freeAddr(t)
	code, _, stderr := s.d.run("serve")
	if code != 4 {
		t.Fatalf("second serve with the same holder: exit %d, want 4\n%s", code, lastLines(stderr))
	}
	for _, want := range []string{"same-holder", "is in use by another live process", "instance " + instance, "this process is instance "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, lastLines(stderr))
		}
	}
	if first.exited() {
		t.Fatalf("the first replica exited:\n%s", lastLines(first.stderr.String()))
	}
	pollUntil(t, 30*time.Second, "a successful run by the first replica", func() bool {
		return pgInt(t, s.db, `SELECT count(*) FROM sync_runs WHERE status = 'succeeded' AND holder = 'same-holder'`) > 0
	}, first)
	stopDaemon(t, first)
}

// TestReplicaSameHolderPausedIsFenced: a serve paused mid-walk, and a
// second serve started with the same [cluster] holder meanwhile: the
// second waits for the first's lease to lapse and takes it with a new
// fencing token (a lease belongs to the process that took it, not to the
// name), and the first, continued, writes nothing more and stops (exit 4),
// naming the other process. Found by a review: both shared one token and
// the paused one's commit moved the checkpoint back.
func TestReplicaSameHolderPausedIsFenced(t *testing.T) {
	const ttl = 3 * time.Second
	s := newReplicaSetup(t, []string{"c1"}, ttl)
	cfg := filepath.Join(s.d.dir, "c.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Four pages at one request a second: a walk of several seconds.
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `rate_limit = "1000/1s"`, `rate_limit = "1/1s"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	s.d.env["CARDSYNC_CLUSTER_HOLDER"] = "same-holder"
	first, _ := s.serveReplica(t)
	var run int64
	pollUntil(t, 30*time.Second, "the first serve walking c1", func() bool {
		if l := pgLeases(t, s.db)["c1"]; !l.live {
			return false // not migrated, or not taken yet
		}
		run = pgInt(t, s.db, `SELECT coalesce(max(run_id), 0) FROM sync_runs WHERE status = 'running' AND pages > 0`)
		return run > 0
	}, first)
	if err := first.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	token := pgLeases(t, s.db)["c1"].token
	second, _ := s.serveReplica(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("first serve:\n%s\nsecond serve:\n%s", lastLines(first.stderr.String()), lastLines(second.stderr.String()))
			rows, err := s.db.Query(context.Background(), `SELECT pid, state, coalesce(wait_event_type,''), coalesce(wait_event,''), left(query, 200), now() - state_change FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
			if err == nil {
				for rows.Next() {
					var pid int
					var st, wt, we, q string
					var age time.Duration
					if rows.Scan(&pid, &st, &wt, &we, &q, &age) == nil {
						t.Logf("backend %d %s %s/%s for %s: %s", pid, st, wt, we, age, q)
					}
				}
				rows.Close()
			}
		}
	})
	pollUntil(t, 30*time.Second, "the second serve taking c1 with a new fencing token", func() bool {
		l := pgLeases(t, s.db)["c1"]
		return l.live && l.token > token
	}, second)
	pollUntil(t, 30*time.Second, "the paused run marked abandoned", func() bool {
		return pgInt(t, s.db, `SELECT count(*) FROM sync_runs WHERE run_id = $1 AND status = 'abandoned'`, run) == 1
	}, second)
	pages := pgInt(t, s.db, `SELECT pages FROM sync_runs WHERE run_id = $1`, run)
	if err := first.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := first.wait(t, 30*time.Second); code != 4 {
		t.Errorf("the continued first serve: exit %d, want 4\n%s", code, lastLines(first.stderr.String()))
	}
	if !strings.Contains(first.stderr.String(), "this process stops") {
		t.Errorf("the first serve does not say why it stops:\n%s", lastLines(first.stderr.String()))
	}
	if got := pgInt(t, s.db, `SELECT pages FROM sync_runs WHERE run_id = $1`, run); got != pages {
		t.Errorf("the paused run's pages went from %d to %d after the take-over: a fenced replica wrote", pages, got)
	}
	if n := pgInt(t, s.db, `SELECT count(*) FROM sync_runs WHERE run_id = $1 AND status = 'abandoned'`, run); n != 1 {
		t.Errorf("the paused run is no longer abandoned")
	}
	before := pgInt(t, s.db, `SELECT count(*) FROM sync_runs WHERE status = 'succeeded'`)
	pollUntil(t, 60*time.Second, "a successful run by the second serve", func() bool {
		return pgInt(t, s.db, `SELECT count(*) FROM sync_runs WHERE status = 'succeeded'`) > before
	}, second)
	stopDaemon(t, second)
	assertPostgresTruth(t, s.db, s.ups["c1"].Server, "c1")
}
