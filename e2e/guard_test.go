//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// TestMassRemovalGuard runs the binary against the simulator: 10% of the
// cards removed upstream are marked removed after two walks; when the
// remaining 90% vanish (the list comes back empty), three walks in a row
// hold the removal, succeed, log an error naming the count and the command,
// and `status` shows it; `backfill -confirm-removals` then applies it.
func TestMassRemovalGuard(t *testing.T) { testMassRemovalGuard(t, toSQLite) }

func testMassRemovalGuard(t *testing.T, dest destination) {
	up := newUpstream(t, sim.Options{Seed: 3, Cards: 200})
	d := newDeploymentTo(t, up, dest)
	backfill := func(args ...string) (string, string) {
		t.Helper()
		code, stdout, stderr := d.run(append([]string{"backfill"}, args...)...)
		if code != 0 {
			t.Fatalf("backfill %v exited %d\n%s\n%s", args, code, stdout, stderr)
		}
		return stdout, stderr
	}
	current := func() int64 {
		t.Helper()
		return queryInt(t, openRO(t, d.db), `SELECT count(*) FROM cards WHERE removed_at IS NULL`)
	}
	backfill()
	cards := up.Cards()
	for _, c := range cards[:20] {
		up.RemoveCard(c.ID)
	}
	backfill()
	if got := current(); got != 200 {
		t.Fatalf("after the first walk missing 20: %d current, want 200 (pending)", got)
	}
	backfill()
	if got := current(); got != 180 {
		t.Fatalf("after the second walk missing 20: %d current, want 180", got)
	}
	assertTruth(t, up, d.db)

	for _, c := range cards[20:] {
		up.RemoveCard(c.ID)
	}
	for walk := 1; walk <= 3; walk++ {
		stdout, stderr := backfill()
		if got := current(); got != 180 {
			t.Fatalf("held walk %d: %d current cards, want 180 (nothing removed)", walk, got)
		}
		if !strings.Contains(stderr, `"level":"ERROR"`) || !strings.Contains(stderr, "mass removal held") ||
			!strings.Contains(stderr, `"removals_held":180`) || !strings.Contains(stderr, "cardsync backfill -confirm-removals") {
			t.Errorf("held walk %d: no error line with the count and the command:\n%s", walk, stderr)
		}
		if !strings.Contains(stdout, "succeeded") || !strings.Contains(stdout, "mass removal held: 180 cards") {
			t.Errorf("held walk %d: summary does not say so:\n%s", walk, stdout)
		}
		db := openRO(t, d.db)
		if got := queryInt(t, db, `SELECT removals_held FROM sync_runs ORDER BY run_id DESC LIMIT 1`); got != 180 {
			t.Errorf("held walk %d: sync_runs.removals_held = %d, want 180", walk, got)
		}
		if got := queryInt(t, db, `SELECT last_removals_held FROM sync_health`); got != 180 {
			t.Errorf("held walk %d: sync_health.last_removals_held = %d, want 180", walk, got)
		}
	}
	code, stdout, _ := d.run("status")
	if !strings.Contains(stdout, "mass removal held") || !strings.Contains(stdout, "-confirm-removals") {
		t.Errorf("status (exit %d) does not show the held removal:\n%s", code, stdout)
	}
	backfill("-confirm-removals")
	if got := current(); got != 0 {
		t.Fatalf("after -confirm-removals: %d current cards, want 0", got)
	}
	if got := queryInt(t, openRO(t, d.db), `SELECT count(*) FROM card_versions WHERE change = 'removed'`); got != 200 {
		t.Errorf("removed versions = %d, want 200", got)
	}
	assertTruth(t, up, d.db)
}
