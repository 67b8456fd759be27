// Package testbinary builds the cardsync command once per test process, the
// way a release is built, for the tests that run the binary itself (the
// build stamp, the end-to-end suite, packaging).
//
// Every such test used to run its own `go build` with flags of its own, so
// each missed the build cache and a package's tests spent minutes linking
// and compiling the same program. Cardsync builds it once per `go test`
// process with the release flags of packaging/dist.sh (CGO_ENABLED=0,
// -trimpath, -buildvcs=false, -ldflags "-s -w -X …" with the fixed stamp
// below) into a temporary directory, so the packages of every process
// share one build cache entry and each process links once.
//
// The build never outlives its test: it runs in a process group of its own
// that is killed when the first caller's deadline (less a margin) passes,
// and with a parent-death signal, so a test binary that panics on its
// deadline takes `go build` with it. Start does the same for any child a
// test starts: see Start.
//
// It must only be imported by tests.
package testbinary

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The stamp every test binary carries, as packaging/dist.sh's -X flags
// would set it for a release.
const (
	Version   = "v0.0.0-test"
	Revision  = "0123456789abcdef0123456789abcdef01234567"
	BuildDate = "2026-11-20T09:14:03Z"
)

// Package is the import path of the command built.
const Package = "github.com/cardsync/cardsync/cmd/cardsync"

// Flags returns the arguments of `go build` after "build", without -o and
// the package: the release flags with the test stamp.
func Flags() []string {
	return []string{"-trimpath", "-buildvcs=false", "-ldflags",
		"-s -w -X main.version=" + Version + " -X main.revision=" + Revision + " -X main.buildDate=" + BuildDate}
}

// Env returns the environment of the build: the caller's, with
// CGO_ENABLED=0 (a static binary, as released).
func Env() []string { return append(os.Environ(), "CGO_ENABLED=0") }

// The one build of this process. Package-level by necessity: "once per
// process" is the point, and the tests of a package share no other value.
var build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// deadlineMargin is how long before the first caller's deadline the build
// gives up, so that the test fails with the build's error instead of the
// whole process panicking with `go build` still running.
const deadlineMargin = 30 * time.Second

// Cardsync returns the path of the cardsync binary, building it on the
// first call of the process. The directory holding it can be read by every
// user (tests run it as other users) and is removed by Main. A failed build
// fails every test that asks, with the compiler's output.
func Cardsync(tb testing.TB) string {
	tb.Helper()
	build.once.Do(func() {
		ctx := context.Background()
		if d, ok := deadline(tb); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, d.Add(-deadlineMargin))
			defer cancel()
		}
		build.dir, build.path, build.err = compile(ctx)
	})
	if build.err != nil {
		tb.Fatalf("build cardsync: %v", build.err)
	}
	return build.path
}

// deadline is the test's deadline, when it has one (a benchmark has none).
func deadline(tb testing.TB) (time.Time, bool) {
	if t, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		return t.Deadline()
	}
	return time.Time{}, false
}

func compile(ctx context.Context) (dir, path string, err error) {
	dir, err = os.MkdirTemp("", "cardsync-test-bin-")
	if err != nil {
		return "", "", err
	}
	// Other uids (the service user of the permission tests) must reach it.
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	path = filepath.Join(dir, "cardsync")
	args := append([]string{"build"}, Flags()...)
	args = append(args, "-o", path, Package)
	cmd := exec.Command("go", args...)
	cmd.Env = Env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := Run(ctx, cmd); err != nil {
		os.RemoveAll(dir)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", "", fmt.Errorf("go build did not finish before the test's deadline: %w\n%s", err, out.Bytes())
		}
		return "", "", fmt.Errorf("go build: %w\n%s", err, out.Bytes())
	}
	return dir, path, nil
}

// Main runs the tests of a package that uses Cardsync and removes the
// binary afterwards: `func TestMain(m *testing.M) { os.Exit(testbinary.Main(m)) }`,
// or call Cleanup from a TestMain of its own.
func Main(m *testing.M) int {
	code := m.Run()
	Cleanup()
	return code
}

// Cleanup removes the binary built by this process, if any.
func Cleanup() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
}

// Own makes cmd a child that cannot outlive its test: it starts in a
// process group of its own, receives SIGKILL when the test process dies
// (a panic on the test deadline included), and when its context ends its
// whole group is killed, grandchildren included (a command made by
// exec.CommandContext; exec.Command has no context). It keeps a Credential
// or other attributes already set.
func Own(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if cmd.Cancel != nil { // made by CommandContext
		cmd.Cancel = func() error { return KillGroup(cmd) }
	}
	// A killed group may leave a grandchild holding the output pipes.
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 10 * time.Second
	}
}

// KillGroup sends SIGKILL to cmd's process group (see Own); a no-op for a
// command not started.
func KillGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Run runs cmd (see Own) to completion or until ctx ends, when its whole
// process group is killed.
func Run(ctx context.Context, cmd *exec.Cmd) error {
	Own(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			KillGroup(cmd)
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	return err
}

// Start starts cmd as a child owned by tb (see Own): when the test ends,
// its process group is killed and waited for, whatever the test did with
// it.
func Start(tb testing.TB, cmd *exec.Cmd) error {
	tb.Helper()
	Own(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	tb.Cleanup(func() { KillGroup(cmd) })
	return nil
}
