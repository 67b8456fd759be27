//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// TestREADMECardTotalsEdges runs the cookbook's first SQLite query (card
// totals by status and currency) with the system sqlite3 on a synced
// warehouse whose cards are set, in one group, to the edges: balances
// whose minor units sum to exactly -2^63 (abs() of that sum would fail),
// a balance that did not fit (text, no minor units), one absent and one
// null. The total is written exactly and not_fitting counts only the
// balance that did not fit.
func TestREADMECardTotalsEdges(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("CARDSYNC_REQUIRE_TOOLS") != "" {
			t.Fatal("sqlite3 CLI not installed and CARDSYNC_REQUIRE_TOOLS is set")
		}
		t.Skip("sqlite3 CLI not installed")
	}
	var query string
	for _, b := range docBlocks(t) {
		if b.lang == "sql" && !postgresBlock(b) && strings.Contains(b.text, "not_fitting") {
			query = sqlStatements(b.text)[0]
			break
		}
	}
	if query == "" {
		t.Fatal("no SQLite card totals query (not_fitting) in README.md or docs/")
	}
	up := newUpstream(t, sim.Options{Seed: 82, Cards: 6})
	d := newDeployment(t, up)
	d.backfillOK(t)
	ids := []string{}
	for _, c := range up.Cards() {
		ids = append(ids, c.ID)
	}
	// Every card active in USD with a zero balance, then the edges. The
	// warehouse's internal card_state is edited directly: the simulator
	// sends only ordinary balances.
	edit := `UPDATE card_state SET
	  data = json_set(data, '$.status', 'active', '$.currency', 'USD', '$.balance', '0.00'),
	  minor = json_set(coalesce(minor, '{}'), '$.balance', 0);
	UPDATE card_state SET data = json_set(data, '$.balance', '-92233720368547758.07'),
	  minor = json_set(minor, '$.balance', -9223372036854775807) WHERE card_id = '` + ids[0] + `';
	UPDATE card_state SET data = json_set(data, '$.balance', '-0.01'),
	  minor = json_set(minor, '$.balance', -1) WHERE card_id = '` + ids[1] + `';
	UPDATE card_state SET data = json_set(data, '$.balance', 'n/a'),
	  minor = json_remove(minor, '$.balance') WHERE card_id = '` + ids[2] + `';
	UPDATE card_state SET data = json_remove(data, '$.balance'),
	  minor = json_remove(minor, '$.balance') WHERE card_id = '` + ids[3] + `';
	UPDATE card_state SET data = json_set(data, '$.balance', json('null')),
	  minor = json_remove(minor, '$.balance') WHERE card_id = '` + ids[4] + `';`
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, "-bail", d.db, edit).CombinedOutput(); err != nil {
		t.Fatalf("edit the warehouse: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, cli, "-bail", "-readonly", "-separator", "|", d.db, query).CombinedOutput()
	if err != nil {
		t.Fatalf("cookbook card totals: %v\n%s", err, out)
	}
	want := "default|active|USD|6|1|-9223372036854775808|2|-92233720368547758.08"
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("cookbook card totals:\n got %s\nwant %s", got, want)
	}
}
