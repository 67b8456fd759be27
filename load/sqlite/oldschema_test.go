package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestReadOnlyOpenOfAnOlderSchema: status, report and check open the file
// read-only and cannot migrate it; a file the service has not upgraded yet
// (a new binary installed, the daemon not restarted) is refused with the
// versions and the remedy, not with "no such column" from the first query.
func TestReadOnlyOpenOfAnOlderSchema(t *testing.T) {
	ctx := t.Context()
	path := releaseWarehouse(t, "release4")
	_, err := OpenReadOnly(ctx, path)
	var sv *load.SchemaVersionError
	if !errors.As(err, &sv) || !errors.Is(err, load.ErrSchemaTooOld) || errors.Is(err, load.ErrSchemaTooNew) || !errors.Is(err, load.ErrWarehouse) {
		t.Fatalf("read-only open of a schema-4 file: %v, want a SchemaVersionError wrapping ErrSchemaTooOld", err)
	}
	if sv.Database != 4 || sv.Binary != SchemaVersion() || !strings.Contains(err.Error(), "next sync upgrades it") {
		t.Errorf("error %q (database %d, binary %d)", err, sv.Database, sv.Binary)
	}
	w, err := Open(ctx, path, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	r, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("after the upgrade: %v", err)
	}
	r.Close()
}

// TestConcurrentOpensOfANewFile: the accounts of one file open it at the
// same moment (backfill of every account), one of them creating and
// migrating it; every open waits for that instead of failing with
// SQLITE_BUSY.
func TestConcurrentOpensOfANewFile(t *testing.T) {
	rounds := 30 // the race is narrow: without the wait, a few rounds in 30 fail
	if testing.Short() {
		rounds = 5
	}
	for round := range rounds {
		path := filepath.Join(t.TempDir(), "w.db")
		names := []string{"alpha", "beta", "gamma", "delta", "e1", "e2", "e3", "e4"}
		errs := make(chan error, len(names))
		for _, name := range names {
			go func() {
				w, err := Open(t.Context(), path, load.Options{Account: name})
				if err == nil {
					_, err = w.StartRun(t.Context(), load.TriggerBackfill, "test")
					w.Close()
				}
				errs <- err
			}()
		}
		for range names {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}

// TestForeignRunsOfAnOlderSchema: demo's question (runs it did not start)
// is answered for a file of an older release too, read-only, so an older
// demo warehouse is replaced and an older real one refused.
func TestForeignRunsOfAnOlderSchema(t *testing.T) {
	ctx := t.Context()
	path := releaseWarehouse(t, "release4")
	db := rawDB(t, path)
	var runs int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sync_runs").Scan(&runs); err != nil || runs == 0 {
		t.Fatalf("release4 fixture: %d runs (%v)", runs, err)
	}
	if n, err := ForeignRuns(ctx, path, "demo"); err != nil || n != runs {
		t.Errorf("ForeignRuns of a schema-4 file = %d, %v; want %d", n, err, runs)
	}
	if _, err := db.ExecContext(ctx, "UPDATE sync_runs SET trigger = 'demo'"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if n, err := ForeignRuns(ctx, path, "demo"); err != nil || n != 0 {
		t.Errorf("ForeignRuns of a schema-4 demo file = %d, %v; want 0", n, err)
	}
	var v int
	db = rawDB(t, path)
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != 4 {
		t.Errorf("the file was changed: user_version %d (%v), want 4", v, err)
	}
}

// rewritten are the columns migration 10 rewrites in place (JSON made
// canonical, and its hashes) or adds: tableRows leaves them out, and
// jsonMeanings compares what the JSON ones mean.
var rewritten = map[string][]string{
	"card_state":        {"data", "data_hash"},
	"card_versions":     {"data"},
	"account_snapshots": {"raw"},
	"rejected_cards":    {"data", "data_sha256"},
	"sync_runs":         {"secrets_redacted"},
}

// jsonMeanings returns, per JSON column migration 10 rewrites, its values
// as encoding/json reads them (members in key order, the last of
// duplicate keys, numbers as their text) with the row's key, sorted.
func jsonMeanings(t *testing.T, db *sql.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, c := range []struct{ table, column, key string }{
		{"card_state", "data", "card_id"},
		{"card_versions", "data", "card_id || '/' || version"},
		{"account_snapshots", "raw", "snapshot_id"},
		{"rejected_cards", "data", "rejected_id"},
	} {
		var list []string
		err := eachRow(t.Context(), db, `SELECT `+c.key+`, `+c.column+` FROM `+c.table+` WHERE `+c.column+` IS NOT NULL`, nil,
			func(scan func(...any) error) error {
				var key, doc string
				if err := scan(&key, &doc); err != nil {
					return err
				}
				dec := json.NewDecoder(strings.NewReader(doc))
				dec.UseNumber()
				var v any
				if dec.Decode(&v) == nil {
					b, _ := json.Marshal(v)
					doc = string(b)
				}
				list = append(list, key+" "+doc)
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(list)
		out[c.table+"."+c.column] = list
	}
	return out
}

// withoutDescriptions keeps the first and last field of each row of a
// column_docs answer (column_name|description|unit): the column and its
// unit.
func withoutDescriptions(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		first, last := strings.Index(r, "|"), strings.LastIndex(r, "|")
		if first < 0 || first == last {
			out[i] = r
			continue
		}
		out[i] = r[:first] + r[last:]
	}
	return out
}
