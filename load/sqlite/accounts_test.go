package sqlite

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

func TestCheckAccountName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"default", true}, {"acme-eu_2", true}, {strings.Repeat("a", 64), true},
		{"", false}, {"Acme", false}, {"a b", false}, {"a.b", false}, {strings.Repeat("a", 65), false}, {"é", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := load.CheckAccountName(tt.name); (err == nil) != tt.ok {
				t.Errorf("CheckAccountName(%q) = %v, want ok %v", tt.name, err, tt.ok)
			}
			err := load.Options{Account: tt.name}.Validate()
			if tt.name != "" && (err == nil) != tt.ok {
				t.Errorf("Validate with Account %q = %v, want ok %v", tt.name, err, tt.ok)
			}
		})
	}
}

// TestAccountsShareAFile writes the same card ids to two accounts of one
// file through two Warehouses: neither sees the other's cards, versions,
// rejected items, open walk, checkpoint or runs.
func TestAccountsShareAFile(t *testing.T) {
	ctx := t.Context()
	a, path, clk := openTest(t, load.Options{Account: "alpha"})
	b, err := Open(ctx, path, load.Options{Account: "beta", Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.Account() != "alpha" || b.Account() != "beta" {
		t.Fatalf("accounts %q, %q", a.Account(), b.Account())
	}
	runA := startRun(t, a)
	commit(t, a, runA, page(1, idRange(1, 15), 1, 30))
	runB := startRun(t, b)
	p := page(1, idRange(1, 15), 2, 15)
	p.Cards = append(p.Cards, load.Card{ID: "", Data: []byte(`{"status":"no id"}`)})
	commit(t, b, runB, p)
	if _, err := finishWalk(ctx, b, runB, true); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		q     string
		alpha int64
		beta  int64
	}{
		{`SELECT count(*) FROM cards WHERE account = ?`, 15, 15},
		{`SELECT count(*) FROM card_versions WHERE account = ?`, 15, 15},
		{`SELECT count(*) FROM rejected_cards WHERE account = ?`, 0, 1},
		{`SELECT count(*) FROM sync_walks WHERE account = ? AND finished_at IS NULL`, 1, 0},
		{`SELECT count(*) FROM sync_runs WHERE account = ?`, 1, 1},
		{`SELECT count(DISTINCT json_extract(data, '$.revision')) FROM cards WHERE account = ?`, 1, 1},
	} {
		if got := queryInt(t, a, tt.q, "alpha"); got != tt.alpha {
			t.Errorf("%s [alpha] = %d, want %d", tt.q, got, tt.alpha)
		}
		if got := queryInt(t, a, tt.q, "beta"); got != tt.beta {
			t.Errorf("%s [beta] = %d, want %d", tt.q, got, tt.beta)
		}
	}
	// beta's complete walk is not alpha's last walk: alpha's cards keep
	// their own last seen run.
	if n := queryInt(t, a, `SELECT count(*) FROM cards WHERE account = 'alpha' AND last_seen_run = ?`, runA); n != 15 {
		t.Errorf("%d of alpha's cards last seen by alpha's run, want 15", n)
	}
	ws, err := a.WalkSummary(ctx, load.StreamCards)
	if err != nil || ws.WalkID == 0 || ws.Pages != 1 {
		t.Errorf("alpha's open walk %+v (%v), want one page", ws, err)
	}
	if ws, err := b.WalkSummary(ctx, load.StreamCards); err != nil || ws.WalkID != 0 {
		t.Errorf("beta's open walk %+v (%v), want none", ws, err)
	}
	if cp, _ := a.Checkpoint(ctx, load.StreamCards); cp.NextPage != 2 || cp.RunID != runA {
		t.Errorf("alpha checkpoint %+v, want page 2 of run %d", cp, runA)
	}
	if cp, _ := b.Checkpoint(ctx, load.StreamCards); cp.NextPage != 1 || cp.RunID != runB {
		t.Errorf("beta checkpoint %+v, want page 1 of run %d", cp, runB)
	}
	if runs, _ := a.Runs(ctx, 10); len(runs) != 1 || runs[0].ID != runA {
		t.Errorf("alpha runs %+v, want run %d only", runs, runA)
	}
	if _, err := b.AbandonStale(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := a.Heartbeat(ctx, runA); err != nil {
		t.Errorf("beta's AbandonStale(0) ended alpha's run: %v", err)
	}
	if err := b.FinishRun(ctx, runA, load.RunResult{Status: load.StatusSucceeded}); err == nil {
		t.Errorf("beta finished alpha's run")
	}
}

// TestUpgradeToAccountsKeepsAnswers takes a warehouse of schema 4 (the
// release before accounts: testdata/release4.sql, the release-1 warehouse
// upgraded by it), runs the documented queries (those of release 1,
// testdata/release1-queries.sql, and every sql block of the current
// README.md and docs/*.md), upgrades the same file in place to the latest schema and runs
// them again: every row of every table is kept, in the 'default' account,
// and every query answers the same (SELECT * gains the account column,
// column_docs the rows describing it, and ages move with the clock).
func TestUpgradeToAccountsKeepsAnswers(t *testing.T) {
	ctx := t.Context()
	path := releaseWarehouse(t, "release4")
	queries := append(readQueries(t, "testdata/release1-queries.sql"), docQueries(t)...)
	db4 := rawDB(t, path)
	var v4 int
	if err := db4.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v4); err != nil || v4 != 4 {
		t.Fatalf("version %d (%v), want 4", v4, err)
	}
	before := make([][]string, len(queries))
	beforeAges := make([][]int64, len(queries))
	start := time.Now()
	for i, q := range queries {
		before[i] = queryTable(t, db4, q, nil, &beforeAges[i])
	}
	rowsBefore := tableRows(t, db4)
	meaningBefore := jsonMeanings(t, db4)
	db4.Close()

	w, err := Open(ctx, path, load.Options{})
	if err != nil {
		t.Fatalf("upgrade to schema %d: %v", SchemaVersion(), err)
	}
	defer w.Close()
	if v, _, _ := w.versions(ctx, w.db); v != SchemaVersion() {
		t.Fatalf("version %d, want %d", v, SchemaVersion())
	}
	rowsAfter := tableRows(t, w.db)
	if meaningAfter := jsonMeanings(t, w.db); !reflect.DeepEqual(meaningBefore, meaningAfter) {
		t.Errorf("stored JSON means something else after the upgrade:\nbefore %q\nafter  %q", meaningBefore, meaningAfter)
	}
	for table, rows := range rowsBefore {
		if table == "column_docs" {
			continue // gains the account columns' descriptions
		}
		if !slices.Equal(rows, rowsAfter[table]) {
			t.Errorf("%s: %d rows before the upgrade, %d after, or their values differ", table, len(rows), len(rowsAfter[table]))
		}
	}
	for _, table := range []string{"card_state", "card_versions", "removal_pending", "sync_checkpoints", "sync_runs", "sync_walks", "account_snapshots", "rejected_cards"} {
		if n := queryInt(t, w, `SELECT count(*) FROM `+table+` WHERE account != 'default'`); n != 0 {
			t.Errorf("%s: %d rows outside the default account", table, n)
		}
	}
	// Migration 6: every field counts as seen at the upgrade.
	if n := queryInt(t, w, `SELECT count(*) FROM card_fields WHERE last_seen_at NOT GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'`); n != 0 {
		t.Errorf("%d card_fields rows without a last_seen_at time after the upgrade", n)
	}
	answered, newer := 0, 0
	for i, q := range queries {
		var ages []int64
		after := queryTable(t, w.db, q, before[i][:1], &ages)
		// An age may only have grown, and by no more than the time the
		// two passes took (whole seconds, so one more).
		elapsed := int64(time.Since(start)/time.Second) + 1
		if len(ages) != len(beforeAges[i]) {
			t.Errorf("query %d: %d ages after the upgrade, %d before", i+1, len(ages), len(beforeAges[i]))
		} else {
			for k, a := range ages {
				if d := a - beforeAges[i][k]; d < 0 || d > elapsed {
					t.Errorf("query %d: an age went from %d s to %d s across an upgrade of %d s", i+1, beforeAges[i][k], a, elapsed)
				}
			}
		}
		if strings.Contains(q, "column_docs") {
			// Migration 4's step fills column_docs from this binary's
			// documentation, account columns included: compare the rest.
			isAccount := func(row string) bool { return strings.HasPrefix(row, `"account"|`) }
			before[i] = slices.DeleteFunc(before[i], isAccount)
			after = slices.DeleteFunc(after, isAccount)
			// The descriptions are this binary's words (refreshed at
			// every open); the columns and their units must stay.
			before[i], after = withoutDescriptions(before[i]), withoutDescriptions(after)
		}
		if slices.ContainsFunc(before[i], newerSchema) {
			// The query reads what release 4 did not have (the
			// cookbook's account and _minor columns): nothing to compare.
			newer++
			continue
		}
		if len(before[i]) > 1 && !strings.HasPrefix(before[i][1], "error: ") {
			answered++
		}
		if !slices.Equal(before[i], after) {
			t.Errorf("query %d answers differently after the upgrade:\n%s\nbefore: %q\nafter:  %q", i+1, q, before[i], after)
		}
	}
	t.Logf("%d queries compared, %d of them return rows; %d read what release 4 did not have", len(queries)-newer, answered, newer)
	if answered < len(queries)/2 {
		t.Errorf("only %d of %d queries return rows from testdata/release1.sql: the comparison proves little", answered, len(queries))
	}
	if n := queryInt(t, w, `SELECT count(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Errorf("%d foreign key violations after the upgrade", n)
	}
}

// docQueries returns the statements of every SQLite sql block of
// README.md and the guides in docs/.
func docQueries(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range append([]string{"../../README.md"}, guides...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range strings.Split(string(b), "```sql\n")[1:] {
			text, _, _ := strings.Cut(block, "```")
			if strings.HasPrefix(text, "-- postgres\n") {
				continue // the PostgreSQL cookbook
			}
			out = append(out, splitStatements(text)...)
		}
	}
	if len(out) < 20 {
		t.Fatalf("%d queries in the sql blocks of README.md and docs/, want the 20 documented examples", len(out))
	}
	return out
}

