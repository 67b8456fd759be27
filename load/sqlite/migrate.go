package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
	"github.com/cardsync/cardsync/schema"
)

// queryer is what both *sql.DB, *sql.Conn and *sql.Tx offer.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (w *Warehouse) versions(ctx context.Context, q queryer) (version, appID int, err error) {
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, 0, fmt.Errorf("read user_version: %w", err)
	}
	if err := q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return 0, 0, fmt.Errorf("read application_id: %w", err)
	}
	return version, appID, nil
}

func checkVersions(version, appID, latest int) error {
	if appID != 0 && appID != ApplicationID {
		return fmt.Errorf("%w: application_id is %#x, want %#x", load.ErrForeignDatabase, appID, ApplicationID)
	}
	if version > latest {
		return &load.SchemaVersionError{Database: version, Binary: latest}
	}
	return nil
}

// migrationSteps are Go steps that run after a migration's SQL, in the same
// transaction (before the user_version bump): work SQL cannot do, such as
// re-applying the redaction policy to rows already stored. Like the SQL,
// they see tables only: the views are made after the last migration.
func (w *Warehouse) migrationSteps() map[int]func(context.Context, *sql.Tx) error {
	return map[int]func(context.Context, *sql.Tx) error{
		2:  w.upgradeHardening,
		3:  w.upgradeRunCost,
		4:  fillColumnDocs,
		5:  upgradeAccounts,
		7:  w.upgradeIdentity,
		10: w.upgradeCanonical,
		13: w.upgradeTyped,
		15: w.createIDKey,
		16: upgradeRulesVersion,
		17: w.upgradeCurrencyScales,
		18: w.upgradeValueHash,
	}
}

// migrations lists the migrations this binary carries, in order.
func migrations() ([]schema.Migration, error) { return schema.List(schema.Migrations, ".") }

func latestVersion() int {
	ms, err := migrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// SchemaVersion is the highest migration this binary carries.
func SchemaVersion() int { return latestVersion() }

// migrate applies the pending migrations (see apply).
func (w *Warehouse) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	version, appID, err := w.versions(ctx, w.db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := checkVersions(version, appID, len(ms)); err != nil {
		return err
	}
	if version == 0 && appID == 0 {
		var n int
		if err := w.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("migrate: %w: the file has %s and no application_id", load.ErrForeignDatabase, english.Count(n, "schema object"))
		}
	}
	if version == len(ms) {
		return nil
	}
	applied, err := w.apply(ctx, ms)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range applied {
		w.log.Debug("schema migration applied", "version", m.Version, "file", m.Name)
	}
	if len(applied) > 0 {
		sqlshare.LogMigrated(w.log, applied[0].Version-1, applied[len(applied)-1].Version, len(applied))
	}
	return nil
}

// apply runs the migrations the file lacks in one BEGIN IMMEDIATE
// transaction: it drops every view, runs each migration's SQL, its Go step
// and its user_version bump in order, then creates the views of
// schema.Views and cards_flat, and the analysts' own views again
// (restoreUserViews). So a migration sees tables only, and a
// reader never sees a file half migrated or without its views. It returns
// the migrations it applied.
func (w *Warehouse) apply(ctx context.Context, ms []schema.Migration) ([]schema.Migration, error) {
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// Another process may have migrated between our read and BEGIN IMMEDIATE.
	version, appID, err := w.versions(ctx, tx)
	if err != nil {
		return nil, err
	}
	if err := checkVersions(version, appID, len(ms)); err != nil {
		return nil, err
	}
	pending := ms[version:]
	if len(pending) == 0 {
		return nil, nil
	}
	mine, err := userViews(ctx, tx)
	if err != nil {
		return nil, err
	}
	if err := dropViews(ctx, tx); err != nil {
		return nil, err
	}
	steps := w.migrationSteps()
	for _, m := range pending {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		if step := steps[m.Version]; step != nil {
			if err := step(ctx, tx); err != nil {
				return nil, fmt.Errorf("%s: %w", m.Name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.Version)); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, schema.Views); err != nil {
		return nil, fmt.Errorf("create views: %w", err)
	}
	if err := regenerateFlat(ctx, tx); err != nil {
		return nil, err
	}
	if err := w.restoreUserViews(ctx, tx, mine); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", ApplicationID)); err != nil {
		return nil, err
	}
	return pending, tx.Commit()
}

// dropViews drops every view of the file, the views of an earlier schema
// included: migrations change the tables under them.
func dropViews(ctx context.Context, tx *sql.Tx) error {
	names, err := queryStrings(ctx, tx, `SELECT name FROM sqlite_schema WHERE type = 'view'`)
	if err != nil {
		return fmt.Errorf("drop views: %w", err)
	}
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, "DROP VIEW "+quoteIdent(n)); err != nil {
			return fmt.Errorf("drop views: %w", err)
		}
	}
	return nil
}

// LoadSQL creates the database file at path from an SQL script, such as the
// output of sqlite3's .dump with its PRAGMA user_version and application_id:
// tests use it to build warehouses written by earlier releases. The file
// must not exist.
func LoadSQL(ctx context.Context, path, script string) (err error) {
	defer classify(&err)
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("load SQL into %s: file exists", path)
	}
	db, err := sql.Open("sqlite", dsn(path, []string{"_pragma=foreign_keys(0)"}))
	if err != nil {
		return fmt.Errorf("load SQL into %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, script); err != nil {
		return fmt.Errorf("load SQL into %s: %w", path, err)
	}
	return db.Close()
}
