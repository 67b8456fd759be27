package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/worker"
)

// SQLSTATEs of a PostgreSQL server refusing a session at its start.
const (
	pgInvalidPassword      = "28P01" // password authentication failed
	pgInvalidAuthorization = "28000" // no such role, or pg_hba.conf refuses it
	pgInvalidCatalog       = "3D000" // no such database
)

// pgLoginFix is the fix of a PostgreSQL server refusing the session
// warehouse.url asks for, by its SQLSTATE; "" for an error of another
// kind.
func (f fixer) pgLoginFix(err error) string {
	var pe *pgconn.PgError
	if f.s.WarehouseURL == "" || !errors.As(err, &pe) {
		return ""
	}
	role, db := pgSession(err, f.s.WarehouseURL)
	switch pe.Code {
	case pgInvalidPassword:
		return fmt.Sprintf("the server refused the password of role %s: correct the password where cardsync reads it (%s, the systemd credential %s, or the file of warehouse.password_file), or set the role's password on the server (ALTER ROLE %s PASSWORD …)",
			role, config.WarehousePasswordEnv, config.WarehouseCredentialName, quoteIdent(role))
	case pgInvalidCatalog:
		return fmt.Sprintf("the database %s does not exist: create it (as a superuser: createdb -O %s %s), or correct the database of warehouse.url",
			db, worker.ShellQuote(role), worker.ShellQuote(db))
	case pgInvalidAuthorization:
		return fmt.Sprintf("the server refused role %s: if the role does not exist, create it (as a superuser: CREATE ROLE %s LOGIN PASSWORD '…') or correct the user of warehouse.url; if it does, allow it to connect to %s in the server's pg_hba.conf",
			role, quoteIdent(role), db)
	}
	return ""
}

// pgSession is the role and the database of the session that failed: the
// connection's own (defaults applied) when err says, else warehouse.url's.
func pgSession(err error, raw string) (role, db string) {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && ce.Config != nil {
		return ce.Config.User, ce.Config.Database
	}
	if u, perr := url.Parse(raw); perr == nil {
		return u.User.Username(), strings.TrimPrefix(u.Path, "/")
	}
	return "", ""
}

// quoteIdent quotes a PostgreSQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
