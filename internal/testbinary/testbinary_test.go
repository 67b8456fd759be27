package testbinary

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gone waits until no process has pid (a zombie counts as gone: it runs
// nothing) and fails the test after a minute.
func gone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if errors.Is(err, os.ErrNotExist) || err == nil && zombie(string(stat)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running a minute after its owner ended", pid)
		}
		time.Sleep(20 * time.Millisecond) // polling another process: no event to wait on
	}
}

// zombie reports whether a /proc/PID/stat line is of a zombie.
func zombie(stat string) bool {
	_, rest, ok := strings.Cut(stat, ") ")
	return ok && strings.HasPrefix(rest, "Z")
}

// TestStartKillsTheGroupAtCleanup: a child started with Start, and the
// grandchild it left in the background, end with the test that started
// them.
func TestStartKillsTheGroupAtCleanup(t *testing.T) {
	var grandchild int
	t.Run("owner", func(t *testing.T) {
		cmd := exec.Command("sh", "-c", "sleep 600 & echo $!; wait")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := Start(t, cmd); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		grandchild, _ = strconv.Atoi(strings.TrimSpace(line))
	})
	if grandchild == 0 {
		t.Fatal("no grandchild pid")
	}
	gone(t, grandchild)
}

const envChild = "TESTBINARY_DYING_PARENT"

// TestChildDiesWithItsTestProcess: a test process killed outright (as on a
// deadline panic: no cleanup runs) takes the child it owned with it.
func TestChildDiesWithItsTestProcess(t *testing.T) {
	if os.Getenv(envChild) != "" {
		cmd := exec.Command("sleep", "600")
		Own(cmd)
		if err := cmd.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestChildDiesWithItsTestProcess$")
	cmd.Env = append(os.Environ(), envChild+"=1")
	out, _ := cmd.Output() // killed: an error, by design
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the child printed %q, want a pid", out)
	}
	gone(t, pid)
}

// TestRunKillsTheGroupAtItsDeadline: Run's context ends the whole group.
func TestRunKillsTheGroupAtItsDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := Run(ctx, exec.Command("sh", "-c", "sleep 600 & sleep 600; wait"))
	if err == nil {
		t.Fatal("Run returned no error for a command killed at its deadline")
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("Run returned after %v, want soon after the deadline", el)
	}
}
