//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
)

// terminal is a pseudo-terminal: commands write to its tty (as they
// would to a person's terminal, so isTerminal holds), the test reads what
// appeared on it from the master side.
type terminal struct {
	tty    *os.File
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	more   chan struct{} // a token after each read
	n      int           // markers written
}

// openTerminal opens a pseudo-terminal pair and starts reading it.
func openTerminal(t *testing.T) *terminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open its tty: %v", err)
	}
	term := &terminal{tty: tty, master: master, more: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			select {
			case term.more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		tty.Close()
		master.Close()
		<-done
	})
	return term
}

// run runs cardsync in-process with stdout and stderr on the terminal,
// the environment vars, and returns what appeared on the terminal.
func (term *terminal) run(t *testing.T, vars map[string]string, args ...string) (int, string) {
	t.Helper()
	m := &Main{Stdin: strings.NewReader(""), Stdout: term.tty, Stderr: term.tty,
		Getenv: func(k string) string { return vars[k] },
		Environ: func() []string {
			var out []string
			for k, v := range vars {
				out = append(out, k+"="+v)
			}
			return out
		}}
	term.mu.Lock()
	from := term.out.Len()
	term.mu.Unlock()
	code := m.Run(t.Context(), args)
	// A marker after the command: once it is read, all the command wrote
	// has been read too.
	term.n++
	marker := fmt.Sprintf("--- end of command %d ---", term.n)
	fmt.Fprintln(term.tty, marker)
	for {
		term.mu.Lock()
		got := term.out.String()[from:]
		term.mu.Unlock()
		if i := strings.Index(got, marker); i >= 0 {
			return code, got[:i]
		}
		select {
		case <-term.more:
		case <-t.Context().Done():
			t.Fatalf("%v: the terminal never showed the end marker; it shows:\n%s", args, got)
		}
	}
}

// ansi matches the terminal's escape sequences (colours, line clears).
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// screenLines splits terminal output into what a person sees as lines: at
// each newline and at each carriage return (the progress line redraws
// itself), with the escape sequences removed.
func screenLines(out string) []string {
	out = ansi.ReplaceAllString(out, "")
	var lines []string
	for _, l := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// jsonLines returns the lines that parse as a JSON object or hold a JSON
// log record's "msg" member: what a person should never see on a terminal
// unless they asked for it.
func jsonLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		s := strings.TrimSpace(l)
		if strings.HasPrefix(s, "{") && json.Valid([]byte(s)) || strings.Contains(s, `"msg":`) {
			out = append(out, l)
		}
	}
	return out
}

// TestTerminalShowsNoJSON runs the commands of the first hour with stdout
// and stderr on a pseudo-terminal, at info level and without -log-format:
// the demo, status of its warehouse, then a backfill, check, status,
// backup, rescan, report, datasette-metadata and restore against the
// simulator. No line on the terminal is JSON; the first backfill logs its
// migrations in one info line; status of the demo warehouse shows no
// schedule. Asked for (-log-format json), JSON does reach the terminal,
// so the check can see it; with stderr not a terminal the log is JSON.
func TestTerminalShowsNoJSON(t *testing.T) {
	term := openTerminal(t)
	dir := t.TempDir()
	demoDB := filepath.Join(dir, "demo", "cardsync-demo.db")
	if err := os.MkdirAll(filepath.Dir(demoDB), 0o755); err != nil {
		t.Fatal(err)
	}
	newcomer := map[string]string{} // no CARDSYNC_* at all
	_, e := newEnv(t, sim.Options{Seed: 35, Cards: 40})
	delete(e.vars, "CARDSYNC_LOG_FORMAT")
	e.vars["CARDSYNC_LOG_LEVEL"] = "info"
	backups := filepath.Join(dir, "backups")

	type step struct {
		name string
		vars map[string]string
		args []string
	}
	steps := []step{
		{"demo", newcomer, []string{"demo", "-db", demoDB, "-cards", "30", "-rate", "1000", "-log-level", "info"}},
		{"demo status", newcomer, []string{"status", "-db", demoDB}},
		{"backfill", e.vars, []string{"backfill"}},
		{"check", e.vars, []string{"check"}},
		{"status", e.vars, []string{"status"}},
		{"backup", e.vars, []string{"backup", "-to", backups}},
		{"rescan", e.vars, []string{"rescan"}},
		{"report", e.vars, []string{"report", "-o", filepath.Join(dir, "report.html")}},
		{"datasette-metadata", e.vars, []string{"datasette-metadata", "-o", filepath.Join(dir, "metadata.json")}},
	}
	screens := map[string][]string{}
	for _, s := range steps {
		code, out := term.run(t, s.vars, s.args...)
		if code != 0 {
			t.Fatalf("%s: exit %d; the terminal shows:\n%s", strings.Join(s.args, " "), code, out)
		}
		lines := screenLines(out)
		screens[s.name] = lines
		if bad := jsonLines(lines); len(bad) > 0 {
			t.Errorf("%s put JSON on the terminal:\n%s", strings.Join(s.args, " "), strings.Join(bad, "\n"))
		}
	}
	files, err := filepath.Glob(filepath.Join(backups, "*.db"))
	if err != nil || len(files) != 1 {
		t.Fatalf("backups %v (%v), want one", files, err)
	}
	code, out := term.run(t, e.vars, "restore", "-force", files[0])
	if bad := jsonLines(screenLines(out)); code != 0 || len(bad) > 0 {
		t.Errorf("restore: exit %d, JSON lines %q; the terminal shows:\n%s", code, bad, out)
	}

	for _, name := range []string{"demo", "backfill"} {
		var migrated []string
		for _, l := range screens[name] {
			if strings.Contains(l, "schema migrat") {
				migrated = append(migrated, l)
			}
		}
		want := fmt.Sprintf("INF schema migrated from version 0 to %d (%d migrations)", sqlite.SchemaVersion(), sqlite.SchemaVersion())
		if len(migrated) != 1 || !strings.Contains(migrated[0], want) {
			t.Errorf("%s: migration lines %q, want one with %q", name, migrated, want)
		}
	}
	status := strings.Join(screens["demo status"], "\n")
	if !strings.Contains(status, "schedule   none") || strings.Contains(status, "next run due") || strings.Contains(status, "*/15") {
		t.Errorf("status of the demo warehouse shows a schedule:\n%s", status)
	}

	// Asked for, JSON reaches the terminal: the check above can see it.
	code, out = term.run(t, e.vars, "backfill", "-log-format", "json", "-no-progress")
	if code != 0 || len(jsonLines(screenLines(out))) == 0 {
		t.Errorf("backfill -log-format json: exit %d, no JSON line on the terminal:\n%s", code, out)
	}
	// Not a terminal: every log line is JSON.
	code, _, errOut := e.run(t.Context(), "backfill")
	lines := screenLines(errOut)
	if code != 0 || len(lines) == 0 || len(jsonLines(lines)) != len(lines) {
		t.Errorf("backfill with stderr not a terminal: exit %d, want every line JSON:\n%s", code, errOut)
	}
}
