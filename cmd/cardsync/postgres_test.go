package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/internal/testbinary"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/postgres/pgtest"
	"github.com/cardsync/cardsync/sim"
)

// TestWarehouseURLConfigErrors: a URL together with a path names both keys
// and their sources; a password in the URL is refused without being
// shown; commands that only know SQLite files say what to use instead.
func TestWarehouseURLConfigErrors(t *testing.T) {
	const url = "postgres://cardsync@db.example:5432/cardsync"
	tests := []struct {
		name string
		args []string
		vars map[string]string
		keep bool // keep CARDSYNC_WAREHOUSE_PATH
		want []string
		not  string
	}{
		{name: "url and path variables", args: []string{"backfill"}, keep: true, vars: map[string]string{"CARDSYNC_WAREHOUSE_URL": url},
			want: []string{"env CARDSYNC_WAREHOUSE_URL: warehouse.url: set together with warehouse.path (env CARDSYNC_WAREHOUSE_PATH)"}},
		{name: "url and -db", args: []string{"status", "-db", "x.db"}, vars: map[string]string{"CARDSYNC_WAREHOUSE_URL": url},
			want: []string{"warehouse.url: set together with warehouse.path (flag -db)"}},
		{name: "password in the url", args: []string{"backfill"}, vars: map[string]string{"CARDSYNC_WAREHOUSE_URL": "postgres://cardsync:s3cr3t-pw@db.example/cardsync"},
			want: []string{"holds a password", "warehouse.password_file", "CARDSYNC_WAREHOUSE_PASSWORD", "warehouse-password"}, not: "s3cr3t-pw"},
		{name: "password parameter", args: []string{"backfill"}, vars: map[string]string{"CARDSYNC_WAREHOUSE_URL": url + "?password=s3cr3t-pw"},
			want: []string{"holds a password"}, not: "s3cr3t-pw"},
		{name: "password parameter in capitals", args: []string{"status"}, vars: map[string]string{"CARDSYNC_WAREHOUSE_URL": url + "?sslmode=disable&PASSWORD=s3cr3t-pw"},
			want: []string{"env CARDSYNC_WAREHOUSE_URL: warehouse.url:", "holds a password (query parameter PASSWORD)"}, not: "s3cr3t-pw"},
		{name: "not a postgres url", args: []string{"backfill"}, vars: map[string]string{"CARDSYNC_WAREHOUSE_URL": "mysql://db/x"},
			want: []string{"want postgres://"}},
		{name: "short lease", args: []string{"backfill"}, vars: map[string]string{"CARDSYNC_WAREHOUSE_URL": url, "CARDSYNC_CLUSTER_LEASE_TTL": "1s"},
			want: []string{"env CARDSYNC_CLUSTER_LEASE_TTL: cluster.lease_ttl: 1s is shorter than 2s"}},
		{name: "backups", args: []string{"backfill"}, vars: map[string]string{"CARDSYNC_WAREHOUSE_URL": url, "CARDSYNC_BACKUP_CRON": "@daily"},
			want: []string{"backup.cron", "pg_dump"}},
		{name: "backup command", args: []string{"backup"}, vars: map[string]string{"CARDSYNC_WAREHOUSE_URL": url},
			want: []string{"cardsync backup works on a SQLite warehouse", "pg_dump"}},
		{name: "restore command", args: []string{"restore", "x.db"}, vars: map[string]string{"CARDSYNC_WAREHOUSE_URL": url},
			want: []string{"pg_restore"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := newEnv(t, sim.Options{Seed: 1, Cards: 3})
			if !tt.keep {
				delete(e.vars, "CARDSYNC_WAREHOUSE_PATH")
			}
			for k, v := range tt.vars {
				e.vars[k] = v
			}
			code, out, errOut := e.run(t.Context(), tt.args...)
			if code != exitConfig {
				t.Errorf("exit %d, want %d; stderr %q", code, exitConfig, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if tt.not != "" && strings.Contains(out+errOut, tt.not) {
				t.Errorf("output shows the password: %q", out+errOut)
			}
		})
	}
}

// pg is the PostgreSQL server of this package's tests, started by the
// first test that needs one; TestMain stops it.
var pg pgtest.Lazy

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Stop()
	testbinary.Cleanup()
	os.Exit(code)
}

// pgURL returns a fresh database on the test server (the test skips
// without one, unless pgtest.EnvRequire is set).
func pgURL(t *testing.T) string {
	t.Helper()
	return pg.Get(t).NewDatabase(t)
}

// TestPostgresCommands: backfill, status (text and JSON, with the lease)
// and check on a PostgreSQL warehouse; a held lease makes backfill exit 4.
func TestPostgresCommands(t *testing.T) {
	url := pgURL(t)
	_, e := newEnv(t, sim.Options{Seed: 5, Cards: 40})
	delete(e.vars, "CARDSYNC_WAREHOUSE_PATH")
	e.vars["CARDSYNC_WAREHOUSE_URL"] = url
	e.vars["CARDSYNC_CLUSTER_HOLDER"] = "test-host:1"
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 || !strings.Contains(out, "40 cards (40 new") {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := e.run(t.Context(), "status")
	if code != 0 || !strings.Contains(out, "healthy: last success") || !strings.Contains(out, "lease      free (last held by test-host:1, fencing token 1") {
		t.Errorf("status: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = e.run(t.Context(), "status", "-json")
	var doc struct {
		Accounts []struct {
			Lease *struct {
				Holder       string `json:"holder"`
				FencingToken int64  `json:"fencing_token"`
				Expired      bool   `json:"expired"`
			} `json:"lease"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("status -json: exit %d, %v\n%s", code, err, out)
	}
	if l := doc.Accounts[0].Lease; l == nil || l.Holder != "test-host:1" || l.FencingToken != 1 || !l.Expired {
		t.Errorf("status -json lease = %+v, want test-host:1's released lease, token 1", l)
	}
	if code, out, errOut := e.run(t.Context(), "check"); code != 0 || !strings.Contains(out, "signed in") || !strings.Contains(out, "account default:") {
		t.Errorf("check: exit %d\n%s\n%s", code, out, errOut)
	}
	// Another replica holds the account: backfill is refused with exit 4.
	wh, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	if _, err := wh.AcquireLease(t.Context(), "default", "other-host:2", time.Minute); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = e.run(t.Context(), "backfill")
	if code != exitLocked || !strings.Contains(errOut, "lease held by other-host:2") {
		t.Errorf("backfill while another replica holds the lease: exit %d, want %d\n%s", code, exitLocked, errOut)
	}
	if code, out, _ := e.run(t.Context(), "status"); !strings.Contains(out, "lease      held by other-host:2 (fencing token 2)") {
		t.Errorf("status (exit %d) does not show the holder:\n%s", code, out)
	}
}

// pgAdmin runs statements on url's database as the test server's
// superuser.
func pgAdmin(t *testing.T, url string, stmts ...string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		if _, err := conn.Exec(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// pgText returns one value of a query on url's database, as text.
func pgText(t *testing.T, url, query string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var s string
	if err := conn.QueryRow(t.Context(), query).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}

// TestPostgresAnalystViewAndReadOnlyRole: an analyst's view on a
// cards_flat left by an older binary (id numeric) blocks the view's
// re-creation; backfill still succeeds (a warning, the rows committed),
// status shows the stale view. A real read-only role (LOGIN, USAGE on the
// schema, SELECT on the tables) runs status without error and without DDL,
// while check and backfill say it cannot write (exit 6); with the schema
// one version behind, status says so and check says the next sync upgrades
// it, and nothing is migrated.
func TestPostgresAnalystViewAndReadOnlyRole(t *testing.T) {
	url := pgURL(t)
	up, e := newEnv(t, sim.Options{Seed: 7, Cards: 20})
	delete(e.vars, "CARDSYNC_WAREHOUSE_PATH")
	e.vars["CARDSYNC_WAREHOUSE_URL"] = url
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	pgAdmin(t, url, `DROP VIEW cards_flat`,
		`CREATE VIEW cards_flat AS SELECT card_id, removed_at, account, (data ->> 'id')::numeric AS id, data ->> 'label' AS label FROM card_state`,
		`CREATE VIEW v AS SELECT card_id, id, label FROM cards_flat`)
	up.AddCard()
	code, out, errOut := e.run(t.Context(), "backfill")
	if code != 0 || !strings.Contains(out, "21 cards (1 new") {
		t.Fatalf("backfill with an analyst's view blocking cards_flat: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "cards_flat not re-created") {
		t.Errorf("backfill logged no warning about cards_flat:\n%s", errOut)
	}
	if n := pgText(t, url, `SELECT count(*)::text FROM v`); n != "21" {
		t.Errorf("the analyst's view has %s rows, want 21", n)
	}
	if code, out, errOut := e.run(t.Context(), "status"); code != 0 || !strings.Contains(out, "cards_flat stale") {
		t.Errorf("status: exit %d, want 0 and a cards_flat stale line\n%s\n%s", code, out, errOut)
	}

	role := fmt.Sprintf("analyst_%d", time.Now().UnixNano())
	pgAdmin(t, url, `CREATE ROLE `+role+` LOGIN PASSWORD 'analyst-pw'`,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT USAGE ON SCHEMA public TO `+role,
		`GRANT SELECT ON ALL TABLES IN SCHEMA public TO `+role)
	e.vars["CARDSYNC_WAREHOUSE_URL"] = strings.Replace(url, "postgres://postgres@", "postgres://"+role+"@", 1)
	e.vars["CARDSYNC_WAREHOUSE_PASSWORD"] = "analyst-pw"
	state := `SELECT pg_get_viewdef('cards_flat') || (SELECT count(*) FROM column_docs) || (SELECT max(version) FROM schema_migrations) || (SELECT count(*) FROM pg_class)`
	before := pgText(t, url, state)
	code, out, errOut = e.run(t.Context(), "status")
	if code != 0 || !strings.Contains(out, "healthy") || !strings.Contains(out, "cards_flat stale") {
		t.Errorf("status as the read-only role: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := e.run(t.Context(), "status", "-json"); code != 0 || !strings.Contains(out, `"cards_flat_stale": true`) {
		t.Errorf("status -json as the read-only role: exit %d\n%s\n%s", code, out, errOut)
	}
	// check proves the role can write what a sync writes: this one cannot.
	if code, out, errOut := e.run(t.Context(), "check"); code != 6 || strings.Contains(out, "accepts writes") ||
		!strings.Contains(errOut, "role "+role+" cannot write the warehouse") || !strings.Contains(errOut, "INSERT on table sync_runs") {
		t.Errorf("check as the read-only role: exit %d, want 6 naming the role and the privilege it lacks\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 6 || strings.Contains(errOut, "001_init") ||
		!strings.Contains(errOut, "role "+role+" cannot write the warehouse") {
		t.Errorf("backfill as the read-only role: exit %d, want 6 naming the role, no migration\n%s\n%s", code, out, errOut)
	}
	if after := pgText(t, url, state); after != before {
		t.Errorf("the read-only role's commands changed the database:\n%s\n%s", before, after)
	}

	latest := postgres.SchemaVersion()
	pgAdmin(t, url, fmt.Sprintf(`DELETE FROM schema_migrations WHERE version = %d`, latest))
	code, out, errOut = e.run(t.Context(), "status")
	if code == 0 || !strings.Contains(errOut, fmt.Sprintf("database schema version %d is older than this binary's %d", latest-1, latest)) {
		t.Errorf("status on an older schema: exit %d, want an error saying the schema is older\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = e.run(t.Context(), "check")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("at schema version %d; the next sync upgrades it to %d", latest-1, latest)) {
		t.Errorf("check on an older schema: exit %d\n%s\n%s", code, out, errOut)
	}
	if v := pgText(t, url, `SELECT max(version)::text FROM schema_migrations`); v != fmt.Sprint(latest-1) {
		t.Errorf("schema version %s after read-only commands, want %d", v, latest-1)
	}
}

// TestPostgresCheckEmptyDatabase: check on a fresh, empty database answers
// as on a missing SQLite file (ok, the first run creates it) once it has
// proved the role may create the tables; a role that may not gets a FAIL
// line naming the GRANT, as backfill does (exit 6, nothing created);
// after that GRANT, check passes and backfill creates the warehouse as
// that role. Nothing of check's is left in the database.
func TestPostgresCheckEmptyDatabase(t *testing.T) {
	url := pgURL(t)
	_, e := newEnv(t, sim.Options{Seed: 11, Cards: 12})
	delete(e.vars, "CARDSYNC_WAREHOUSE_PATH")
	e.vars["CARDSYNC_WAREHOUSE_URL"] = url
	tables := `SELECT count(*)::text FROM pg_class WHERE relnamespace = 'public'::regnamespace`
	code, out, errOut := e.run(t.Context(), "check")
	if code != 0 || !strings.Contains(out, "ok    warehouse") || !strings.Contains(out, "schema public holds no warehouse yet, and the role may create one there: the first run creates it") {
		t.Fatalf("check of an empty database as its owner: exit %d, want 0 and an ok line\n%s\n%s", code, out, errOut)
	}
	if n := pgText(t, url, tables); n != "0" {
		t.Errorf("check left %s objects in schema public", n)
	}

	role := fmt.Sprintf("syncer_%d", time.Now().UnixNano())
	pgAdmin(t, url, `CREATE ROLE `+role+` LOGIN PASSWORD 'syncer-pw'`, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`)
	dropRole(t, url, role)
	e.vars["CARDSYNC_WAREHOUSE_URL"] = strings.Replace(url, "postgres://postgres@", "postgres://"+role+"@", 1)
	e.vars["CARDSYNC_WAREHOUSE_PASSWORD"] = "syncer-pw"
	grant := `GRANT USAGE, CREATE ON SCHEMA "public" TO "` + role + `"`
	code, out, errOut = e.run(t.Context(), "check")
	fail := fixLine(out, "FAIL  ")
	if code != exitWarehouse || !strings.Contains(fail, "role "+role+" cannot create the warehouse's tables in schema public") ||
		!strings.Contains(fail, "it lacks CREATE on schema public") || !strings.Contains(fail, "fix: as the schema's owner or a superuser, run: "+grant) {
		t.Errorf("check as a role that may not create: exit %d, want 6 and a FAIL line naming the GRANT\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = e.run(t.Context(), "backfill")
	if code != exitWarehouse || !strings.Contains(errOut, "cardsync backfill: fix: as the schema's owner or a superuser, run: "+grant) {
		t.Errorf("backfill as a role that may not create: exit %d, want 6 naming the GRANT\n%s\n%s", code, out, errOut)
	}
	if n := pgText(t, url, tables); n != "0" {
		t.Errorf("the refused role's commands left %s objects in schema public", n)
	}

	pgAdmin(t, url, grant)
	if code, out, errOut := e.run(t.Context(), "check"); code != 0 || !strings.Contains(out, "the first run creates it") {
		t.Errorf("check after the GRANT: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 || !strings.Contains(out, "12 cards (12 new") {
		t.Fatalf("backfill after the GRANT: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := e.run(t.Context(), "check"); code != 0 || !strings.Contains(out, "accepts writes") {
		t.Errorf("check of the warehouse the role created: exit %d\n%s\n%s", code, out, errOut)
	}
}