// newerSchema reports whether a query's answer on release 4 is an error
// naming a column or table that release did not have.
func newerSchema(answer string) bool {
	return strings.HasPrefix(answer, "error: ") &&
		(strings.Contains(answer, "no such column") || strings.Contains(answer, "no such table"))
}

// readQueries splits an SQL file into its statements.
func readQueries(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return splitStatements(string(b))
}

// splitStatements splits SQL text at semicolons that end a line.
func splitStatements(text string) []string {
	var out []string
	for s := range strings.SplitSeq(text+"\n", ";\n") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// queryTable runs q and returns its header (the column names, joined) and
// one string per row (a failing query: its error, which must fail the
// same way after the upgrade). With header (a header from before an upgrade), the
// columns it does not name (account, under SELECT *) are dropped. An age in
// seconds moves with the clock: its cell reads "age" and its value is
// appended to ages, for the caller to compare with a tolerance.
func queryTable(t *testing.T, db *sql.DB, q string, header []string, ages *[]int64) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	keep := make([]bool, len(cols))
	var names []string
	for i, c := range cols {
		keep[i] = header == nil || slices.Contains(strings.Split(header[0], ","), c)
		if keep[i] {
			names = append(names, c)
		}
	}
	out := []string{strings.Join(names, ",")}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var cells []string
		for i, v := range vals {
			if !keep[i] {
				continue
			}
			if n, ok := v.(int64); ok && strings.HasSuffix(cols[i], "_age_seconds") {
				*ages = append(*ages, n)
				v = "age"
			}
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			cells = append(cells, fmt.Sprintf("%#v", v))
		}
		out = append(out, strings.Join(cells, "|"))
	}
	if err := rows.Err(); err != nil {
		return append(out, "error: "+err.Error())
	}
	return out
}

