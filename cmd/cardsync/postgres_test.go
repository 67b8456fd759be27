package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

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
		{name: "report command", args: []string{"report", "-o", "r.html"}, vars: map[string]string{"CARDSYNC_WAREHOUSE_URL": url},
			want: []string{"cardsync report works on a SQLite warehouse"}},
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
var pg struct {
	once sync.Once
	srv  *pgtest.Server
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg.srv != nil {
		if err := pg.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
	os.Exit(code)
}

// pgURL returns a fresh database on the test server (the test skips
// without one, unless pgtest.EnvRequire is set).
func pgURL(t *testing.T) string {
	t.Helper()
	pg.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		pg.srv, pg.err = pgtest.Start(ctx)
	})
	if pg.err != nil {
		if errors.Is(pg.err, pgtest.ErrNoServer) && os.Getenv(pgtest.EnvRequire) == "" {
			t.Skip(pg.err)
		}
		t.Fatal(pg.err)
	}
	return pg.srv.NewDatabase(t)
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
