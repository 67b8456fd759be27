package pgtest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envOrphan makes the test binary start a cluster, print its directory and
// address, and die by SIGKILL without stopping it (TestReaperStopsOrphan).
const envOrphan = "PGTEST_ORPHAN_CHILD"

// TestReaperStopsOrphan: a test process killed while its throwaway cluster
// runs (no Stop, as on a deadline panic) leaves no server and no
// directory behind.
func TestReaperStopsOrphan(t *testing.T) {
	if os.Getenv(envOrphan) != "" {
		s, err := Start(context.Background())
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		u, _ := url.Parse(s.URL)
		fmt.Println(s.dir, u.Host)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	Need(t, server)
	if os.Getenv(EnvURL) != "" {
		t.Skip("a server of " + EnvURL + " is not a throwaway cluster")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestReaperStopsOrphan$")
	cmd.Env = append(os.Environ(), envOrphan+"=1")
	out, _ := cmd.Output() // killed: an error, by design
	line, _, _ := bufio.NewReader(strings.NewReader(string(out))).ReadLine()
	dir, addr, ok := strings.Cut(string(line), " ")
	if !ok || !strings.HasPrefix(dir, os.TempDir()) {
		t.Fatalf("the child printed %q, want its cluster's directory and address", out)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, statErr := os.Stat(dir)
		conn, dialErr := net.DialTimeout("tcp", addr, time.Second)
		if dialErr == nil {
			conn.Close()
		}
		if os.IsNotExist(statErr) && dialErr != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after its test process died, the cluster in %s (%s) is still there (stat: %v, dial: %v)", dir, addr, statErr, dialErr)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
