// Package sqlitecheck runs the checks analysts and operators run on a
// warehouse file with the SQLite of their system, not the one cardsync
// links: Debian 12's sqlite3 CLI and Python's sqlite3 module (both 3.40.1)
// judged files differently from newer SQLite (false "NULL value in T.col"
// reports from PRAGMA integrity_check on WITHOUT ROWID tables whose key
// columns are not leading), so only the system's programs catch what users
// see.
//
// A missing program skips the test; with CARDSYNC_REQUIRE_TOOLS set (CI) it
// fails instead.
//
// It is for tests only and must not be imported by production code.
package sqlitecheck

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// EnvRequire turns a missing program into a failure instead of a skip.
const EnvRequire = "CARDSYNC_REQUIRE_TOOLS"

// pythonCheck prints the rows of PRAGMA integrity_check, one a line, of the
// file named by its argument, opened read-only through a URI.
const pythonCheck = `import sqlite3, sys, urllib.request
db = sqlite3.connect("file:" + urllib.request.pathname2url(sys.argv[1]) + "?mode=ro", uri=True)
for (row,) in db.execute("PRAGMA integrity_check"):
    print(row)
db.close()
`

// Program returns the path of the program name, for a test that runs it:
// a missing program skips the test, or fails it when EnvRequire is set.
func Program(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(EnvRequire) != "" {
			t.Fatalf("%s not found and %s is set (apt-get install %s)", name, EnvRequire, pkg)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

// IntegrityOK runs PRAGMA integrity_check on the warehouse file at path with
// the system's sqlite3 CLI (sqlite3 -readonly FILE, the check of docs/backups.md) and
// with python3's sqlite3 module (a read-only URI), and fails the test unless
// each prints exactly "ok". Neither opens the file for writing, so a live
// warehouse keeps its -wal file.
func IntegrityOK(t testing.TB, path string) {
	t.Helper()
	cli := Program(t, "sqlite3", "sqlite3")
	py := Program(t, "python3", "python3")
	for _, c := range []struct {
		name string
		cmd  *exec.Cmd
	}{
		{"sqlite3 " + Version(t, cli), exec.Command(cli, "-readonly", path, "PRAGMA integrity_check")},
		{"python3 sqlite3", exec.Command(py, "-c", pythonCheck, path)},
	} {
		out, err := c.cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: PRAGMA integrity_check on %s: %v\n%s", c.name, path, err, out)
			continue
		}
		if got := strings.TrimSpace(string(out)); got != "ok" {
			lines := strings.Split(got, "\n")
			if len(lines) > 5 {
				lines = append(lines[:5], "...")
			}
			t.Errorf("%s: PRAGMA integrity_check on %s printed %d lines, want ok:\n%s", c.name, path,
				strings.Count(got, "\n")+1, strings.Join(lines, "\n"))
		}
	}
}

// Version is the version the sqlite3 CLI at cli reports ("3.40.1"), for
// messages.
func Version(t testing.TB, cli string) string {
	t.Helper()
	out, err := exec.Command(cli, "-version").Output()
	if err != nil {
		return "(unknown version)"
	}
	if f := strings.Fields(string(out)); len(f) > 0 {
		return f[0]
	}
	return "(unknown version)"
}
