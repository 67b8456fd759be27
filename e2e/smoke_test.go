package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// TestSmoke is the end-to-end tier of `go test ./...`: the binary built as
// released, against the simulator on loopback, through the life of one
// warehouse. A backfill is killed (SIGKILL) after some pages committed and
// a second one resumes at the checkpoint and ends equal to the simulator,
// no page fetched twice beyond the one in flight; `status` says healthy;
// `serve` runs once on start, picks up what changed upstream and stops
// cleanly on SIGTERM. The full proof suite (every fault, replicas,
// PostgreSQL kills, Chromium, packaging) is `go test -tags e2e ./e2e`.
func TestSmoke(t *testing.T) {
	const cards = 600 // 40 pages
	up := newUpstream(t, sim.Options{Seed: 5, Cards: cards, Limit: 5000})
	d := newDeployment(t, up)
	// 40 pages at 20 a second: two seconds of walk to be killed in, each
	// page committed at once.
	d.env["CARDSYNC_API_RATE_LIMIT"] = "20/1s"
	d.env["CARDSYNC_WAREHOUSE_COMMIT_DELAY"] = "0"

	t.Run("kill and resume", func(t *testing.T) {
		first := d.startBG("backfill")
		waitPages(t, newROWatch(t, d.db), 3, first)
		if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		first.wait(t, 30*time.Second)
		assertStructural(t, d.db)
		next, open := cardsCheckpoint(t, d.db)
		if next <= 1 || !open {
			t.Fatalf("checkpoint after SIGKILL: next page %d, walk open %v; want a kept mid-walk checkpoint", next, open)
		}
		if committed := assertCheckpointMatchesRows(t, d.db); committed != next {
			t.Fatalf("checkpoint says next page %d, rows say %d", next, committed)
		}

		d.env["CARDSYNC_API_RATE_LIMIT"] = "1000/1s"
		code, stdout, stderr := d.run("backfill")
		if code != 0 {
			t.Fatalf("backfill after SIGKILL: exit %d\n%s\n%s", code, stdout, lastLines(stderr))
		}
		if got := resumedAtPage(stdout); got != next {
			t.Errorf("backfill resumed at page %d, want the checkpoint's %d; stdout:\n%s", got, next, stdout)
		}
		assertTruth(t, up, d.db)
		if n := extraFetches(up.Stats()); n > 1 {
			t.Errorf("%d pages fetched twice across one SIGKILL, want <= 1", n)
		}
		db := openRO(t, d.db)
		if n := queryInt(t, db, `SELECT count(*) FROM card_versions`); n != cards {
			t.Errorf("%d card versions for %d cards: a refetched page doubled versions", n, cards)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM sync_runs WHERE status = 'abandoned'`); n != 1 {
			t.Errorf("%d abandoned runs after one kill, want 1", n)
		}
	})

	t.Run("status", func(t *testing.T) {
		code, stdout, stderr := d.run("status")
		if code != 0 || !strings.Contains(stdout, "healthy") {
			t.Fatalf("status: exit %d\n%s\n%s", code, stdout, lastLines(stderr))
		}
	})

	t.Run("serve", func(t *testing.T) {
		added := up.AddCard()
		if !up.UpdateCard(up.Cards()[0].ID) {
			t.Fatal("the simulator updated no card")
		}
		d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
		serve := d.startBG("serve")
		w := newROWatch(t, d.db)
		pollUntil(t, time.Minute, "serve's first run to succeed", func() bool {
			n, ok := w.int(`SELECT count(*) FROM sync_runs WHERE status = 'succeeded' AND trigger = 'schedule'`)
			return ok && n == 1
		}, serve)
		if err := serve.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := serve.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("serve exit code %d after SIGTERM, want 0\nstderr:\n%s", code, lastLines(serve.stderr.String()))
		}
		if !strings.Contains(serve.stderr.String(), "stopped cleanly") {
			t.Errorf("serve did not log a clean stop:\n%s", lastLines(serve.stderr.String()))
		}
		assertTruth(t, up, d.db)
		db := openRO(t, d.db)
		if n := queryInt(t, db, `SELECT count(*) FROM cards WHERE card_id = $1`, added.ID); n != 1 {
			t.Errorf("the card added upstream is stored %d times, want once", n)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM card_versions`); n != cards+2 {
			t.Errorf("%d card versions, want %d: one more for the added card and one for the updated", n, cards+2)
		}
	})
}
