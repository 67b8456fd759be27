package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// TestREADMEPostgres runs every PostgreSQL query of README.md (the ```sql
// blocks whose first line is "-- postgres": the cookbook on PostgreSQL) in
// a read-only session against a PostgreSQL warehouse synced from the
// simulator with changed, removed and returned cards: each must succeed and
// return rows.
func TestREADMEPostgres(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 82, Cards: 120, ExtraFields: true, AccountDrift: true})
	d := newDeploymentTo(t, up, toPostgres)
	d.backfillOK(t)
	cards := up.Cards()
	for _, c := range cards[:3] {
		up.UpdateCard(c.ID)
	}
	up.RemoveCard(cards[10].ID)
	up.RemoveCard(cards[20].ID)
	d.backfillOK(t)
	d.backfillOK(t) // the two removals confirmed
	up.RestoreCard(cards[10])
	d.backfillOK(t) // one card returned
	ro := openRO(t, d.db)
	if n := queryInt(t, ro, `SELECT count(*) FROM card_versions WHERE change IN ('removed', 'returned')`); n != 3 {
		t.Fatalf("%d removals and returns in the fixture, want 3", n)
	}
	n := 0
	for _, b := range readmeBlocks(t) {
		if !postgresBlock(b) {
			continue
		}
		for _, q := range sqlStatements(b.text) {
			n++
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			rows, err := ro.QueryContext(ctx, q)
			if err != nil {
				cancel()
				t.Errorf("README.md:%d: %s\n%v", b.line, q, err)
				continue
			}
			got := 0
			for rows.Next() {
				got++
			}
			err = rows.Err()
			rows.Close()
			cancel()
			switch {
			case err != nil:
				t.Errorf("README.md:%d: %s\n%v", b.line, q, err)
			case got == 0:
				t.Errorf("README.md:%d: no rows from\n%s", b.line, q)
			}
		}
	}
	if n < 3 {
		t.Errorf("only %d PostgreSQL queries found in README.md", n)
	}
}
