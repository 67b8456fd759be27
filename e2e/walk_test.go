//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// TestWalkNeverEndsEarly reproduces the finding against the binary: after a
// good sync, page 2 of 3 comes back empty (totals unchanged) while a card
// on page 3 changes. Each backfill reads on to page 3 and stores the
// change, says the walk was inconsistent with empty_page on page 2, and
// records it in sync_walks; status warns after the first such walk
// (without blaming upstream changes) and exits 1 after the second, naming
// the reason and the page.
func TestWalkNeverEndsEarly(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 21, Cards: 45}) // 3 pages of 15
	d := newDeploymentTo(t, up, toSQLite)
	d.backfillOK(t)
	onPage3 := up.Cards()[40].ID
	up.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultEmptyPage})
	for walk := 1; walk <= 2; walk++ {
		up.UpdateCard(onPage3)
		out := d.backfillOK(t)
		if !strings.Contains(out, "3 pages, 30 cards (0 new, 1 changed, 0 returned, 29 unchanged)") ||
			!strings.Contains(out, "walk inconsistent: empty_page on page 2") {
			t.Errorf("walk %d: backfill output does not say it read page 3 and why the walk was inconsistent:\n%s", walk, out)
		}
		db := openRO(t, d.db)
		var reason, pages string
		if err := db.QueryRow(`SELECT inconsistent_reason, inconsistent_pages FROM sync_walks ORDER BY walk_id DESC LIMIT 1`).Scan(&reason, &pages); err != nil ||
			reason != "empty_page" || pages != "[2]" {
			t.Errorf("walk %d: sync_walks says %q %q (%v), want empty_page [2]", walk, reason, pages, err)
		}
		if got := queryInt(t, db, `SELECT count(*) FROM card_versions WHERE card_id = ?`, onPage3); got != int64(1+walk) {
			t.Errorf("walk %d: the card on page 3 has %d versions, want %d (each change stored)", walk, got, 1+walk)
		}
		if got := queryInt(t, db, `SELECT count(*) FROM cards WHERE removed_at IS NULL`); got != 45 {
			t.Errorf("walk %d: %d current cards, want 45 (no removal)", walk, got)
		}
		code, human, errOut := d.run("status")
		switch walk {
		case 1:
			if code != 0 || !strings.Contains(human, "the last walk was inconsistent (walk") || !strings.Contains(human, "empty_page on page 2") ||
				strings.Contains(human, "changed upstream") {
				t.Errorf("status after one inconsistent walk: exit %d, want 0 with a warning naming empty_page on page 2:\n%s%s", code, human, errOut)
			}
		case 2:
			if code != 1 || !strings.Contains(human, "the last two walks were inconsistent") || !strings.Contains(human, "empty_page on page 2") {
				t.Errorf("status after two inconsistent walks: exit %d, want 1 naming empty_page on page 2:\n%s%s", code, human, errOut)
			}
		}
	}
	_, out, _ := d.run("status", "-json")
	var doc struct {
		Accounts []struct {
			LastWalk struct {
				Reason string `json:"inconsistent_reason"`
				Pages  []int  `json:"inconsistent_pages"`
				InARow int    `json:"inconsistent_in_a_row"`
			} `json:"last_walk"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Accounts) != 1 {
		t.Fatalf("status -json: %v\n%s", err, out)
	}
	if w := doc.Accounts[0].LastWalk; w.Reason != "empty_page" || len(w.Pages) != 1 || w.Pages[0] != 2 || w.InARow != 2 {
		t.Errorf("status -json last_walk = %+v, want empty_page on [2], 2 in a row", w)
	}
	// The fault gone, the next walk is consistent and status healthy again.
	up.ClearFaults()
	d.backfillOK(t)
	if code, human, _ := d.run("status"); code != 0 || !strings.Contains(human, "complete and consistent") {
		t.Errorf("status after a consistent walk: exit %d\n%s", code, human)
	}
	assertTruth(t, up, d.db)
}

// TestWalkNeverEndsEarlyRepeatedPageIntoEmptyWarehouse: a first backfill
// into an empty warehouse whose pages all serve the same 15 cards (the
// repeated-page fault, pages committed in one batch) succeeds on both
// warehouses: each card stored once with one version, the repeats counted
// unchanged, the walk inconsistent with repeated_page on pages 2 and 3,
// status warning; once the pages are served right the rest is stored.
func TestWalkNeverEndsEarlyRepeatedPageIntoEmptyWarehouse(t *testing.T) {
	for _, dest := range []destination{toSQLite, toPostgres} {
		t.Run(string(dest), func(t *testing.T) {
			up := newUpstream(t, sim.Options{Seed: 21, Cards: 45}) // 3 pages of 15
			d := newDeploymentTo(t, up, dest)
			up.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultRepeatedPage})
			out := d.backfillOK(t)
			if !strings.Contains(out, "3 pages, 45 cards (15 new, 0 changed, 0 returned, 30 unchanged)") ||
				!strings.Contains(out, "walk inconsistent: repeated_page on pages 2, 3") {
				t.Errorf("backfill output does not say it stored the 15 cards once and why the walk was inconsistent:\n%s", out)
			}
			db := openRO(t, d.db)
			if got := queryInt(t, db, `SELECT count(*) FROM card_versions`); got != 15 {
				t.Errorf("%d card versions, want 15 (one per card)", got)
			}
			if got := queryInt(t, db, `SELECT count(*) FROM cards WHERE removed_at IS NULL`); got != 15 {
				t.Errorf("%d current cards, want 15", got)
			}
			var reason, pages string
			if err := db.QueryRow(`SELECT inconsistent_reason, inconsistent_pages FROM sync_walks ORDER BY walk_id DESC LIMIT 1`).Scan(&reason, &pages); err != nil ||
				reason != "repeated_page" || pages != "[2,3]" {
				t.Errorf("sync_walks says %q %q (%v), want repeated_page [2,3]", reason, pages, err)
			}
			if code, human, errOut := d.run("status"); code != 0 || !strings.Contains(human, "the last walk was inconsistent (walk") ||
				!strings.Contains(human, "repeated_page on pages 2, 3") {
				t.Errorf("status after one inconsistent walk: exit %d, want 0 with a warning naming repeated_page on pages 2, 3:\n%s%s", code, human, errOut)
			}
			up.ClearFaults()
			if out := d.backfillOK(t); !strings.Contains(out, "(30 new, 0 changed, 0 returned, 15 unchanged)") {
				t.Errorf("backfill after the fault does not store the other 30 cards:\n%s", out)
			}
			if code, human, _ := d.run("status"); code != 0 || !strings.Contains(human, "complete and consistent") {
				t.Errorf("status after a consistent walk: exit %d\n%s", code, human)
			}
			assertTruth(t, up, d.db)
		})
	}
}
