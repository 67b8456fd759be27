package config

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/cardsync/cardsync/extract"
)

// CredentialName is the systemd credential (LoadCredential=) that holds the
// API password: $CREDENTIALS_DIRECTORY/api-password.
const CredentialName = "api-password"

// maxSecretBytes bounds a password file.
const maxSecretBytes = 4096

// loadPassword finds the API password: CARDSYNC_API_PASSWORD, then systemd's
// $CREDENTIALS_DIRECTORY/api-password, then api.password_file.
func (c *Config) loadPassword(getenv func(string) string) (extract.Secret, error) {
	if c.password != "" {
		return c.password, nil
	}
	return credentialOrFile(getenv, CredentialName, "api.password_file", c.API.PasswordFile,
		func(format string, args ...any) error { return c.fail("api.password_file", format, args...) },
		"no password: set api.password_file, CARDSYNC_API_PASSWORD, or a systemd credential api-password")
}

// secretFrom says where credentialOrFile found a password: the systemd
// credential credName when there is one, else the file of key (with where
// key was set).
func (c *Config) secretFrom(getenv func(string) string, credName, key, file string) string {
	if dir := getenv("CREDENTIALS_DIRECTORY"); dir != "" {
		if _, err := os.Lstat(filepath.Join(dir, credName)); err == nil {
			return "the systemd credential " + credName
		}
	}
	where := ""
	if src := c.Source(key); src.Kind != FromDefault {
		where = " (" + src.String() + ")"
	}
	return key + " " + strconv.Quote(file) + where
}

// credentialOrFile reads a password from systemd's credential credName
// ($CREDENTIALS_DIRECTORY/credName) when there is one, else from file (its
// mode checked); key is the config key of file, fail builds the error
// naming it and its source, missing is its message when file is not set
// either. A credential that cannot be used is an *Error naming key and
// the credential.
func credentialOrFile(getenv func(string) string, credName, key, file string, fail func(format string, args ...any) error, missing string) (extract.Secret, error) {
	if dir := getenv("CREDENTIALS_DIRECTORY"); dir != "" {
		p := filepath.Join(dir, credName)
		if _, err := os.Lstat(p); err == nil {
			pw, err := readSecretFile(p, false)
			if err != nil {
				return "", &Error{Key: key, Source: Source{Kind: FromEnv, Name: "CREDENTIALS_DIRECTORY"},
					Msg: fmt.Sprintf("systemd credential %s: %v", credName, err)}
			}
			return pw, nil
		}
	}
	if file == "" {
		return "", fail("%s", missing)
	}
	pw, err := readSecretFile(file, true)
	if err != nil {
		e := fail("%v", err)
		if ce, ok := e.(*Error); ok && ce.err == nil {
			// The cause stays inspectable: a fix tells a mode refused
			// (*SecretModeError) from a file missing or unreadable.
			ce.err = err
		}
		return "", e
	}
	return pw, nil
}

// SecretModeError is a password file that group or others may read,
// which cardsync refuses to use.
type SecretModeError struct {
	// Path is the file; Perm its permission bits.
	Path string
	Perm fs.FileMode
}

// Error implements error.
func (e *SecretModeError) Error() string {
	return fmt.Sprintf("password file %s has permissions %04o: readable by group or others; chmod 600 it", e.Path, e.Perm)
}

// readSecretFile reads a one-line secret: a regular file (a symbolic link
// to one is fine) holding one line, a trailing "\n" or "\r\n" allowed. The
// file type is checked before the file is opened, and the open does not
// block, so a FIFO or a device given by mistake is refused at once instead
// of hanging the command in open(2). With checkMode, a file that group or
// others may read is refused, as OpenSSH refuses a private key. Errors name
// the path, never the content.
func readSecretFile(path string, checkMode bool) (extract.Secret, error) {
	fail := func(format string, args ...any) (extract.Secret, error) {
		return "", fmt.Errorf(format, args...)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fail("password file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fail("password file %s is %s, not a regular file", path, fileKind(fi.Mode()))
	}
	if checkMode && fi.Mode().Perm()&0o077 != 0 {
		return "", &SecretModeError{Path: path, Perm: fi.Mode().Perm()}
	}
	// O_NONBLOCK: should the file be swapped for a FIFO between the check
	// and the open, the open still returns at once; the type is checked
	// again on the open file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fail("open password file: %w", err)
	}
	defer f.Close()
	if ofi, err := f.Stat(); err != nil || !ofi.Mode().IsRegular() || !os.SameFile(fi, ofi) {
		return fail("password file %s changed while it was opened", path)
	}
	buf, err := io.ReadAll(io.LimitReader(f, maxSecretBytes+1))
	if err != nil {
		return fail("read password file %s: %w", path, err)
	}
	if len(buf) > maxSecretBytes {
		return fail("password file %s is larger than %d bytes", path, maxSecretBytes)
	}
	pw, ok := bytes.CutSuffix(buf, []byte("\n"))
	if ok {
		pw, _ = bytes.CutSuffix(pw, []byte("\r"))
	}
	if bytes.ContainsAny(pw, "\r\n") {
		return fail("password file %s has more than one line: it must hold the password alone on one line (a trailing newline is fine)", path)
	}
	if len(pw) == 0 {
		return fail("password file %s is empty", path)
	}
	return extract.Secret(pw), nil
}

// fileKind names a file type for an error.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
