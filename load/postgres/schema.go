package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres/pgrules"
)

// DefaultSchema is Options.Schema's default: the warehouse lives in the
// database's public schema.
const DefaultSchema = "public"

// CheckSchemaName refuses a schema name PostgreSQL cannot have
// (pgrules.CheckSchemaName).
func CheckSchemaName(name string) error { return pgrules.CheckSchemaName(name) }

// searchPath is the search_path that pins a session to schema: that
// schema alone (pg_catalog and the session's temporary schema are searched
// implicitly), so that a schema named after the role ("$user", first in
// PostgreSQL's default) created beside it changes nothing.
func searchPath(schema string) string { return pgx.Identifier{schema}.Sanitize() }

// otherWarehouses lists the schemas of the database, other than schema,
// holding a warehouse (schema_migrations and sync_runs).
func otherWarehouses(ctx context.Context, pool *pgxpool.Pool, schema string) ([]string, error) {
	rows, err := pool.Query(ctx, `SELECT n.nspname::text FROM pg_namespace n
		WHERE n.nspname <> $1
			AND EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'schema_migrations')
			AND EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'sync_runs')
		ORDER BY 1`, schema)
	if err != nil {
		return nil, fmt.Errorf("look for warehouses in other schemas: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// checkSchema is Open's check of the warehouse's schema before anything
// is read or migrated: the schema must exist (cardsync never creates
// one). One without a warehouse while another schema of the database has
// one is refused when the schema was not chosen (explicit false: the
// default, public), naming both and the key to set; chosen, it is
// initialised with a warning naming the other. A read-only open is told
// where the warehouse is instead of load.ErrNotMigrated alone. migrated
// reports whether the schema holds a warehouse.
func checkSchema(ctx context.Context, pool *pgxpool.Pool, schema string, explicit, readOnly bool, log *slog.Logger) (migrated bool, err error) {
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regnamespace($1) IS NOT NULL,
		EXISTS (SELECT 1 FROM pg_class WHERE relnamespace = to_regnamespace($1) AND relname = 'schema_migrations')`,
		searchPath(schema)).Scan(&exists, &migrated); err != nil {
		return false, fmt.Errorf("check schema %s: %w", schema, err)
	}
	if !exists {
		return false, fmt.Errorf("schema %s does not exist in the database: create it (CREATE SCHEMA %s AUTHORIZATION <role>) or set [warehouse] schema (CARDSYNC_WAREHOUSE_SCHEMA) to the schema of the warehouse", schema, searchPath(schema))
	}
	if migrated {
		return true, nil
	}
	others, err := otherWarehouses(ctx, pool, schema)
	if err != nil || len(others) == 0 {
		return false, err
	}
	where := strings.Join(others, ", ")
	switch {
	case readOnly:
		return false, &load.SchemaForkError{Schema: schema, Others: others, ReadOnly: true}
	case !explicit:
		return false, &load.SchemaForkError{Schema: schema, Others: others}
	}
	log.Warn("initialising a new warehouse in the configured schema, beside the warehouse of another schema", "schema", schema, "other", where)
	return false, nil
}