// tableRows returns the rows of every table, each as text without its
// account column, sorted.
func tableRows(t *testing.T, db *sql.DB) map[string][]string {
	t.Helper()
	ctx := t.Context()
	names, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for names.Next() {
		var n string
		if err := names.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	names.Close()
	out := map[string][]string{}
	for _, table := range tables {
		var cols []string
		// Columns added since release 4 are left out: the account (5),
		// sync_walks' inconsistent_reason and inconsistent_pages (8, NULL
		// for older walks) and card_fields' last_seen_at (9, the time of
		// the upgrade) and sync_runs' cards_returned (11: 0 here, the
		// release-4 file holds no returned version, so its cards_changed
		// stay as they were), sync_runs' holder (12: NULL) and duration_ms
		// (14: NULL), the rules' counters (15: 0), and
		// card_fields' types and card_state's minor units (13, checked by
		// TestUpgradeTypesFields), card_state's scale, currency and
		// rounding flag and card_fields' rounded (17, checked by the
		// contract's TestCardMoneyUpgrade).
		info, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?1)
			WHERE name NOT IN ('account', 'inconsistent_reason', 'inconsistent_pages', 'cards_returned')
			AND NOT (?1 = 'card_fields' AND name IN ('last_seen_at', 'type', 'scale', 'conflicts', 'minor_column', 'rounded'))
			AND NOT (?1 = 'card_state' AND name IN ('minor', 'amount_scale', 'amount_currency', 'amounts_rounded'))
			AND NOT (?1 = 'sync_runs' AND name IN ('holder', 'duration_ms', 'card_numbers_masked', 'codes_dropped', 'track_data_dropped', 'fields_dropped')) ORDER BY name`, table)
		if err != nil {
			t.Fatal(err)
		}
		for info.Next() {
			var c string
			if err := info.Scan(&c); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(rewritten[table], c) {
				cols = append(cols, "quote("+quoteIdent(c)+")")
			}
		}
		info.Close()
		rows, err := db.QueryContext(ctx, `SELECT `+strings.Join(cols, " || '|' || ")+` FROM `+quoteIdent(table))
		if err != nil {
			t.Fatal(err)
		}
		var list []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			list = append(list, s)
		}
		rows.Close()
		slices.Sort(list)
		out[table] = list
	}
	return out
}
