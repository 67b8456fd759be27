package e2e

import (
	"context"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// killScenario is one run of testSIGKILLResume.
type killScenario struct {
	dest        destination
	commitDelay string // warehouse.commit_delay
	maxPerKill  int64  // pages fetched twice per kill, at most
	kills       int
	cards       int
	// leaseTTL, for PostgreSQL, is [cluster] lease_ttl: a killed backfill
	// keeps its account's lease until it expires, and a backfill started
	// before then is refused (exit 4) and started again once it has.
	leaseTTL string
}

func testSIGKILLResume(t *testing.T, sc killScenario) {
	up := newUpstream(t, sim.Options{Seed: 11, Cards: sc.cards, Limit: 5000})
	d := newDeploymentTo(t, up, sc.dest)
	// A paced walk (80 pages/s, so about 2.5 s for 3,000 cards) long
	// enough to be killed 20 times mid-way.
	d.env["CARDSYNC_API_RATE_LIMIT"] = "80/1s"
	d.env["CARDSYNC_WAREHOUSE_COMMIT_DELAY"] = sc.commitDelay
	if sc.leaseTTL != "" {
		d.env["CARDSYNC_CLUSTER_LEASE_TTL"] = sc.leaseTTL
	}
	rng := rand.New(rand.NewPCG(7, 11))
	killed, rounds, refused, midWalk := 0, 0, 0, 0
	// Kills land 60-200 ms after a start, times slower: on a loaded machine a
	// start can take longer than that (PostgreSQL's migrations), and a kill
	// before the first commit resumes nothing, so each such kill doubles
	// the wait (up to 16 times) and each kill after a commit halves it.
	slower := 1
	// tablesSeen: a kill found the warehouse's tables, so start-up is no
	// longer what a kill may land in.
	tablesSeen := false
	for {
		rounds++
		if rounds > sc.kills+10 {
			t.Fatalf("backfill did not complete after %d rounds", rounds)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		cmd, _, stderr := d.command(ctx, "backfill")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var timer <-chan time.Time
		switch {
		case killed < sc.kills && midWalk == 0 && (tablesSeen || killed == sc.kills-1):
			// No kill came after a committed page yet, and start-up is
			// over (or this is the last kill): a timer may miss the walk
			// both ways on a busy machine (too early, then, doubled, after
			// a walk of under a second ended), so this kill waits for a
			// page of this round to commit: the run always has a walk to
			// resume.
			timer = afterNextCommit(ctx, t, d.db)
		case killed < sc.kills:
			timer = time.After(time.Duration(slower*(60+rng.IntN(140))) * time.Millisecond)
		}
		select {
		case err := <-done:
			cancel()
			if sc.leaseTTL != "" && killed > 0 && cmd.ProcessState.ExitCode() == 4 && refused < killed {
				// The last killed backfill's lease has not expired yet.
				refused++
				rounds--
				waitLeasesExpired(t, d.db)
				continue
			}
			if err != nil {
				t.Fatalf("backfill failed in round %d: %v\n%s", rounds, err, stderr)
			}
			if killed < sc.kills {
				t.Logf("round %d finished the walk before its kill", rounds)
			}
		case <-timer:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			cancel()
			killed++
			if !schemaReady(t, d.db) {
				t.Logf("kill %d came before the warehouse had its tables", killed)
				slower = min(16, 2*slower)
				continue
			}
			tablesSeen = true
			assertStructural(t, d.db)
			if assertCheckpointMatchesRows(t, d.db) > 1 {
				midWalk++
				slower = max(1, slower/2)
			} else {
				slower = min(16, 2*slower)
			}
			continue
		}
		break
	}
	// With commit_delay 0 the first page commits at once, so kills land
	// after it; with a delay they may all come before the first batch.
	t.Logf("%d of %d kills came after a committed page", midWalk, killed)
	if midWalk == 0 && sc.commitDelay == "0" {
		t.Errorf("none of the %d kills came after a committed page: nothing was resumed", killed)
	}
	if refused > 0 {
		t.Logf("%d backfills refused while a killed one's lease was live", refused)
	}
	assertTruth(t, up, d.db)
	refetched := extraFetches(up.Stats())
	t.Logf("%d kills, %d rounds, %d pages fetched twice", killed, rounds, refetched)
	if refetched > int64(killed)*sc.maxPerKill {
		t.Errorf("%d pages fetched twice, more than %d for each of the %d kills", refetched, sc.maxPerKill, killed)
	}
	checkKilledRuns(t, d, up, killed)
}

// checkKilledRuns checks the warehouse after killed backfills and the one
// that completed: one version per card, every run a kill left behind
// marked abandoned, one succeeded.
func checkKilledRuns(t *testing.T, d *deployment, up *upstream, killed int) {
	t.Helper()
	db := openRO(t, d.db)
	// Nothing changed upstream: every card has exactly one version, the
	// one its first commit wrote, however often its page was refetched.
	if n, want := queryInt(t, db, `SELECT count(*) FROM card_versions`), int64(len(up.Cards())); n != want {
		t.Errorf("%d card versions for %d cards: a refetched page doubled versions", n, want)
	}
	// A kill during start-up may come before the run row exists; every
	// run row a kill left behind must have been marked abandoned.
	abandoned := queryInt(t, db, `SELECT count(*) FROM sync_runs WHERE status = 'abandoned'`)
	if running := queryInt(t, db, `SELECT count(*) FROM sync_runs WHERE status = 'running'`); running != 0 {
		t.Errorf("%d runs still marked running", running)
	}
	if succeeded := queryInt(t, db, `SELECT count(*) FROM sync_runs WHERE status = 'succeeded'`); succeeded != 1 {
		t.Errorf("%d succeeded runs, want 1", succeeded)
	}
	if total := queryInt(t, db, `SELECT count(*) FROM sync_runs`); abandoned > int64(killed) || total != abandoned+1 {
		rows, _ := db.Query(`SELECT run_id, status, coalesce(error,'') FROM sync_runs`)
		for rows.Next() {
			var id int
			var st, e string
			rows.Scan(&id, &st, &e)
			t.Logf("run %d %s %s", id, st, e)
		}
		rows.Close()
		t.Errorf("%d runs, %d abandoned after %d kills", total, abandoned, killed)
	}
}

// schemaReady reports whether a warehouse has the tables the checks read: a
// process killed while it opened the warehouse may leave no file, or one
// without them (each migration is one transaction).
func schemaReady(t *testing.T, where string) bool {
	t.Helper()
	q := `SELECT count(*) FROM sqlite_master WHERE name IN ('cards', 'card_versions', 'sync_runs', 'sync_checkpoints')`
	if isPostgres(where) {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'
			AND table_name IN ('cards', 'card_versions', 'sync_runs', 'sync_checkpoints')`
	} else if _, err := os.Stat(where); err != nil {
		return false
	}
	return queryInt(t, openRO(t, where), q) == 4
}

// waitLeasesExpired waits until no lease of a PostgreSQL warehouse is live
// by the server's clock.
func waitLeasesExpired(t *testing.T, where string) {
	t.Helper()
	w := newROWatch(t, where)
	pollUntil(t, 2*time.Minute, "the killed backfill's lease to expire", func() bool {
		n, ok := w.int(`SELECT count(*) FROM sync_leases WHERE expires_at > now()`)
		return ok && n == 0
	})
}

// assertCheckpointMatchesRows checks page atomicity during the first walk
// of full 15-card pages: the cards stored are exactly 15 per committed page.
// It returns the checkpoint's next page (0: none yet).
func assertCheckpointMatchesRows(t *testing.T, path string) int64 {
	t.Helper()
	db := openRO(t, path)
	var next int64
	_ = db.QueryRow(`SELECT next_page FROM sync_checkpoints WHERE stream = 'cards'`).Scan(&next)
	cards := queryInt(t, db, `SELECT count(*) FROM cards`)
	if next == 0 {
		if cards != 0 {
			t.Errorf("no checkpoint but %d cards stored", cards)
		}
		return 0
	}
	if want := 15 * (next - 1); cards != want {
		t.Errorf("checkpoint next_page %d means %d cards committed, found %d", next, want, cards)
	}
	return next
}

// afterNextCommit returns a channel that fires once the cards checkpoint of
// the warehouse at where moves past where it is now (a page committed), or
// never once ctx (the round's) ends.
func afterNextCommit(ctx context.Context, t *testing.T, where string) <-chan time.Time {
	t.Helper()
	next := func(w *roWatch) int64 {
		n, _ := w.int(`SELECT coalesce(max(next_page), 0) FROM sync_checkpoints WHERE stream = 'cards'`)
		return n
	}
	w := newROWatch(t, where)
	from := next(w)
	fire := make(chan time.Time, 1)
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				if next(w) > from {
					fire <- now
					return
				}
			}
		}
	}()
	return fire
}
