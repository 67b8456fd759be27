package sqlite

import (
	"bufio"
	"bytes"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
)

var update = flag.Bool("update", false, "rewrite testdata/schema.golden")

func TestSchemaGolden(t *testing.T) {
	w, _, _ := openTest(t, load.Options{})
	rows, err := w.db.QueryContext(t.Context(), `SELECT type, name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b bytes.Buffer
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "-- %s %s\n%s;\n\n", typ, name, text)
	}
	fmt.Fprintf(&b, "-- user_version %d, application_id %d\n",
		queryInt(t, w, "PRAGMA user_version"), queryInt(t, w, "PRAGMA application_id"))
	golden := filepath.Join("testdata", "schema.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./load/sqlite -run TestSchemaGolden -update)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("schema differs from %s (run with -update if intended):\n%s", golden, b.String())
	}
}

func TestOpenTwiceMigratesOnce(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	w.Close()
	w2, err := Open(t.Context(), path, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if got, want := queryInt(t, w2, "PRAGMA user_version"), int64(SchemaVersion()); got != want {
		t.Errorf("user_version = %d, want %d", got, want)
	}
}

func TestOpenRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  error
	}{
		{"newer schema", func(t *testing.T, path string) {
			w, err := Open(t.Context(), path, load.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.db.ExecContext(t.Context(), fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion()+1)); err != nil {
				t.Fatal(err)
			}
			w.Close()
		}, load.ErrSchemaTooNew},
		{"other application", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("PRAGMA application_id = 42; CREATE TABLE x (a)"); err != nil {
				t.Fatal(err)
			}
		}, load.ErrForeignDatabase},
		{"foreign tables", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("CREATE TABLE x (a)"); err != nil {
				t.Fatal(err)
			}
		}, load.ErrForeignDatabase},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "w.db")
			tt.setup(t, path)
			w, err := Open(t.Context(), path, load.Options{})
			if err == nil {
				w.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Open error = %v, want %v", err, tt.want)
			}
			r, err := OpenReadOnly(t.Context(), path)
			if err == nil {
				r.Close()
				t.Fatal("OpenReadOnly succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("OpenReadOnly error = %v, want %v", err, tt.want)
			}
		})
	}
	var sv *load.SchemaVersionError
	path := filepath.Join(t.TempDir(), "w.db")
	tests[0].setup(t, path)
	if _, err := Open(t.Context(), path, load.Options{}); !errors.As(err, &sv) || sv.Database != SchemaVersion()+1 {
		t.Errorf("Open error = %v, want *SchemaVersionError", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.db")
	os.WriteFile(empty, nil, 0o640)
	if _, err := OpenReadOnly(t.Context(), empty); !errors.Is(err, load.ErrNotMigrated) {
		t.Errorf("OpenReadOnly of an empty file = %v, want ErrNotMigrated", err)
	}
}

func TestOpenOptions(t *testing.T) {
	if _, err := Open(t.Context(), filepath.Join(t.TempDir(), "w.db"), load.Options{Synchronous: "full; DROP TABLE x"}); err == nil {
		t.Error("Open accepted a bad synchronous value")
	}
	w, _, _ := openTest(t, load.Options{Synchronous: "normal"})
	for q, want := range map[string]string{
		"PRAGMA journal_mode":       "wal",
		"PRAGMA synchronous":        "1",
		"PRAGMA foreign_keys":       "1",
		"PRAGMA trusted_schema":     "0",
		"PRAGMA journal_size_limit": fmt.Sprint(journalSizeLimit),
		"PRAGMA busy_timeout":       "5000",
	} {
		if got := queryString(t, w, q); got != want {
			t.Errorf("%s = %s, want %s", q, got, want)
		}
	}
}

// TestFileModes checks the database, -wal and -shm get the configured mode
// regardless of umask, and -wal/-shm survive the writer closing.
func TestFileModes(t *testing.T) {
	for _, mode := range []os.FileMode{0o640, 0o600} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "w.db")
			w, err := Open(t.Context(), path, load.Options{FileMode: mode})
			if err != nil {
				t.Fatal(err)
			}
			run := startRun(t, w)
			commit(t, w, run, page(1, idRange(1, 15), 1, 15))
			for _, suffix := range []string{"", "-wal", "-shm"} {
				fi, err := os.Stat(path + suffix)
				if err != nil {
					t.Fatal(err)
				}
				if got := fi.Mode().Perm(); got != mode {
					t.Errorf("%s mode = %v, want %v", filepath.Base(path+suffix), got, mode)
				}
			}
			w.Close()
			for _, suffix := range []string{"-wal", "-shm"} {
				if _, err := os.Stat(path + suffix); err != nil {
					t.Errorf("after Close: %v (persistent WAL keeps it for read-only analysts)", err)
				}
			}
		})
	}
}

func TestPathNeedingEscapes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "odd?dir#%20x")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "w?.db")
	w, err := Open(t.Context(), path, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at the literal path: %v", err)
	}
	r, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// TestReadOnlyWhileRunningAndStopped opens read-only copies the way an
// analyst would. Running as root bypasses file permissions, so this checks
// mode=ro on a 0440 file and that writes are refused; the group-permission
// model is documented in the package doc.
func TestReadOnlyWhileRunningAndStopped(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	ctx := t.Context()
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 15), 1, 30))

	// While the writer runs.
	r, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if got := queryInt(t, r, "SELECT count(*) FROM cards_current"); got != 15 {
		t.Errorf("reader sees %d cards, want 15", got)
	}
	commit(t, w, run, page(2, idRange(16, 30), 1, 30))
	if got := queryInt(t, r, "SELECT count(*) FROM cards_current"); got != 30 {
		t.Errorf("reader sees %d cards after a commit, want 30", got)
	}
	if _, err := r.db.ExecContext(ctx, "DELETE FROM cards"); err == nil {
		t.Error("read-only connection deleted rows")
	}
	if _, err := r.StartRun(ctx, load.TriggerDemo, "x"); !errors.Is(err, load.ErrReadOnly) {
		t.Errorf("StartRun on read-only = %v, want ErrReadOnly", err)
	}
	st, err := r.Summary(ctx)
	if err != nil || st.Cards != 30 {
		t.Errorf("read-only Status = %+v, %v", st, err)
	}
	r.Close()

	// While stopped: the writer closed; -wal/-shm stay (persistent WAL).
	w.Close()
	copyDir := t.TempDir()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		copyFile(t, path+suffix, filepath.Join(copyDir, "w.db"+suffix), 0o440)
	}
	r, err = OpenReadOnly(ctx, filepath.Join(copyDir, "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := queryInt(t, r, "SELECT count(*) FROM cards_current"); got != 30 {
		t.Errorf("reader of stopped warehouse sees %d cards, want 30", got)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	os.Chmod(to, mode)
}

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	l, err := AcquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = AcquireLock(path)
	var le *load.LockedError
	if !errors.As(err, &le) || !errors.Is(err, load.ErrLocked) {
		t.Fatalf("second AcquireLock = %v, want *LockedError", err)
	}
	if le.PID != os.Getpid() || !strings.Contains(err.Error(), fmt.Sprintf("sync in progress (pid %d)", os.Getpid())) {
		t.Errorf("error = %q, PID %d; want our pid", err, le.PID)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := AcquireLock(path)
	if err != nil {
		t.Fatalf("AcquireLock after Close: %v", err)
	}
	l2.Close()
}

// TestLockHoweverThePathIsSpelled: a second writer reaching the same file
// through a symlink, a hard link, a relative path or a symlinked directory
// is refused like any other; a different file is not.
func TestLockHoweverThePathIsSpelled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.db")
	l, err := AcquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Symlink(path, filepath.Join(dir, "sym.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, filepath.Join(dir, "hard.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(t.TempDir(), "dirlink")); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, filepath.Join(dir, "sym.db"), filepath.Join(dir, "hard.db"), rel, filepath.Join(dir, ".", "w.db")} {
		_, err := AcquireLock(p)
		var le *load.LockedError
		if !errors.As(err, &le) || le.PID != os.Getpid() {
			t.Errorf("AcquireLock(%s) = %v, want *LockedError naming pid %d", p, err, os.Getpid())
		}
	}
	other, err := AcquireLock(filepath.Join(dir, "other.db"))
	if err != nil {
		t.Fatalf("another file: %v", err)
	}
	other.Close()
}

// TestLockReleaseKeepsSQLiteLocks: releasing the writer lock between runs
// (the daemon's pattern) must not close a descriptor of the database file,
// since that would drop SQLite's own POSIX locks held by this process.
func TestLockReleaseKeepsSQLiteLocks(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	l, err := OpenLock(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := l.Acquire(); err != nil {
			t.Fatal(err)
		}
		run := startRun(t, w)
		commit(t, w, run, page(1, idRange(1, 15), 1, 15))
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
	}
	if l.f == nil {
		t.Fatal("Release closed the descriptor")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWorldReadableWarehouseWarns: an existing warehouse readable by others
// gets a warning at every open.
func TestWorldReadableWarehouseWarns(t *testing.T) {
	var logs strings.Builder
	path := filepath.Join(t.TempDir(), "w.db")
	w, err := Open(t.Context(), path, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err = Open(t.Context(), path, load.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "readable by every local user") {
		t.Errorf("no warning for a world-readable warehouse: %s", logs.String())
	}
}

// TestLockHeldByChild re-executes the test binary as a lock holder: the
// error names the child's pid, and the lock dies with the child.
func TestLockHeldByChild(t *testing.T) {
	if holder := os.Getenv("LOAD_TEST_LOCK_HOLDER"); holder != "" {
		return // the child runs TestLockHelperProcess
	}
	path := filepath.Join(t.TempDir(), "w.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "LOAD_TEST_LOCK_HOLDER="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q, %v", line, err)
	}
	_, err = AcquireLock(path)
	var le *load.LockedError
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Errorf("AcquireLock = %v, want *LockedError with pid %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill() // no Release: the kernel drops the flock
	stdin.Close()
	cmd.Wait()
	l, err := AcquireLock(path)
	if err != nil {
		t.Fatalf("AcquireLock after the holder died: %v", err)
	}
	l.Close()
}

// TestLockHelperProcess is the child of TestLockHeldByChild.
func TestLockHelperProcess(t *testing.T) {
	path := os.Getenv("LOAD_TEST_LOCK_HOLDER")
	if path == "" {
		t.Skip("helper process only")
	}
	if _, err := AcquireLock(path); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin) // hold until the parent kills us
	os.Exit(0)
}
