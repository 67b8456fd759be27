// Package pgtest gives tests a real PostgreSQL server: the one named by
// CARDSYNC_TEST_POSTGRES_URL, or a throwaway cluster started from the
// Debian binaries (/usr/lib/postgresql/*/bin: initdb into a temporary
// directory, pg_ctl on a free loopback port, run as the postgres or nobody
// user when the tests run as root) and stopped, its directory removed,
// when the tests end. Each test gets a database of its own (NewDatabase),
// so tests are independent.
//
// Without a server (no URL, no binaries) tests skip; with
// CARDSYNC_REQUIRE_TOOLS set (CI) they fail instead.
//
// It is for tests only and must not be imported by production code.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names a server to use instead of starting one:
// postgres://user:password@host:port/database. Tests create and drop
// databases on it, so the user needs CREATEDB.
const EnvURL = "CARDSYNC_TEST_POSTGRES_URL"

// EnvRequire turns a missing server into a failure instead of a skip.
const EnvRequire = "CARDSYNC_REQUIRE_TOOLS"

// ErrNoServer is returned by Start when there is neither a URL nor the
// PostgreSQL binaries.
var ErrNoServer = errors.New("no PostgreSQL server: set " + EnvURL + " or install the postgresql package")

// Server is a PostgreSQL server tests create databases on.
type Server struct {
	// URL is the server's administrative URL (its maintenance database).
	URL string

	dir    string // the throwaway cluster's directory, "" for EnvURL
	bin    string
	runAs  string // user the cluster runs as, "" when not root
	n      atomic.Int64
	stopMu sync.Mutex
	// reaper stops the cluster when this process ends however it ends
	// (see startReaper); closing reaperPipe releases it.
	reaper     *exec.Cmd
	reaperPipe *os.File
}

