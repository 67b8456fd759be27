package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestWritableNeedsWritePrivileges: a role with only USAGE and SELECT (the
// README's analyst) opens an up-to-date warehouse read-only, but Writable
// refuses it with load.ErrNotWritable naming the role and the first
// privilege it lacks; a writing Open says the same instead of claiming to
// migrate from 001_init.sql. A role granted everything but one privilege
// is refused by name; granted that too (and owning nothing, without CREATE
// on the schema) it opens, is writable and syncs a page.
func TestWritableNeedsWritePrivileges(t *testing.T) {
	w, u, _ := openPG(t, Options{})
	ctx := t.Context()
	if err := w.Writable(ctx); err != nil {
		t.Fatalf("Writable as the owner: %v", err)
	}
	ro := readOnlyRole(t, u)
	role := strings.Split(strings.TrimPrefix(ro, "postgres://"), "@")[0]

	r, err := Open(ctx, ro, Options{ReadOnly: true, Password: "analyst-pw"})
	if err != nil {
		t.Fatalf("read-only Open: %v", err)
	}
	defer r.Close()
	err = r.Writable(ctx)
	if !errors.Is(err, load.ErrNotWritable) || !errors.Is(err, load.ErrWarehouse) ||
		!strings.Contains(err.Error(), "role "+role+" cannot write the warehouse") || !strings.Contains(err.Error(), "INSERT on table sync_runs") {
		t.Errorf("Writable as the read-only role: %v; want load.ErrNotWritable naming %s and INSERT on table sync_runs", err, role)
	}
	// The refusal names the GRANT that gives every privilege a sync
	// uses; it is the one run below, so a sync (whose inserts fill
	// identity columns) proves it is enough.
	var pe *load.PrivilegeError
	grant := `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "public" TO "` + role + `"`
	if !errors.As(err, &pe) || pe.Grant != grant {
		t.Fatalf("Writable as the read-only role: %v (%#v); want a *load.PrivilegeError granting %s", err, pe, grant)
	}

	_, err = Open(ctx, ro, Options{Password: "analyst-pw"})
	if !errors.Is(err, load.ErrNotWritable) || strings.Contains(err.Error(), "001_init") || !strings.Contains(err.Error(), "role "+role+" cannot write") {
		t.Errorf("writing Open as the read-only role: %v; want load.ErrNotWritable naming the role, no migration", err)
	}

	adminExec(t, u, pe.Grant, `REVOKE DELETE ON walk_seen FROM `+role)
	if err := r.Writable(ctx); !errors.Is(err, load.ErrNotWritable) || !strings.Contains(err.Error(), "DELETE on table walk_seen") {
		t.Errorf("Writable without DELETE on walk_seen: %v", err)
	}

	adminExec(t, u, `GRANT DELETE ON walk_seen TO `+role)
	if err := r.Writable(ctx); err != nil {
		t.Errorf("Writable with every privilege: %v", err)
	}
	rw, err := Open(ctx, ro, Options{Password: "analyst-pw"})
	if err != nil {
		t.Fatalf("writing Open as a role that may write every table: %v", err)
	}
	defer rw.Close()
	if err := rw.Writable(ctx); err != nil {
		t.Errorf("Writable: %v", err)
	}
	commit(t, rw, startRun(t, rw), cardsPage("1", `{"id":1}`))

	// A role whose sessions are read-only is refused as such: the text
	// speaks of the database and the role, not of a file.
	adminExec(t, u, `ALTER ROLE `+role+` SET default_transaction_read_only = on`)
	rr, err := Open(ctx, ro, Options{ReadOnly: true, Password: "analyst-pw"})
	if err != nil {
		t.Fatalf("read-only Open of a read-only role: %v", err)
	}
	defer rr.Close()
	err = rr.Writable(ctx)
	if !errors.Is(err, load.ErrNotWritable) || !strings.Contains(err.Error(), "read-only for role "+role) || strings.Contains(err.Error(), "file") {
		t.Errorf("Writable as a role with default_transaction_read_only: %v; want load.ErrNotWritable naming the role, no file", err)
	}
}

// TestMigrateOutdatedWithoutPrivilege: a role that may not change the
// schema, on a database one version behind, is told so by name (wrapping
// load.ErrNotWritable), and the migration it cannot apply is named.
func TestMigrateOutdatedWithoutPrivilege(t *testing.T) {
	_, u, _ := openPG(t, Options{})
	ro := readOnlyRole(t, u)
	role := strings.Split(strings.TrimPrefix(ro, "postgres://"), "@")[0]
	latest := SchemaVersion()
	adminExec(t, u, `DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)`)
	_, err := Open(t.Context(), ro, Options{Password: "analyst-pw"})
	if !errors.Is(err, load.ErrNotWritable) || !strings.Contains(err.Error(), "role "+role+" cannot change the warehouse's schema") ||
		strings.Contains(err.Error(), "001_init") {
		t.Errorf("writing Open of schema %d as the read-only role: %v", latest-1, err)
	}
}
