//go:build e2e

package e2e

import (
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestSIGKILLResume kills a backfill of 3,000 cards (200 pages) at 20 random
// moments, restarting it each time, and checks after every kill that the
// warehouse is intact and its committed rows match the checkpoint; at the
// end it equals the simulator. With warehouse.commit_delay "0" every page
// with new cards commits at once, so no page is fetched twice more often
// than there were kills; with the default a kill drops at most the batch in
// hand, at most load.DefaultBatchPages pages.
func TestSIGKILLResume(t *testing.T) {
	kills, cards := 20, 3000
	if testing.Short() {
		kills, cards = 5, 900
	}
	for _, tt := range []struct {
		commitDelay string
		maxPerKill  int64 // pages fetched twice per kill, at most
	}{
		{commitDelay: "0", maxPerKill: 1},
		{commitDelay: "1s", maxPerKill: load.DefaultBatchPages},
	} {
		t.Run("commit_delay "+tt.commitDelay, func(t *testing.T) {
			testSIGKILLResume(t, killScenario{dest: toSQLite, commitDelay: tt.commitDelay, maxPerKill: tt.maxPerKill, kills: kills, cards: cards})
		})
	}
}
