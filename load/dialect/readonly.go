package dialect

import (
	"context"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/sqlite"
)

// OpenReadOnly opens the warehouse of t read-only, for a command that only
// reads (status, check, report and serve's report refresh): it runs no DDL and writes nothing, and a
// warehouse whose schema is older than the binary is refused with a
// *load.SchemaVersionError (load.ErrSchemaTooOld) instead of upgraded.
// Every read is scoped to opts.Account; a file opened with no account is
// read whole. The load.Reader returned answers all their questions in
// either dialect (a file's writer, a server's leases: WriterFacts). A
// server's password is t.Password.
func OpenReadOnly(ctx context.Context, t Target, opts load.Options) (load.Reader, error) {
	if t.URL != "" {
		wh, err := postgres.Open(ctx, t.URL, postgres.Options{Common: opts, Password: t.Password, Schema: t.Schema,
			RequireLease: true, ReadOnly: true, MaxConns: 2})
		if err != nil {
			return nil, err
		}
		return wh, nil
	}
	var wh *sqlite.Warehouse
	var err error
	if opts.Account == "" {
		wh, err = sqlite.OpenReadOnly(ctx, t.Path)
	} else {
		wh, err = sqlite.OpenReadOnlyAccount(ctx, t.Path, opts.Account)
	}
	if err != nil {
		return nil, err
	}
	return wh, nil
}

// CheckCreatable reports whether the warehouse of t exists and, when it
// does not, proves without writing anything that the first sync can create
// it: a file's directory takes a new file (sqlite.CheckCreatable); a
// PostgreSQL schema may be created in by the role, on a server that
// accepts writes (postgres.CheckCreatable, a *load.PrivilegeError naming
// the GRANT when the role may not).
func CheckCreatable(ctx context.Context, t Target) (exists bool, err error) {
	if t.URL != "" {
		return postgres.CheckCreatable(ctx, t.URL, postgres.Options{Password: t.Password, Schema: t.Schema})
	}
	return sqlite.CheckCreatable(t.Path)
}

// SchemaVersion is the schema version this binary migrates the warehouse
// of t to (PostgreSQL's or SQLite's numbering).
func SchemaVersion(t Target) int {
	if t.URL != "" {
		return postgres.SchemaVersion()
	}
	return sqlite.SchemaVersion()
}