// Start returns the server of EnvURL, or starts a throwaway cluster with
// durability off (fsync, synchronous_commit and full_page_writes off: the
// tests measure behaviour, not the disk). Stop it when done.
func Start(ctx context.Context) (*Server, error) {
	if u := os.Getenv(EnvURL); u != "" {
		return &Server{URL: u}, nil
	}
	return start(ctx, "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
}

// StartDurable starts a throwaway cluster from the Debian binaries with
// PostgreSQL's shipped durability (fsync, synchronous_commit and
// full_page_writes on), for benchmarks that compare a commit's real cost
// with SQLite's; it never uses EnvURL, whose settings it cannot know.
// Stop it when done.
func StartDurable(ctx context.Context) (*Server, error) {
	return start(ctx, "")
}

// start initialises and starts a throwaway cluster with the server
// settings settings (-c options).
func start(ctx context.Context, settings string) (*Server, error) {
	bin := findBin()
	if bin == "" {
		return nil, ErrNoServer
	}
	s := &Server{bin: bin}
	var err error
	s.dir, err = os.MkdirTemp("", "cardsync-pg-")
	if err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		for _, name := range []string{"postgres", "nobody"} {
			u, err := user.Lookup(name)
			if err != nil {
				continue
			}
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			if err := os.Chown(s.dir, uid, gid); err != nil {
				os.RemoveAll(s.dir)
				return nil, err
			}
			s.runAs = name
			break
		}
		if s.runAs == "" {
			os.RemoveAll(s.dir)
			return nil, errors.New("running as root and neither a postgres nor a nobody user exists")
		}
	}
	data := filepath.Join(s.dir, "data")
	if out, err := s.run(ctx, "initdb", "-D", data, "--auth=trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		os.RemoveAll(s.dir)
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 %s -c max_connections=200", port, s.dir, settings)
	if out, err := s.run(ctx, "pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		os.RemoveAll(s.dir)
		return nil, fmt.Errorf("pg_ctl start: %w: %s %s", err, out, log)
	}
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	if err := s.startReaper(data); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

// startReaper starts a process that stops the cluster (pg_ctl stop -m
// immediate) and removes its directory once this process ends, however it
// ends: a test binary that panics on its deadline or is killed runs no
// Stop, and pg_ctl's server would outlive it. The reaper waits on a pipe
// whose only writer is this process: the kernel closes it when the
// process dies. It runs in a process group of its own, so no test's kill
// of a group reaches it.
func (s *Server) startReaper(data string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	stop := []string{filepath.Join(s.bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"}
	if s.runAs != "" {
		stop = append([]string{"runuser", "-u", s.runAs, "--"}, stop...)
	}
	const script = `read -r _; dir=$1; shift; "$@" >/dev/null 2>&1; rm -rf -- "$dir"`
	cmd := exec.Command("bash", append([]string{"-c", script, "pgtest-reaper", s.dir}, stop...)...)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start the cluster's reaper: %w", err)
	}
	s.reaper, s.reaperPipe = cmd, w
	return nil
}

// Stop stops a throwaway cluster and removes its directory; a server of
// EnvURL is left alone.
func (s *Server) Stop() error {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.dir == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := s.run(ctx, "pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
	if err != nil {
		err = fmt.Errorf("pg_ctl stop: %w: %s", err, out)
	}
	err = errors.Join(err, os.RemoveAll(s.dir))
	if s.reaper != nil {
		// Nothing left to stop: the reaper's pg_ctl fails quietly.
		s.reaperPipe.Close()
		_ = s.reaper.Wait()
		s.reaper = nil
	}
	s.dir = ""
	return err
}

// NewDatabase creates an empty database for one test, dropped when the test
// ends, and returns its URL.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := fmt.Sprintf("cardsync_test_%d_%d", os.Getpid(), s.n.Add(1))
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, s.URL)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatalf("test server URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// Main runs a test package's tests against one server started before them
// and stopped after them (call it from TestMain). set receives the server,
// or nil when there is none and the tests are to skip (Need).
func Main(m *testing.M, set func(*Server)) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	s, err := Start(ctx)
	cancel()
	if err != nil {
		if !errors.Is(err, ErrNoServer) || os.Getenv(EnvRequire) != "" {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "pgtest: %v: PostgreSQL tests skip\n", err)
		s = nil
	}
	set(s)
	code := m.Run()
	if s != nil {
		if err := s.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		}
	}
	return code
}

// Need skips the test when s is nil (no server; see Main).
func Need(t testing.TB, s *Server) {
	t.Helper()
	if s == nil {
		t.Skip(ErrNoServer.Error())
	}
}

func (s *Server) run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	path := filepath.Join(s.bin, prog)
	var cmd *exec.Cmd
	if s.runAs != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", s.runAs, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = s.dir
	// pg_ctl start leaves the server running with our stdout open: give it
	// none, or CombinedOutput would wait for the server to exit.
	if prog == "pg_ctl" {
		cmd.Stdout, cmd.Stderr = nil, nil
		return nil, cmd.Run()
	}
	return cmd.CombinedOutput()
}

// findBin returns the newest /usr/lib/postgresql/*/bin holding initdb.
func findBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Lazy is a server started by the first test of a package that asks for
// one (Get), for a package most of whose tests need none; its TestMain
// stops it after the tests (Stop). The zero value is ready to use.
type Lazy struct {
	once sync.Once
	srv  *Server
	err  error
}

// Get returns the server, starting it on first use; the test skips
// without one (fails with EnvRequire set).
func (l *Lazy) Get(t testing.TB) *Server {
	t.Helper()
	l.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		l.srv, l.err = Start(ctx)
	})
	if l.err != nil {
		if errors.Is(l.err, ErrNoServer) && os.Getenv(EnvRequire) == "" {
			t.Skip(l.err)
		}
		t.Fatal(l.err)
	}
	return l.srv
}

// Stop stops the server if a test started one, reporting a failure on
// standard error (call it from TestMain after m.Run).
func (l *Lazy) Stop() {
	if l.srv == nil {
		return
	}
	if err := l.srv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
	}
}
