package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/schema"
)

// migrationLock is the key of the transaction-scoped advisory lock every
// migration transaction takes first: concurrent migrators (replicas
// starting together) apply each migration once, one after the other. A
// transaction-scoped lock ends with its transaction, so it is safe behind
// PgBouncer in transaction pooling mode.
const migrationLock = 0x43534E43 // "CSNC", load.ApplicationID

// migrations lists the migrations this binary carries, in order.
func migrations() ([]schema.Migration, error) { return schema.List(schema.Postgres, "postgres") }

// SchemaVersion is the latest migration this binary carries.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// Migrate applies the migrations of schema.Postgres the database lacks, each
// in its own transaction together with its schema_migrations row, and
// returns the versions it applied. It refuses a database migrated by a
// newer binary (*load.SchemaVersionError).
func Migrate(ctx context.Context, pool *pgxpool.Pool) (applied []int, err error) {
	defer classify(&err)
	ms, err := migrations()
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	latest := ms[len(ms)-1].Version
	for _, m := range ms {
		done := false
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
					version    integer     PRIMARY KEY,
					name       text        NOT NULL,
					applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
				return err
			}
			var have int
			if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
				return err
			}
			if have > latest {
				return &load.SchemaVersionError{Database: have, Binary: latest}
			}
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, m.Version).Scan(&done); err != nil || done {
				return err
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, strings.TrimSuffix(m.Name, ".sql"))
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migrate to %s: %w", m.Name, err)
		}
		if !done {
			applied = append(applied, m.Version)
		}
	}
	return applied, nil
}
