package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

func TestWarehousePasswordSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(dir, "loose")
	if err := os.WriteFile(loose, []byte("loose\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(dir, "creds")
	if err := os.Mkdir(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(creds, WarehouseCredentialName), []byte("from-credential"), 0o600); err != nil {
		t.Fatal(err)
	}
	const url = "CARDSYNC_WAREHOUSE_URL=postgres://cardsync@127.0.0.1:5432/cardsync"
	tests := []struct {
		name    string
		environ []string
		credDir string
		want    string
		wantErr string
	}{
		{name: "none", environ: []string{url}, want: ""},
		{name: "file", environ: []string{url, "CARDSYNC_WAREHOUSE_PASSWORD_FILE=" + file}, want: "from-file"},
		{name: "credential before file", environ: []string{url, "CARDSYNC_WAREHOUSE_PASSWORD_FILE=" + file}, credDir: creds, want: "from-credential"},
		{name: "variable first", environ: []string{url, "CARDSYNC_WAREHOUSE_PASSWORD=from-env", "CARDSYNC_WAREHOUSE_PASSWORD_FILE=" + file}, credDir: creds, want: "from-env"},
		{name: "file readable by others", environ: []string{url, "CARDSYNC_WAREHOUSE_PASSWORD_FILE=" + loose},
			wantErr: "env CARDSYNC_WAREHOUSE_PASSWORD_FILE: warehouse.password_file: password file " + loose + " has permissions 0644"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load("", tt.environ)
			if err != nil {
				t.Fatal(err)
			}
			s, err := c.Settings(false, func(k string) string {
				if k == "CREDENTIALS_DIRECTORY" {
					return tt.credDir
				}
				return ""
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.WarehousePassword.Reveal(); got != tt.want {
				t.Errorf("password %q, want %q", got, tt.want)
			}
			if tt.want != "" && s.Secrets.Scrub("x "+tt.want+" y") == "x "+tt.want+" y" {
				t.Error("the password is not among the secrets the logs are scrubbed of")
			}
		})
	}
}

func TestClusterDefaults(t *testing.T) {
	c, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Settings(false, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if s.LeaseTTL != load.DefaultLeaseTTL || load.DefaultLeaseTTL != 60*time.Second {
		t.Errorf("lease_ttl %s, want 60s", s.LeaseTTL)
	}
	host, _ := os.Hostname()
	// The default holder is the host name and the process's instance id
	// (issue 24: hostname:pid is not unique across PID namespaces).
	if s.Holder != host || s.HolderSet || s.ReplicaHolder("3f9a1c") != host+"-3f9a1c" {
		t.Errorf("holder %q (set %v, replica holder %q), want the host name completed with the instance id",
			s.Holder, s.HolderSet, s.ReplicaHolder("3f9a1c"))
	}
	if s.WarehouseURL != "" {
		t.Errorf("url %q by default", s.WarehouseURL)
	}
}

// TestReportPathWithURL: [report] path is accepted with [warehouse] url
// (serve refreshes the report of a PostgreSQL warehouse too), while
// [backup] cron is still refused.
func TestReportPathWithURL(t *testing.T) {
	const url = "CARDSYNC_WAREHOUSE_URL=postgres://cardsync@127.0.0.1:5432/cardsync"
	c, err := Load("", []string{url, "CARDSYNC_REPORT_PATH=/srv/www/report.html"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Settings(false, func(string) string { return "" })
	if err != nil {
		t.Fatalf("[report] path with warehouse.url: %v", err)
	}
	if s.ReportPath != "/srv/www/report.html" || s.WarehouseURL == "" {
		t.Errorf("report path %q, url %q", s.ReportPath, s.WarehouseURL)
	}
	c, err = Load("", []string{url, "CARDSYNC_BACKUP_CRON=@daily"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Settings(false, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "use pg_dump") {
		t.Errorf("[backup] cron with warehouse.url: %v, want a refusal", err)
	}
}

// TestWarehouseSchema: [warehouse] schema comes from the file or
// CARDSYNC_WAREHOUSE_SCHEMA, is "" (public) unset, is refused without a
// URL and when PostgreSQL could not name a schema so; a password in the
// URL's query is refused in any case, naming where.
func TestWarehouseSchema(t *testing.T) {
	const url = "CARDSYNC_WAREHOUSE_URL=postgres://cardsync@127.0.0.1:5432/cardsync"
	tests := []struct {
		name    string
		environ []string
		want    string
		wantErr string
	}{
		{name: "unset", environ: []string{url}, want: ""},
		{name: "variable", environ: []string{url, "CARDSYNC_WAREHOUSE_SCHEMA=cardsync"}, want: "cardsync"},
		{name: "without url", environ: []string{"CARDSYNC_WAREHOUSE_SCHEMA=cardsync"},
			wantErr: "env CARDSYNC_WAREHOUSE_SCHEMA: warehouse.schema: a schema is a PostgreSQL warehouse's"},
		{name: "too long", environ: []string{url, "CARDSYNC_WAREHOUSE_SCHEMA=" + strings.Repeat("s", 64)},
			wantErr: "warehouse.schema: schema name"},
		{name: "query that does not parse", environ: []string{url + "?host=/tmp&password=s3cret%zz"},
			wantErr: "warehouse.url: postgres://cardsync@127.0.0.1:5432/cardsync?…: its query does not parse"},
		{name: "semicolons", environ: []string{url + "?host=/tmp;password=s3cret"},
			wantErr: "its query does not parse"},
		{name: "encoded password= in a name", environ: []string{url + "?password%3Ds3cret"},
			wantErr: "holds a password (query parameter password=…)"},
		{name: "encoded colon in the user", environ: []string{"CARDSYNC_WAREHOUSE_URL=postgres://cardsync%3As3cret@127.0.0.1:5432/cardsync"},
			wantErr: "warehouse.url: postgres://cardsync%3Axxxxx@127.0.0.1:5432/cardsync holds a password (a user name holding an encoded ':' (%3A))"},
		{name: "password in capitals", environ: []string{url + "?PASSWORD=pw"},
			wantErr: "env CARDSYNC_WAREHOUSE_URL: warehouse.url: postgres://cardsync@127.0.0.1:5432/cardsync?PASSWORD=xxxxx holds a password (query parameter PASSWORD)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load("", tt.environ)
			if err != nil {
				t.Fatal(err)
			}
			s, err := c.Settings(false, func(string) string { return "" })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.WarehouseSchema != tt.want {
				t.Errorf("schema %q, want %q", s.WarehouseSchema, tt.want)
			}
		})
	}
}

// TestWarehouseMaxConnections: [warehouse] max_connections comes from the
// file or CARDSYNC_WAREHOUSE_MAX_CONNECTIONS and bounds a serve's pool
// whatever its accounts; unset, the bound is the lease connections, one
// per account and one for readers, at most 20; it is refused without a
// URL and below pgrules.MinSharedConns.
func TestWarehouseMaxConnections(t *testing.T) {
	const url = "CARDSYNC_WAREHOUSE_URL=postgres://cardsync@127.0.0.1:5432/cardsync"
	tests := []struct {
		name    string
		environ []string
		want    map[int]int32 // accounts -> PoolConns
		wantErr string
	}{
		{name: "unset", environ: []string{url}, want: map[int]int32{1: 4, 10: 13, 17: 20, 200: 20}},
		{name: "variable", environ: []string{url, "CARDSYNC_WAREHOUSE_MAX_CONNECTIONS=8"}, want: map[int]int32{1: 8, 200: 8}},
		{name: "without url", environ: []string{"CARDSYNC_WAREHOUSE_MAX_CONNECTIONS=8"},
			wantErr: "env CARDSYNC_WAREHOUSE_MAX_CONNECTIONS: warehouse.max_connections: a connection bound is a PostgreSQL warehouse's"},
		{name: "too small", environ: []string{url, "CARDSYNC_WAREHOUSE_MAX_CONNECTIONS=2"},
			wantErr: "warehouse.max_connections: 2 out of range 3..10000"},
		{name: "not a number", environ: []string{url, "CARDSYNC_WAREHOUSE_MAX_CONNECTIONS=many"},
			wantErr: "want an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load("", tt.environ)
			if err == nil {
				var s Settings
				s, err = c.Settings(false, func(string) string { return "" })
				for accounts, want := range tt.want {
					if got := s.PoolConns(accounts); err == nil && got != want {
						t.Errorf("PoolConns(%d) = %d, want %d", accounts, got, want)
					}
				}
			}
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}
