//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// benchPG starts a throwaway PostgreSQL cluster for one trial of the
// accounts benchmark, with PostgreSQL's shipped durability (fsync,
// synchronous_commit and full_page_writes on: pgtest turns them off for
// speed) and maxConns connections, and returns the URL of its database
// and stop, which stops the cluster and removes it. Without the Debian
// binaries the test skips.
func benchPG(t *testing.T, maxConns int) (url string, stop func()) {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(bins) == 0 {
		t.Skip("no PostgreSQL binaries (/usr/lib/postgresql/*/bin): install the postgresql package")
	}
	bin := filepath.Dir(bins[len(bins)-1])
	dir, err := os.MkdirTemp("", "cardsync-bench-pg-")
	if err != nil {
		t.Fatal(err)
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root without a postgres user")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			t.Fatalf("%s: %v: %s %s", name, err, out, log)
		}
	}
	data := filepath.Join(dir, "data")
	run("initdb", "-D", data, "--auth=trust", "-U", "postgres", "-E", "UTF8", "--locale=C")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=%d", port, dir, maxConns)
	run("pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start")
	stop = func() {
		run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), stop
}
