package postgres

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cardsync/cardsync/load"
)

// CheckCreatable is `cardsync check` of a database before the first sync,
// read-only: it signs in and reports whether the warehouse's schema
// (opts.Schema) holds a warehouse. When it holds none, it proves instead
// that the first sync can create one, writing nothing: the schema exists,
// no other schema's warehouse stands in the way (as Open judges it), the
// server accepts writes and the role may create tables in the schema
// (USAGE and CREATE on it); a role that may not gets a
// *load.PrivilegeError naming the GRANT it lacks.
func CheckCreatable(ctx context.Context, url string, opts Options) (exists bool, err error) {
	defer classify(&err)
	shown := RedactURL(url)
	schema := cmp.Or(opts.Schema, DefaultSchema)
	if err := CheckSchemaName(schema); err != nil {
		return false, fmt.Errorf("check warehouse %s: Schema: %w", shown, err)
	}
	opts.MaxConns = 1
	cfg, err := poolConfig(url, opts, schema)
	if err != nil {
		return false, fmt.Errorf("check warehouse %s: %w", shown, err)
	}
	password := cfg.ConnConfig.Password
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return false, fmt.Errorf("check warehouse %s: %w", shown, scrub(err, password))
	}
	defer pool.Close()
	// A warning that a new warehouse would start beside another schema's
	// is the sync's to log, not check's.
	quiet := slog.New(slog.DiscardHandler)
	migrated, err := checkSchema(ctx, pool, schema, opts.Schema != "", false, quiet)
	if err != nil {
		return false, fmt.Errorf("check warehouse %s: %w", shown, scrub(err, password))
	}
	if migrated {
		return true, nil
	}
	if err := checkCreatable(ctx, pool, schema, shown); err != nil {
		return false, scrub(err, password)
	}
	return false, nil
}

// checkCreatable is the check of schema, which holds no warehouse yet:
// the session may write (not a standby, default_transaction_read_only
// off) and the role may create the warehouse's tables in it, USAGE and
// CREATE on the schema being what the first migration needs (the tables
// it creates are then the role's own).
func checkCreatable(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, schema, shown string) error {
	var ro, role string
	var usage, create bool
	if err := q.QueryRow(ctx, `SELECT current_setting('transaction_read_only'), current_user::text,
		coalesce(has_schema_privilege(to_regnamespace($1), 'USAGE'), false),
		coalesce(has_schema_privilege(to_regnamespace($1), 'CREATE'), false)`,
		searchPath(schema)).Scan(&ro, &role, &usage, &create); err != nil {
		return fmt.Errorf("check the privileges on schema %s of %s: %w", schema, shown, err)
	}
	if ro == "on" {
		return &notWritableError{msg: fmt.Sprintf("the warehouse database %s is read-only for role %s (default_transaction_read_only is on, or the server is a standby)", shown, role)}
	}
	var lacks string
	switch {
	case !usage && !create:
		lacks = "USAGE and CREATE"
	case !usage:
		lacks = "USAGE"
	case !create:
		lacks = "CREATE"
	default:
		return nil
	}
	return &load.PrivilegeError{Role: role, Warehouse: shown, Action: "create the warehouse's tables in schema " + schema + " of",
		Lacks: lacks + " on schema " + schema,
		Grant: fmt.Sprintf("GRANT USAGE, CREATE ON SCHEMA %s TO %s", pgx.Identifier{schema}.Sanitize(), pgx.Identifier{role}.Sanitize())}
}
