//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// TestREADMEPostgres runs every PostgreSQL query of the docs (the ```sql
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
	for _, b := range docBlocks(t) {
		if !postgresBlock(b) {
			continue
		}
		for _, q := range sqlStatements(b.text) {
			n++
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			rows, err := ro.QueryContext(ctx, q)
			if err != nil {
				cancel()
				t.Errorf("%s: %s\n%v", b.where(), q, err)
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
				t.Errorf("%s: %s\n%v", b.where(), q, err)
			case got == 0:
				t.Errorf("%s: no rows from\n%s", b.where(), q)
			}
		}
	}
	t.Logf("%d PostgreSQL statements ran", n)
	if n < minPostgresStatements {
		t.Errorf("only %d PostgreSQL queries found in README.md and docs/, want at least %d", n, minPostgresStatements)
	}
	// The runbook's psql commands run on the same warehouse (no rows
	// needed: most look for trouble), and every sqlite3 query there has
	// its psql twin.
	blocks := docBlocks(t)
	queries := runbookQueries(blocks, `psql "$WAREHOUSE_URL" -c "`)
	for _, q := range queries {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		rows, err := ro.QueryContext(ctx, q.text)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		cancel()
		if err != nil {
			t.Errorf("%s: %s\n%v", q.where(), q.text, err)
		}
	}
	psql := map[string]bool{}
	for _, q := range queries {
		psql[q.text] = true
	}
	for _, q := range runbookQueries(blocks, `sqlite3 -readonly WAREHOUSE "`) {
		if !psql[q.text] {
			t.Errorf("%s: the runbook's sqlite3 query has no psql twin: %s", q.where(), q.text)
		}
	}
	t.Logf("%d runbook psql commands ran", len(queries))
	if len(queries) < minRunbookPsql {
		t.Errorf("only %d psql commands in the runbook, want at least %d", len(queries), minRunbookPsql)
	}
}

// runbookQueries returns the SQL of the runbook's ```text lines that start
// with prefix (a client and the opening quote of its query), the account
// NAME replaced by default.
func runbookQueries(blocks []docBlock, prefix string) []docCommand {
	var out []docCommand
	for _, b := range blocks {
		if b.lang != "text" {
			continue
		}
		for i, line := range strings.Split(b.text, "\n") {
			line = strings.TrimSpace(line)
			rest, ok := strings.CutPrefix(line, prefix)
			if !ok {
				continue
			}
			q, _, _ := strings.Cut(rest, `"`)
			q = strings.ReplaceAll(q, "'NAME'", "'default'")
			out = append(out, docCommand{file: b.file, lang: b.lang, line: b.line + 1 + i, text: q})
		}
	}
	return out
}
