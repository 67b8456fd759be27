package main

import (
	"strings"
	"testing"

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
