package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres/pgtest"
)

// TestUserSchemaChangesNothing: a schema named after the role, created
// beside the warehouse (first in PostgreSQL's default search_path), gets
// nothing: a new writer opens, migrates and commits in public, and status
// names the schema.
func TestUserSchemaChangesNothing(t *testing.T) {
	w, u, clk := openPG(t, Options{})
	commit(t, w, startRun(t, w), cardsPage("1", `{"id":1}`))
	adminExec(t, u, `CREATE SCHEMA AUTHORIZATION CURRENT_USER`)
	w2, err := Open(t.Context(), u, Options{Common: load.Options{Now: clk.Now}})
	if err != nil {
		t.Fatalf("Open with a $user schema beside the warehouse: %v", err)
	}
	defer w2.Close()
	commit(t, w2, startRun(t, w2), cardsPage("2", `{"id":2}`))
	if got := one(t, pgQuery(t, w, `SELECT count(*) FROM pg_tables WHERE schemaname = current_user`)); got != "0" {
		t.Errorf("%s tables in the $user schema, want 0", got)
	}
	if got := one(t, pgQuery(t, w, `SELECT count(*) FROM public.sync_runs`)); got != "2" {
		t.Errorf("public.sync_runs has %s runs, want 2", got)
	}
	if sum, err := w2.Summary(t.Context()); err != nil || sum.Schema != "public" {
		t.Errorf("Summary.Schema = %q, %v; want public", sum.Schema, err)
	}
}

// TestNamedSchema: [warehouse] schema puts the warehouse in that schema,
// which must exist; with the key unset, an empty public beside it is
// refused (naming both and the key) and a read-only open says where the
// warehouse is; set to public explicitly, a new warehouse starts there.
func TestNamedSchema(t *testing.T) {
	pgtest.Need(t, server)
	u := server.NewDatabase(t)
	ctx := t.Context()
	if _, err := Open(ctx, u, Options{Schema: "wh"}); err == nil || !strings.Contains(err.Error(), "schema wh does not exist") {
		t.Fatalf("Open in a missing schema: %v", err)
	}
	adminExec(t, u, `CREATE SCHEMA wh`)
	w, err := Open(ctx, u, Options{Schema: "wh"})
	if err != nil {
		t.Fatalf("Open in schema wh: %v", err)
	}
	defer w.Close()
	commit(t, w, startRun(t, w), cardsPage("1", `{"id":1}`))
	if got := one(t, pgQuery(t, w, `SELECT count(*) FROM wh.sync_runs`)); got != "1" {
		t.Errorf("wh.sync_runs has %s runs, want 1", got)
	}
	_, err = Open(ctx, u, Options{})
	if err == nil || !strings.Contains(err.Error(), "schema public holds no warehouse, but schema wh") || !strings.Contains(err.Error(), "[warehouse] schema") {
		t.Errorf("Open of the empty default schema beside wh: %v; want a refusal naming both and the key", err)
	}
	if got := one(t, pgQuery(t, w, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`)); got != "0" {
		t.Errorf("the refused open left %s tables in public", got)
	}
	_, err = Open(ctx, u, Options{ReadOnly: true})
	if !errors.Is(err, load.ErrNotMigrated) || !strings.Contains(err.Error(), "schema wh does") {
		t.Errorf("read-only Open of public: %v; want ErrNotMigrated saying where the warehouse is", err)
	}
	p, err := Open(ctx, u, Options{Schema: "public"})
	if err != nil {
		t.Fatalf("Open with schema public set explicitly: %v", err)
	}
	p.Close()
}

// TestSchemaNamesThatNeedQuoting: a schema whose name needs quoting (upper
// case, a space, a dot, a quote) holds a warehouse like any other: open,
// commit, reopen, read-only summary.
func TestSchemaNamesThatNeedQuoting(t *testing.T) {
	pgtest.Need(t, server)
	for _, name := range []string{"MySchema", "my schema", "wh.x", `Odd "Sch";x`} {
		t.Run(name, func(t *testing.T) {
			u := server.NewDatabase(t)
			ctx := t.Context()
			adminExec(t, u, `CREATE SCHEMA `+searchPath(name))
			w, err := Open(ctx, u, Options{Schema: name})
			if err != nil {
				t.Fatalf("Open in schema %q: %v", name, err)
			}
			defer w.Close()
			commit(t, w, startRun(t, w), cardsPage("1", `{"id":1}`))
			w2, err := Open(ctx, u, Options{Schema: name})
			if err != nil {
				t.Fatalf("second Open in schema %q: %v", name, err)
			}
			defer w2.Close()
			commit(t, w2, startRun(t, w2), cardsPage("2", `{"id":2}`))
			ro, err := Open(ctx, u, Options{Schema: name, ReadOnly: true})
			if err != nil {
				t.Fatalf("read-only Open in schema %q: %v", name, err)
			}
			defer ro.Close()
			if sum, err := ro.Summary(ctx); err != nil || sum.Schema != name {
				t.Errorf("Summary: schema %q, %v", sum.Schema, err)
			}
			if got := one(t, pgQuery(t, w, `SELECT count(*) FROM `+searchPath(name)+`.sync_runs`)); got != "2" {
				t.Errorf("%s runs in schema %q, want 2", got, name)
			}
		})
	}
}
