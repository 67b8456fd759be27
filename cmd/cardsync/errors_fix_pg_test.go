package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cardsync/cardsync/sim"
)

// TestPostgresErrorsNameTheFix: a PostgreSQL server's refusals at the
// start of a session (a wrong password, no such database, no such role)
// and a role that may read but not write an up-to-date warehouse each
// get a FAIL line from check, and an error and a fix line from backfill,
// naming what to create, grant or correct.
func TestPostgresErrorsNameTheFix(t *testing.T) {
	admin := pgURL(t)
	_, e := newEnv(t, sim.Options{Seed: 12, Cards: 5})
	delete(e.vars, "CARDSYNC_WAREHOUSE_PATH")
	e.vars["CARDSYNC_WAREHOUSE_URL"] = admin
	if code, out, errOut := e.run(t.Context(), "backfill"); code != exitOK {
		t.Fatalf("backfill as the owner: exit %d\n%s\n%s", code, out, errOut)
	}
	n := time.Now().UnixNano()
	reader := fmt.Sprintf("reader_%d", n)
	dropRole(t, admin, reader)
	pgAdmin(t, admin, `CREATE ROLE `+reader+` LOGIN PASSWORD 'reader-pw'`,
		`GRANT USAGE ON SCHEMA public TO `+reader, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO `+reader)
	pwRole := fmt.Sprintf("pw_%d", n)
	dropRole(t, admin, pwRole)
	pgAdmin(t, admin, `CREATE ROLE `+pwRole+` LOGIN PASSWORD 'right-pw'`)
	requirePassword(t, admin, pwRole)

	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	as := func(role, db string) string {
		v := *u
		v.User = url.User(role)
		if db != "" {
			v.Path = "/" + db
		}
		return v.String()
	}
	grant := `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "public" TO "` + reader + `"`
	for _, tc := range []struct {
		name, url, password string
		want                []string
	}{
		{"wrong password", as(pwRole, ""), "wrong-pw",
			[]string{"the server refused the password of role " + pwRole, "CARDSYNC_WAREHOUSE_PASSWORD", "warehouse.password_file"}},
		{"no such database", as("postgres", "nope_db"), "",
			[]string{"the database nope_db does not exist", "createdb -O postgres nope_db", "correct the database of warehouse.url"}},
		{"no such role", as("nobody_here", ""), "",
			[]string{"the server refused role nobody_here", `CREATE ROLE "nobody_here" LOGIN`, "correct the user of warehouse.url"}},
		{"role that may only read", as(reader, ""), "reader-pw",
			[]string{"as the schema's owner or a superuser, run: " + grant}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.vars["CARDSYNC_WAREHOUSE_URL"] = tc.url
			e.vars["CARDSYNC_WAREHOUSE_PASSWORD"] = tc.password
			if tc.password == "" {
				delete(e.vars, "CARDSYNC_WAREHOUSE_PASSWORD")
			}
			code, out, errOut := e.run(t.Context(), "check")
			fail := fixLine(out, "FAIL  ")
			for _, w := range tc.want {
				if code != exitWarehouse || !strings.Contains(fail, w) {
					t.Errorf("check: exit %d, want 6 and a FAIL line naming %q\n%s\n%s", code, w, out, errOut)
				}
			}
			code, out, errOut = e.run(t.Context(), "backfill")
			errorBeforeFix(t, errOut)
			line := fixLine(errOut, "cardsync backfill: ")
			for _, w := range tc.want {
				if code != exitWarehouse || !strings.Contains(line, w) {
					t.Errorf("backfill: exit %d, want 6 and a fix naming %q\n%s\n%s", code, w, out, errOut)
				}
			}
		})
	}
}

// dropRole drops role (and what it owns) when t ends.
func dropRole(t *testing.T, url, role string) {
	t.Cleanup(func() {
		// t's context has ended by now: the cleanup uses its own.
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(context.Background())
		for _, s := range []string{`DROP OWNED BY ` + role, `DROP ROLE ` + role} {
			if _, err := conn.Exec(context.Background(), s); err != nil {
				t.Errorf("%s: %v", s, err)
			}
		}
	})
}

// requirePassword makes the test server (whose other roles are trusted)
// ask role for its password, until t ends: rules for role go first in
// pg_hba.conf, and the server reloads it.
func requirePassword(t *testing.T, url, role string) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var path, old string
	if err := conn.QueryRow(ctx, `SELECT current_setting('hba_file'), pg_read_file(current_setting('hba_file'))`).Scan(&path, &old); err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, typ := range []string{"local all " + role, "host all " + role + " 0.0.0.0/0", "host all " + role + " ::/0"} {
		rules = append(rules, typ+" scram-sha-256")
	}
	writeHBA(t, url, path, append(rules, strings.Split(old, "\n")...))
	t.Cleanup(func() { writeHBA(t, url, path, strings.Split(old, "\n")) })
	// The server reloads the file asynchronously: wait until a session
	// of role without its password is refused (each attempt is a round
	// trip to the server, so this loop needs no pause).
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.User, cfg.Password = role, ""
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := pgx.ConnectConfig(ctx, cfg)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "28P01" {
			return
		}
		if c != nil {
			c.Close(ctx)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still lets %s in without its password after reloading pg_hba.conf: %v", role, err)
		}
	}
}

// writeHBA writes lines (less the empty ones) to the server's
// pg_hba.conf at path and reloads it.
func writeHBA(t *testing.T, url, path string, lines []string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var kept []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			kept = append(kept, l)
		}
	}
	// CSV with a delimiter and a quote no line holds: every line is
	// written as it is.
	for _, s := range []string{`CREATE TEMP TABLE hba (n int, line text)`,
		`INSERT INTO hba SELECT n, line FROM unnest($1::text[]) WITH ORDINALITY AS x(line, n)`,
		`COPY (SELECT line FROM hba ORDER BY n) TO ` + quoteLiteral(path) + ` WITH (FORMAT csv, DELIMITER E'\x02', QUOTE E'\x01')`,
		`SELECT pg_reload_conf()`} {
		var args []any
		if strings.Contains(s, "$1") {
			args = append(args, kept)
		}
		if _, err := conn.Exec(ctx, s, args...); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	var bad int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_hba_file_rules WHERE error IS NOT NULL`).Scan(&bad); err != nil || bad > 0 {
		t.Fatalf("pg_hba.conf as written: %d bad rules (%v)", bad, err)
	}
}

// quoteLiteral quotes a PostgreSQL string literal.
func quoteLiteral(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }
