package config

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSuggestKey: a key one edit away from a known key (generated: each
// known key with a letter dropped, doubled, replaced or two neighbours
// swapped) suggests that key, unless the edit lands as near another known
// key too; a key far from every known one suggests none.
func TestSuggestKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := map[string]bool{}
	for _, k := range keys() {
		names[k.name] = true
	}
	for _, k := range keys() {
		name := k.name
		dot := strings.IndexByte(name, '.')
		for range 8 {
			// Edit the part after the table, as a typo in a key line does.
			i := dot + 1 + rng.IntN(len(name)-dot-1)
			var typo string
			switch rng.IntN(4) {
			case 0:
				typo = name[:i] + name[i+1:]
			case 1:
				typo = name[:i] + name[i:i+1] + name[i:]
			case 2:
				typo = name[:i] + "x" + name[i+1:]
			default:
				if i+1 >= len(name) {
					continue
				}
				typo = name[:i] + name[i+1:i+2] + name[i:i+1] + name[i+2:]
			}
			if names[typo] {
				continue
			}
			got := suggestKey(typo)
			ambiguous := false
			for other := range names {
				if other != name && editDistance(typo, other) <= editDistance(typo, name) {
					ambiguous = true
				}
			}
			switch {
			case typo == name:
			case ambiguous && got != "" && editDistance(typo, got) > editDistance(typo, name):
				t.Errorf("suggestKey(%q) = %q, farther than %q", typo, got, name)
			case !ambiguous && got != name:
				t.Errorf("suggestKey(%q) = %q, want %q", typo, got, name)
			}
		}
	}
	for _, far := range []string{"api.frobnicate", "nothing", "warehouse.colour_scheme", "x.y"} {
		if got := suggestKey(far); got != "" {
			t.Errorf("suggestKey(%q) = %q, want none", far, got)
		}
	}
}

// TestUnknownKeyError: the error of an unknown key of the file is
// ErrUnknownKey and carries the key it misspells.
func TestUnknownKeyError(t *testing.T) {
	path := writeFile(t, "c.toml", "[api]\nemial = \"a@example.com\"\n", 0o600)
	_, err := Load(path, nil)
	var ce *Error
	if !errors.As(err, &ce) || !errors.Is(err, ErrUnknownKey) || ce.Key != "api.emial" || ce.Suggest != "api.email" {
		t.Fatalf("Load = %v (%+v), want ErrUnknownKey for api.emial suggesting api.email", err, ce)
	}
	if !strings.Contains(err.Error(), `unknown key "api.emial"`) {
		t.Errorf("message %q lost its words", err)
	}
}

// TestPasswordSource: the account's sources name where its password came
// from: the variable, the systemd credential, or the file with its key.
func TestPasswordSource(t *testing.T) {
	pw := writeFile(t, "pw", "s3cret\n", 0o600)
	credDir := t.TempDir()
	writeFileAt(t, credDir, CredentialName, "from-credential\n")
	path := writeFile(t, "c.toml", "[api]\nbase_url = \"https://api.example.com\"\nemail = \"a@example.com\"\npassword_file = \""+pw+"\"\n", 0o600)
	tests := []struct {
		name    string
		environ []string
		getenv  map[string]string
		want    string
	}{
		{"file", nil, nil, `api.password_file "` + pw + `" (` + path + ":4)"},
		{"variable", []string{PasswordEnv + "=x"}, nil, PasswordEnv},
		{"credential", nil, map[string]string{"CREDENTIALS_DIRECTORY": credDir}, "the systemd credential " + CredentialName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(path, tt.environ)
			if err != nil {
				t.Fatal(err)
			}
			s, err := cfg.Settings(true, func(k string) string { return tt.getenv[k] })
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Accounts[0].From.Password; got != tt.want {
				t.Errorf("From.Password = %q, want %q", got, tt.want)
			}
			if got, want := s.Accounts[0].From.BaseURL, "api.base_url ("+path+":2)"; got != want {
				t.Errorf("From.BaseURL = %q, want %q", got, want)
			}
		})
	}
}

// writeFileAt writes content to dir/name, mode 0600.
func writeFileAt(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
