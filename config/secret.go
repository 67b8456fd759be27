package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cardsync/cardsync/extract"
)

// CredentialName is the systemd credential (LoadCredential=) that holds the
// API password: $CREDENTIALS_DIRECTORY/api-password.
const CredentialName = "api-password"

// loadPassword finds the API password: CARDSYNC_API_PASSWORD, then systemd's
// $CREDENTIALS_DIRECTORY/api-password, then api.password_file.
func (c *Config) loadPassword(getenv func(string) string) (extract.Secret, error) {
	if c.password != "" {
		return c.password, nil
	}
	return credentialOrFile(getenv, CredentialName, c.API.PasswordFile,
		func(format string, args ...any) error { return c.fail("api.password_file", format, args...) },
		"no password: set api.password_file, CARDSYNC_API_PASSWORD, or a systemd credential api-password")
}

// credentialOrFile reads a password from systemd's credential credName
// ($CREDENTIALS_DIRECTORY/credName) when there is one, else from file (its
// mode checked); fail builds the error naming the key of file, missing is
// its message when file is not set either.
func credentialOrFile(getenv func(string) string, credName, file string, fail func(format string, args ...any) error, missing string) (extract.Secret, error) {
	if dir := getenv("CREDENTIALS_DIRECTORY"); dir != "" {
		p := filepath.Join(dir, credName)
		if _, err := os.Stat(p); err == nil {
			return readSecretFile(p, false)
		}
	}
	if file == "" {
		return "", fail("%s", missing)
	}
	pw, err := readSecretFile(file, true)
	if err != nil {
		return "", fail("%v", err)
	}
	return pw, nil
}

// readSecretFile reads a one-line secret. With checkMode, a file that group
// or others may read is refused, as OpenSSH refuses a private key.
func readSecretFile(path string, checkMode bool) (extract.Secret, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open password file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat password file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("password file %s is not a regular file", path)
	}
	if checkMode && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("password file %s has permissions %04o: readable by group or others; chmod 600 it", path, fi.Mode().Perm())
	}
	buf, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil {
		return "", fmt.Errorf("read password file: %w", err)
	}
	if len(buf) > 4096 {
		return "", fmt.Errorf("password file %s is larger than 4096 bytes", path)
	}
	pw := strings.TrimRight(string(buf), "\r\n")
	if pw == "" {
		return "", fmt.Errorf("password file %s is empty", path)
	}
	return extract.Secret(pw), nil
}
