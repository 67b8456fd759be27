package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/config"

	"github.com/cardsync/cardsync/sim"
)

// TestBadValueNamesItsSource gives the same bad value through each layer:
// the error names the flag, the variable, or the file and line that set it,
// never a layer it did not come from.
func TestBadValueNamesItsSource(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(file, []byte("[log]\nformat = \"json\"\nlevel = \"info\"\n[warehouse]\ncommit_delay = \"1s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[log]\nformat = \"json\"\nlevel = \"loud\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		vars map[string]string
		want string
	}{
		{name: "flag", args: []string{"-config", file, "-log-level", "loud"}, want: `config: flag -log-level: log.level: "loud"`},
		{name: "variable", args: []string{"-config", file}, vars: map[string]string{"CARDSYNC_LOG_LEVEL": "loud"}, want: `config: env CARDSYNC_LOG_LEVEL: log.level: "loud"`},
		{name: "file", args: []string{"-config", bad}, want: "config: " + bad + `:3: log.level: "loud"`},
		{name: "field_retention from a variable", args: []string{"-config", file}, vars: map[string]string{"CARDSYNC_WAREHOUSE_FIELD_RETENTION": "forever"}, want: `config: env CARDSYNC_WAREHOUSE_FIELD_RETENTION: warehouse.field_retention: "forever"`},
		{name: "commit_delay from a variable", args: []string{"-config", file}, vars: map[string]string{"CARDSYNC_WAREHOUSE_COMMIT_DELAY": "soon"}, want: "config: env CARDSYNC_WAREHOUSE_COMMIT_DELAY: warehouse.commit_delay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := newEnv(t, sim.Options{Seed: 1, Cards: 3})
			delete(e.vars, "CARDSYNC_LOG_LEVEL")
			delete(e.vars, "CARDSYNC_LOG_FORMAT")
			for k, v := range tt.vars {
				e.vars[k] = v
			}
			code, _, errOut := e.run(t.Context(), append([]string{"backfill"}, tt.args...)...)
			if code != exitConfig || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, exitConfig, tt.want)
			}
		})
	}
}

// TestSimWriteConfigInASubdirectory: sim -write-config conf/sim.toml writes
// paths that name the files beside it, whatever the working directory the
// other commands run in (a config file's relative paths resolve against its
// directory).
func TestSimWriteConfigInASubdirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("conf", 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("conf", "sim.toml")
	o := sim.Options{Email: sim.DefaultEmail, Limit: 180, AuthLimit: 10, Window: time.Minute}
	if err := writeSimConfig(path, simConfig("http://127.0.0.1:8080", o, path), "pw"); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	cfg, err := config.Load(filepath.Join(dir, path), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "conf", "cardsync-sim.db"); cfg.Warehouse.Path != want {
		t.Errorf("warehouse.path = %q, want %q", cfg.Warehouse.Path, want)
	}
	if want := filepath.Join(dir, "conf", "sim.toml.password"); cfg.API.PasswordFile != want {
		t.Errorf("api.password_file = %q, want %q", cfg.API.PasswordFile, want)
	}
	if _, err := cfg.Settings(true, func(string) string { return "" }); err != nil {
		t.Errorf("the written configuration does not load: %v", err)
	}
}
