package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad: whatever the file holds, Load and Settings never panic, and
// either give Settings or a *Error that names a key or where the value came
// from (file:line). Seeds: config.example.toml and bad configs.
//
//	go test -run '^$' -fuzz '^FuzzLoad$' -fuzztime 30s ./config/
func FuzzLoad(f *testing.F) {
	example, err := os.ReadFile("../config.example.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(example))
	const base = "[api]\nbase_url = \"https://api.example.com\"\nemail = \"a@example.com\"\n"
	for _, s := range []string{
		base,
		base + "rate_limt = \"1/1s\"\n",
		base + "[warehous]\npath = \"x\"\n",
		base + "max_body_bytes = \"big\"\n",
		base + "timeout = \n",
		base + "rate_limit = \"fast\"\n",
		base + "timeout = \"10\"\n",
		base + "[schedule]\ncron = \"61 * * * *\"\n",
		base + "[schedule]\ncron = \"TZ=UTC\"\n",
		base + "[schedule]\ntimezone = \"Mars/Base\"\n",
		base + "[warehouse]\nfile_mode = \"0666\"\n",
		base + "[warehouse]\nmax_removed_fraction = 1.5\n",
		base + "[warehouse]\nurl = \"postgres://u:pw@localhost/db\"\n",
		base + "max_pages = 0\n",
		base + "[log]\nlevel = \"loud\"\n",
		base + "password_file = \"/dev/null\"\n",
		base + "password_file = \".\"\n",
		"[[accounts]]\nname = \"alpha\"\nbase_url = \"https://alpha.example.com\"\nemail = \"a@example.com\"\n[[accounts]]\nname = \"alpha\"\n",
		"[api]\nbase_url = \"http://api.example.com\"\n",
		"\xEF\xBB\xBF[api]\n",
		"[api\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, file string) {
		path := filepath.Join(t.TempDir(), "c.toml")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, nil)
		if err != nil {
			checkConfigError(t, err, path)
			return
		}
		for _, needAPI := range []bool{false, true} {
			if _, err := cfg.Settings(needAPI, noEnv); err != nil {
				checkConfigError(t, err, path)
			}
		}
	})
}

// checkConfigError fails unless err is a *Error naming a key or a source.
func checkConfigError(t *testing.T, err error, path string) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %T is not a *config.Error: %v", err, err)
	}
	if ce.Key == "" && ce.Source.Kind == FromDefault && ce.Source.Name == "" {
		t.Fatalf("error names neither a key nor a source: %v", err)
	}
	if ce.Key == "" && !strings.Contains(err.Error(), path) {
		t.Fatalf("error without a key does not name the file: %v", err)
	}
}
