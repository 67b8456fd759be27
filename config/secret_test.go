package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specialFile makes a FIFO or a directory at a new path in t.TempDir().
func specialFile(t *testing.T, kind string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pw-"+kind)
	var err error
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(p, 0o600)
	case "dir":
		err = os.Mkdir(p, 0o700)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// settingsQuickly runs Settings and fails the test if it does not return
// within a generous bound (a FIFO used to block open(2) forever).
func settingsQuickly(t *testing.T, cfg *Config, getenv func(string) string) (Settings, error) {
	t.Helper()
	type result struct {
		s   Settings
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := cfg.Settings(true, getenv)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("Settings still blocked after 30s")
		return Settings{}, nil
	}
}

// TestPasswordFileRules: a password file must be a regular file with one
// line; anything else is refused at once with an error naming the key and
// its source, never the content.
func TestPasswordFileRules(t *testing.T) {
	const secret = "s3cret"
	tests := []struct {
		name    string
		path    func(t *testing.T) string
		want    string // "" = accepted
		wantErr string
	}{
		{name: "one line with a newline", path: func(t *testing.T) string { return writeFile(t, "pw", secret+"\n", 0o600) }, want: secret},
		{name: "one line with CRLF", path: func(t *testing.T) string { return writeFile(t, "pw", secret+"\r\n", 0o600) }, want: secret},
		{name: "one line without a newline", path: func(t *testing.T) string { return writeFile(t, "pw", secret, 0o600) }, want: secret},
		{name: "symlink to a regular file", path: func(t *testing.T) string {
			p := writeFile(t, "pw", secret+"\n", 0o600)
			l := filepath.Join(t.TempDir(), "link")
			if err := os.Symlink(p, l); err != nil {
				t.Fatal(err)
			}
			return l
		}, want: secret},
		{name: "two lines", path: func(t *testing.T) string { return writeFile(t, "pw", secret+"\nsecond-line\n", 0o600) }, wantErr: "more than one line"},
		{name: "an empty second line", path: func(t *testing.T) string { return writeFile(t, "pw", secret+"\n\n", 0o600) }, wantErr: "more than one line"},
		{name: "a carriage return inside", path: func(t *testing.T) string { return writeFile(t, "pw", secret+"\rx", 0o600) }, wantErr: "more than one line"},
		{name: "empty", path: func(t *testing.T) string { return writeFile(t, "pw", "\n", 0o600) }, wantErr: "is empty"},
		{name: "FIFO", path: func(t *testing.T) string { return specialFile(t, "fifo") }, wantErr: "a named pipe (FIFO), not a regular file"},
		{name: "directory", path: func(t *testing.T) string { return specialFile(t, "dir") }, wantErr: "a directory, not a regular file"},
		{name: "missing", path: func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, wantErr: "no such file"},
		{name: "too large", path: func(t *testing.T) string { return writeFile(t, "pw", strings.Repeat("x", 5000), 0o600) }, wantErr: "larger than 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pw := tt.path(t)
			path := writeFile(t, "c.toml", "[api]\nbase_url = \"https://api.example.com\"\nemail = \"a@example.com\"\npassword_file = \""+pw+"\"\n", 0o600)
			cfg, err := Load(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			s, err := settingsQuickly(t, cfg, noEnv)
			if tt.wantErr == "" {
				if err != nil || s.Password.Reveal() != tt.want {
					t.Fatalf("Settings: %v; want the password", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != "api.password_file" || ce.Source.Line != 4 {
				t.Fatalf("err = %v; want a *Error for api.password_file at line 4", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path+":4") {
				t.Errorf("err = %q; want it to contain %q and %s:4", err, tt.wantErr, path)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "second-line") {
				t.Errorf("error shows the content: %v", err)
			}
		})
	}
}

// TestCredentialRules: a systemd credential follows the same rules, and
// its error names the credential.
func TestCredentialRules(t *testing.T) {
	for _, tt := range []struct {
		name, wantErr string
		make          func(t *testing.T, p string)
	}{
		{"two lines", "more than one line", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte("s3cret\nsecond-line\n"), 0o400); err != nil {
				t.Fatal(err)
			}
		}},
		{"FIFO", "named pipe", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.make(t, filepath.Join(dir, CredentialName))
			path := writeFile(t, "c.toml", "[api]\nbase_url = \"https://x.example\"\nemail = \"a@example.com\"\n", 0o600)
			cfg, err := Load(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = settingsQuickly(t, cfg, func(k string) string {
				if k == "CREDENTIALS_DIRECTORY" {
					return dir
				}
				return ""
			})
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != "api.password_file" || !strings.Contains(err.Error(), "env CREDENTIALS_DIRECTORY") ||
				!strings.Contains(err.Error(), "systemd credential api-password") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v; want a *Error naming the credential and %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "second-line") {
				t.Errorf("error shows the content: %v", err)
			}
		})
	}
}
