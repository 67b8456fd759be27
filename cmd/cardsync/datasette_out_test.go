package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// TestDatasetteMetadataOutRefuses: -o naming the warehouse (any spelling
// of its path, from -db or CARDSYNC_WAREHOUSE_PATH) or its -wal, -shm or
// -journal file, another SQLite database, a directory or a device exits
// 2 with a message naming the path and leaves the file as it was.
func TestDatasetteMetadataOutRefuses(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 27, Cards: 3})
	dir := t.TempDir()
	t.Chdir(dir)
	e.db = filepath.Join(dir, "wh.db")
	e.vars["CARDSYNC_WAREHOUSE_PATH"] = e.db
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	accountLock := e.db + ".acme.lock" // as a serve of [[accounts]] named acme leaves it
	if err := os.WriteFile(accountLock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	otherWAL := filepath.Join(dir, "other.db-wal")
	config := filepath.Join(dir, "c.toml")
	for path, content := range map[string]string{
		other:    "SQLite format 3\x00rest of a database",
		otherWAL: "\x37\x7f\x06\x82 another database's WAL",
		config:   "[warehouse]\npath = \"wh.db\"\n",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct{ name, db, out string }{
		{"same path", "", e.db},
		{"relative", "", "wh.db"},
		{"dot spelling", "", "./sub/../wh.db"},
		{"through a symlink", "", filepath.Join(dir, "link", "wh.db")},
		{"-db relative, -o absolute", "wh.db", e.db},
		{"-db absolute, -o symlinked", e.db, "link/wh.db"},
		{"wal", "", "wh.db-wal"},
		{"shm", "", e.db + "-shm"},
		{"journal", "", "link/wh.db-journal"},
		{"another SQLite database", "", other},
		{"another database's WAL", "", otherWAL},
		{"a config file", "", config},
		{"the writer's lock file", "", e.db + ".lock"},
		{"an account's lock file", "", accountLock},
		{"directory", "", "sub"},
		{"device", "", os.DevNull},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := fileState(t, c.out)
			args := []string{"datasette-metadata", "-o", c.out}
			if c.db != "" {
				args = append(args, "-db", c.db)
			}
			code, _, errOut := e.run(t.Context(), args...)
			if code != 2 || !strings.Contains(errOut, c.out) || !strings.Contains(errOut, "refusing") {
				t.Errorf("%v: exit %d, want 2 with a message naming %s\n%s", args, code, c.out, errOut)
			}
			if after := fileState(t, c.out); after != before {
				t.Errorf("%s changed: %q → %q", c.out, before, after)
			}
		})
	}
	if head, err := os.ReadFile(e.db); err != nil || !strings.HasPrefix(string(head), "SQLite format 3\x00") {
		t.Errorf("the warehouse is no longer a SQLite database (%v)", err)
	}
	if code, _, errOut := e.run(t.Context(), "status"); code != 0 {
		t.Errorf("status after the refusals: exit %d\n%s", code, errOut)
	}
}

// fileState is the mode and content of a regular file at path, the mode
// alone of anything else, "absent" when nothing is there.
func fileState(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() {
		return fi.Mode().String()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().String() + " " + string(b)
}

// TestDatasetteMetadataOutStdoutAndMode: -o - writes to stdout (no file
// named "-"), and replacing an existing file keeps its mode.
func TestDatasetteMetadataOutStdoutAndMode(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 28, Cards: 3})
	dir := t.TempDir()
	t.Chdir(dir)
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	code, want, errOut := e.run(t.Context(), "datasette-metadata")
	if code != 0 || want == "" {
		t.Fatalf("datasette-metadata: exit %d\n%s", code, errOut)
	}
	code, got, errOut := e.run(t.Context(), "datasette-metadata", "-o", "-")
	if code != 0 || got != want {
		t.Errorf("-o -: exit %d, stdout differs from no -o: %d bytes, want %d\n%s", code, len(got), len(want), errOut)
	}
	if _, err := os.Lstat("-"); !os.IsNotExist(err) {
		t.Errorf("-o - created a file named \"-\" (%v)", err)
	}
	for _, mode := range []os.FileMode{0o600, 0o640, 0o664} {
		file := filepath.Join(dir, "metadata.json")
		if err := os.WriteFile(file, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(file, mode); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := e.run(t.Context(), "datasette-metadata", "-o", file); code != 0 {
			t.Fatalf("-o %s: exit %d\n%s", file, code, errOut)
		}
		fi, err := os.Stat(file)
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("replaced file mode %v (%v), want %v kept", fi.Mode(), err, mode)
		}
		if b, err := os.ReadFile(file); err != nil || string(b) != want {
			t.Errorf("replaced file differs from stdout (%v)", err)
		}
	}
}
