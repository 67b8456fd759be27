package main

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// fixEnv is one error scenario's deployment: a simulator on loopback, a
// config file naming it (the password in a file beside it, short waits:
// api.max_wait (maxWait) and api.timeout 1s) and a warehouse path in a
// temporary directory.
type fixEnv struct {
	srv     *sim.Server
	baseURL string // the simulator's
	dir     string
	cfg     string // the config file
	db      string // the warehouse
	backup  string // a backup a scenario took
	// maxWait is api.max_wait in the file writeConfig writes.
	maxWait string
}

func newFixEnv(t *testing.T) *fixEnv {
	t.Helper()
	srv := sim.New(sim.Options{Seed: 1, Cards: 30, Window: time.Second, Limit: 1000, AuthLimit: 100})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	f := &fixEnv{srv: srv, baseURL: ts.URL, dir: dir, cfg: filepath.Join(dir, "cardsync.toml"), db: filepath.Join(dir, "warehouse.db"),
		maxWait: "1s"}
	writeTestFile(t, filepath.Join(dir, "password"), sim.DefaultPassword+"\n", 0o600)
	f.writeConfig(t, ts.URL, "", "")
	return f
}

// writeConfig writes the config file with base as api.base_url, apiExtra
// added to the [api] table and tail (a [warehouse] table replaces the
// default one) after it. base_url is on line 2, email on line 3,
// password_file on line 4.
func (f *fixEnv) writeConfig(t *testing.T, base, apiExtra, tail string) {
	t.Helper()
	text := "[api]\nbase_url = \"" + base + "\"\nemail = \"" + sim.DefaultEmail + "\"\npassword_file = \"password\"\n" +
		"rate_limit = \"1000/1s\"\nauth_rate_limit = \"100/1s\"\nmax_wait = \"" + f.maxWait + "\"\ntimeout = \"1s\"\n" + apiExtra +
		"\n[log]\nformat = \"json\"\nlevel = \"info\"\n"
	if !strings.Contains(tail, "[warehouse") {
		text += "\n[warehouse]\npath = \"warehouse.db\"\n"
	}
	writeTestFile(t, f.cfg, text+tail, 0o600)
}

// run runs cardsync in-process with nothing in its environment: every
// setting comes from the flags and the config file.
func (f *fixEnv) run(ctx context.Context, args ...string) (int, string, string) {
	e := &env{vars: map[string]string{}}
	return e.run(ctx, args...)
}

// mustRun runs a step that must succeed and returns its stdout.
func (f *fixEnv) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := f.run(t.Context(), args...)
	if code != exitOK {
		t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
	}
	return out
}

// readOnlyDir points the warehouse at a file in ro/, a directory nobody
// may write (mode 0555).
func (f *fixEnv) readOnlyDir(t *testing.T) {
	t.Helper()
	ro := filepath.Join(f.dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	f.db = filepath.Join(ro, "warehouse.db")
	f.writeConfig(t, f.baseURL, "", "[warehouse]\npath = \"ro/warehouse.db\"\n")
}

func writeTestFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// serviceUID is the unprivileged user permission scenarios run as under
// root: a plain number, no passwd entry needed.
const serviceUID = 40001

// asServiceUser runs the calling (sub)test again in a child test process
// as serviceUID when this process runs as root, who may write any file
// whatever its mode, and reports whether it did: the caller then returns,
// the child's verdict being the test's. Otherwise (not root, or already
// the child) it reports false and the test goes on here. The child runs
// the same in-process test (Main.Run), not the built binary; bin gives
// the test binary where serviceUID may run it (childBinary).
func asServiceUser(t *testing.T, bin func() (string, error)) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	exe, err := bin()
	if err != nil {
		t.Fatalf("copy the test binary for uid %d: %v", serviceUID, err)
	}
	var pattern []string
	for _, part := range strings.Split(t.Name(), "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run", strings.Join(pattern, "/"), "-test.count", "1", "-test.v")
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "HOME=/", "TMPDIR=/tmp")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: serviceUID, Gid: serviceUID}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("as uid %d: %v\n%s", serviceUID, err, out)
	}
	return true
}

// childBinary returns, once, this test binary copied where serviceUID may
// run it (the go tool builds it in a directory only its user may enter);
// the copy is removed when t ends.
func childBinary(t *testing.T) func() (string, error) {
	var dir string
	t.Cleanup(func() {
		if dir != "" {
			os.RemoveAll(dir)
		}
	})
	return sync.OnceValues(func() (string, error) {
		self, err := os.Executable()
		if err != nil {
			return "", err
		}
		if dir, err = os.MkdirTemp("", "cardsync-test-bin-"); err != nil {
			return "", err
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			return "", err
		}
		src, err := os.Open(self)
		if err != nil {
			return "", err
		}
		defer src.Close()
		path := filepath.Join(dir, "cardsync.test")
		dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
		if err != nil {
			return "", err
		}
		if _, err := io.Copy(dst, src); err != nil {
			dst.Close()
			return "", err
		}
		return path, dst.Close()
	})
}
