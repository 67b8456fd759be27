package sqlite

import (
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"

	"github.com/cardsync/cardsync/load/sqlitecheck"
	"github.com/cardsync/cardsync/redact"
)

// TestWithoutRowidKeyColumnsFirst checks the shape Debian 12's SQLite 3.40.1
// needs to judge a WITHOUT ROWID table right: its primary-key columns are
// the leading columns, in key order. With another order that SQLite's
// PRAGMA integrity_check reports false "NULL value in T.col" errors (the
// README's backup check failed on every warehouse of schema 5).
func TestWithoutRowidKeyColumnsFirst(t *testing.T) {
	w, _, _ := openTest(t, load.Options{})
	tables, err := queryStrings(t.Context(), w.db, `SELECT name FROM pragma_table_list WHERE schema = 'main' AND wr = 1 ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 {
		t.Fatal("no WITHOUT ROWID table found: the check proves nothing")
	}
	for _, table := range tables {
		t.Run(table, func(t *testing.T) {
			rows, err := w.db.QueryContext(t.Context(), `SELECT cid, name, pk FROM pragma_table_info(?) ORDER BY cid`, table)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var order []string
			keys, leading := 0, true
			for rows.Next() {
				var cid, pk int
				var name string
				if err := rows.Scan(&cid, &name, &pk); err != nil {
					t.Fatal(err)
				}
				order = append(order, fmt.Sprintf("%s(pk %d)", name, pk))
				if pk > 0 {
					keys++
					if pk != cid+1 {
						leading = false
					}
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if keys == 0 || !leading {
				t.Errorf("columns %v: want the %d primary-key columns first, in key order", order, keys)
			}
		})
	}
}

// TestSystemSQLiteIntegrity runs the README's check, PRAGMA integrity_check
// with the system's sqlite3 CLI and Python's sqlite3 module, on every kind
// of warehouse file users hold: a live one (open, with its WAL), the same
// file closed, a backup, and files upgraded from every earlier schema. Each
// must answer exactly "ok".
func TestSystemSQLiteIntegrity(t *testing.T) {
	ctx := t.Context()
	t.Run("live and backup", func(t *testing.T) {
		w, path, clk := openTest(t, load.Options{WALCheckpoint: load.WALCheckpointExternal})
		// History of every kind: new cards, changes, a removal over two
		// walks, cards that come back.
		for rev, ids := range [][]int{idRange(1, 60), idRange(1, 59), idRange(1, 58), idRange(1, 60)} {
			run := startRun(t, w)
			for i, n := 0, 0; i < len(ids); i, n = i+15, n+1 {
				commit(t, w, run, page(n+1, ids[i:min(i+15, len(ids))], rev, len(ids)))
			}
			if _, err := finishWalk(ctx, w, run, true); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Minute)
		}
		if n := queryInt(t, w, `SELECT count(*) FROM card_versions WHERE version > 1`); n == 0 {
			t.Fatal("no card has a second version: the check proves little")
		}
		if _, err := os.Stat(path + "-wal"); err != nil {
			t.Fatalf("the live warehouse has no WAL: %v", err)
		}
		sqlitecheck.IntegrityOK(t, path)
		if _, err := os.Stat(path + "-wal"); err != nil {
			t.Errorf("the check removed the live warehouse's WAL: %v", err)
		}
		backup, err := w.Backup(ctx, filepath.Join(t.TempDir(), "backups"), 1, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		sqlitecheck.IntegrityOK(t, backup.Path)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		sqlitecheck.IntegrityOK(t, path)
	})
	for version := 1; version < SchemaVersion(); version++ {
		if testing.Short() && version != 1 && version != SchemaVersion()-1 {
			// -short (the race tier) upgrades from the first and the
			// last schema; the fast tier checks every one.
			continue
		}
		t.Run(fmt.Sprintf("upgraded from schema %d", version), func(t *testing.T) {
			path := schemaWarehouse(t, version)
			w, err := Open(ctx, path, load.Options{})
			if err != nil {
				t.Fatalf("upgrade from schema %d: %v", version, err)
			}
			if v, _, _ := w.versions(ctx, w.db); v != SchemaVersion() {
				t.Fatalf("version %d after the upgrade, want %d", v, SchemaVersion())
			}
			if n := queryInt(t, w, `SELECT count(*) FROM card_versions`); n == 0 {
				t.Fatal("no card_versions rows: the check proves little")
			}
			sqlitecheck.IntegrityOK(t, path)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			sqlitecheck.IntegrityOK(t, path)
		})
	}
}

// schemaWarehouse returns a warehouse file of schema version: a release's
// dump (testdata/release1.sql is schema 1, release4.sql schema 4) brought
// up to version by this binary's migrations and their Go steps, as the
// release of that version wrote it (a shipped migration never changes).
// Like a migration, it leaves no view: the upgrade makes them.
func schemaWarehouse(t *testing.T, version int) string {
	t.Helper()
	from := 1
	if version >= 4 {
		from = 4
	}
	path := releaseWarehouse(t, fmt.Sprintf("release%d", from))
	if version == from {
		return path
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(path, []string{"_pragma=foreign_keys(1)", "_txlock=immediate"}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	w := &Warehouse{db: db, path: path, now: time.Now, log: slog.New(slog.DiscardHandler), policy: redact.NewPolicy(nil)}
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := dropViews(t.Context(), tx); err != nil {
		t.Fatal(err)
	}
	steps := w.migrationSteps()
	for _, m := range ms[from:version] {
		if _, err := tx.ExecContext(t.Context(), m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if step := steps[m.Version]; step != nil {
			if err := step(t.Context(), tx); err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
		}
		if _, err := tx.ExecContext(t.Context(), fmt.Sprintf("PRAGMA user_version = %d", m.Version)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}
