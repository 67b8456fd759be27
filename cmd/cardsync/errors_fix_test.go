package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// fixCase is one error scenario: what it does (run, on a fresh fixEnv),
// the exit code it must end with, and what the message must name, in
// check's FAIL line on stdout (fail), else in the "fix:" line on stderr
// (or, with exit 0, anywhere in the output).
type fixCase struct {
	name string
	// asUser: the fault is a file permission, which root ignores: run as
	// an unprivileged user (asServiceUser).
	asUser bool
	run    func(t *testing.T, f *fixEnv) (int, string, string)
	code   int
	fail   bool
	want   func(f *fixEnv) []string
}

// TestErrorsNameTheFix runs every exit code the CLI documents and each
// file and network fault through Main.Run, against the simulator over
// loopback and real files, and checks the exit code and that the message
// names the fix: the key (with where it was set), the path, or the
// complete command.
func TestErrorsNameTheFix(t *testing.T) {
	bin := childBinary(t)
	for _, tc := range fixCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.asUser && asServiceUser(t, bin) {
				return
			}
			f := newFixEnv(t)
			start := time.Now()
			code, out, errOut := tc.run(t, f)
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("took %s: a scenario must end within a few seconds (short deadlines, no real waits)", elapsed)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			if !tc.fail && tc.code != exitOK {
				errorBeforeFix(t, errOut)
			}
			msg := out + errOut
			switch {
			case tc.fail:
				msg = fixLine(out, "FAIL  ")
			case tc.code != exitOK:
				msg = fixLine(errOut, "cardsync ")
			}
			for _, w := range tc.want(f) {
				if !strings.Contains(msg, w) {
					t.Errorf("the message does not name %q:\n%s\n(stdout:\n%s\nstderr:\n%s)", w, msg, out, errOut)
				}
			}
		})
	}
}

// errorBeforeFix checks that the line before a command's "fix:" line on
// stderr is the command's error, so that the fix never stands alone.
func errorBeforeFix(t *testing.T, errOut string) {
	t.Helper()
	prev := ""
	for line := range strings.Lines(errOut) {
		cmd, rest, ok := strings.Cut(strings.TrimPrefix(line, "cardsync "), ": ")
		if ok && strings.HasPrefix(line, "cardsync ") && strings.HasPrefix(rest, "fix: ") {
			if want := "cardsync " + cmd + ": "; !strings.HasPrefix(prev, want) || strings.HasPrefix(prev, want+"fix: ") {
				t.Errorf("the fix line is not preceded by the error line %q...:\n%s", want, errOut)
			}
		}
		prev = line
	}
}

// fixLine is the line of out that starts with prefix and names a fix.
func fixLine(out, prefix string) string {
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, prefix) && strings.Contains(line, "fix: ") {
			return line
		}
	}
	return "(no line starting " + strconv.Quote(prefix) + " names a fix)"
}

// fixCases are the scenarios of TestErrorsNameTheFix.
func fixCases() []fixCase {
	return slices.Concat(configCases(), apiCases(), fileCases(), runCases())
}

// checkRun runs check with f's config and a short -timeout.
func checkRun(t *testing.T, f *fixEnv) (int, string, string) {
	return f.run(t.Context(), "check", "-config", f.cfg, "-timeout", "2s")
}

// backfillRun runs backfill with f's config.
func backfillRun(t *testing.T, f *fixEnv) (int, string, string) {
	return f.run(t.Context(), "backfill", "-config", f.cfg)
}

// baseKey is how a fix names f's api.base_url: the key, the file and line.
func baseKey(f *fixEnv) string { return "api.base_url (" + f.cfg + ":2)" }

// configCases: the configuration.
func configCases() []fixCase {
	return []fixCase{
		{name: "unknown config key", code: exitConfig, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.writeConfig(t, f.baseURL, "emial = \"x\"\n", "")
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string { return []string{"rename api.emial to api.email at " + f.cfg + ":"} }},
		{name: "bad TOML", code: exitConfig, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.writeConfig(t, f.baseURL, "", "[warehouse\n")
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string { return []string{"correct the TOML syntax at " + f.cfg + ":"} }},
		{name: "no config at all", code: exitConfig, fail: true,
			run:  func(t *testing.T, f *fixEnv) (int, string, string) { return f.run(t.Context(), "check") },
			want: func(*fixEnv) []string { return []string{"pass -config FILE, or set CARDSYNC_CONFIG"} }},
		{name: "missing config file", code: exitConfig,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				return f.run(t.Context(), "backfill", "-config", f.dir+"/nothere.toml")
			},
			want: func(f *fixEnv) []string {
				return []string{"the config file " + f.dir + "/nothere.toml does not exist", "config.example.toml", "-config (or CARDSYNC_CONFIG)"}
			}},
		{name: "unreadable config file", asUser: true, code: exitConfig, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				if err := os.Chmod(f.cfg, 0o200); err != nil {
					t.Fatal(err)
				}
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{"the file " + f.cfg + " is owned by", "with mode --w-------", "cardsync runs as", "uid " + strconv.Itoa(os.Geteuid()), "make it readable"}
			}},
		{name: "password file readable by others", code: exitConfig, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				writeTestFile(t, f.dir+"/password", "x\n", 0o644)
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string { return []string{"fix: chmod 600 " + q(f.dir+"/password")} }},
		{name: "unreadable password file", asUser: true, code: exitConfig, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				writeTestFile(t, f.dir+"/password", "x\n", 0o200)
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{"the file " + f.dir + "/password is owned by", "with mode --w-------", "uid " + strconv.Itoa(os.Geteuid())}
			}},
		{name: "misspelt variable", code: exitConfig, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				e := &env{vars: map[string]string{"CARDSYNC_API_RATE_LIMT": "1/s"}}
				return e.run(t.Context(), "check", "-config", f.cfg, "-timeout", "2s")
			},
			want: func(*fixEnv) []string {
				return []string{"rename the variable CARDSYNC_API_RATE_LIMT to CARDSYNC_API_RATE_LIMIT"}
			}},
	}
}

// apiCases: the API's faults.
func apiCases() []fixCase {
	return []fixCase{
		{name: "wrong base_url path (404)", code: exitFailure, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.writeConfig(t, f.baseURL+"/v2", "", "")
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{"correct the path of " + baseKey(f), "POST /v2/auth/access-token answered 404"}
			}},
		{name: "wrong base_url path (404), backfill", code: exitFailure,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.writeConfig(t, f.baseURL+"/v2", "", "")
				return backfillRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{"correct the path of " + baseKey(f), "/v2/auth/access-token"}
			}},
		{name: "refused port", code: exitUnavailable, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.writeConfig(t, "http://"+closedPort(t), "", "")
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{"nothing accepts connections at 127.0.0.1:", "correct the host or port of " + baseKey(f)}
			}},
		{name: "unknown host", code: exitUnavailable, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.writeConfig(t, "https://cardsync-test.invalid", "", "")
				return checkRun(t, f)
			},
			// Whatever the resolver says (no such host, no answer), the
			// fix names the host and the key.
			want: func(f *fixEnv) []string { return []string{"cardsync-test.invalid", baseKey(f)} }},
		{name: "TLS to plain HTTP", code: exitUnavailable, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.writeConfig(t, strings.Replace(f.baseURL, "http://", "https://", 1), "", "")
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string { return []string{"speaks plain HTTP, not HTTPS", baseKey(f)} }},
		{name: "bad credentials (401)", code: exitAuth, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				writeTestFile(t, f.dir+"/password", "wrong-password\n", 0o600)
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{`api.password_file "` + f.dir + `/password" (` + f.cfg + ":4)", "correct api.email (" + f.cfg + ":3)"}
			}},
		{name: "token endpoint 429 past the deadline", code: exitUnavailable, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointToken, Kind: sim.FaultRateLimit, RetryAfter: time.Minute})
				f.maxWait = "5m"
				f.writeConfig(t, f.baseURL, "", "")
				return checkRun(t, f)
			},
			want: func(*fixEnv) []string {
				return []string{"429 Too Many Requests", "past check's -timeout 2s", "api.auth_rate_limit"}
			}},
		{name: "server 500s past api.max_wait", code: exitUnavailable,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointToken, Kind: sim.FaultStatus, Status: 500})
				return backfillRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{"failed on its side", "api.max_wait (1s)", "`cardsync backfill -config " + q(f.cfg) + "`"}
			}},
		{name: "redirect (exit 7)", code: exitBadData, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointToken, Kind: sim.FaultRedirect})
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string { return []string{"correct the path of " + baseKey(f), "/login"} }},
	}
}

// fileCases: the warehouse file and its directory.
func fileCases() []fixCase {
	return []fixCase{
		{name: "unwritable warehouse directory", asUser: true, code: exitWarehouse, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.readOnlyDir(t)
				return checkRun(t, f)
			},
			want: unwritableDir},
		{name: "unwritable warehouse directory, backfill", asUser: true, code: exitWarehouse,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.readOnlyDir(t)
				return backfillRun(t, f)
			},
			want: unwritableDir},
		{name: "missing warehouse directory", code: exitWarehouse, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.db = f.dir + "/missing/sub/warehouse.db"
				f.writeConfig(t, f.baseURL, "", "[warehouse]\npath = \"missing/sub/warehouse.db\"\n")
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{"create the directory " + f.dir + "/missing/sub", "set warehouse.path"}
			}},
		{name: "read-only warehouse file", asUser: true, code: exitWarehouse, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.mustRun(t, "backfill", "-config", f.cfg)
				if err := os.Chmod(f.db, 0o444); err != nil {
					t.Fatal(err)
				}
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{"the file " + f.db + " is owned by", "with mode -r--r--r--", "chown"}
			}},
		{name: "corrupt warehouse file", code: exitWarehouse, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				writeTestFile(t, f.db, strings.Repeat("not a database\n", 400), 0o600)
				return checkRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{"move " + f.db + " aside and run `cardsync backfill -config " + q(f.cfg) + "`"}
			}},
		{name: "corrupt warehouse file with a backup", code: exitWarehouse,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.mustRun(t, "backfill", "-config", f.cfg)
				f.backup = strings.TrimSpace(f.mustRun(t, "backup", "-config", f.cfg))
				for _, p := range []string{f.db + "-wal", f.db + "-shm"} {
					_ = os.Remove(p)
				}
				writeTestFile(t, f.db, strings.Repeat("not a database\n", 400), 0o600)
				return backfillRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{"restore the newest backup", "`cardsync restore -config " + q(f.cfg) + " -force " + q(f.backup) + "`"}
			}},
		{name: "PostgreSQL server refused", code: exitWarehouse, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.writeConfig(t, f.baseURL, "", "[warehouse]\nurl = \"postgres://cardsync@"+closedPort(t)+"/cardsync?connect_timeout=2\"\n")
				return checkRun(t, f)
			},
			want: func(*fixEnv) []string {
				return []string{"no PostgreSQL server accepts connections at postgres://cardsync@127.0.0.1:", "correct the host or port of warehouse.url"}
			}},
		{name: "newer schema", code: exitWarehouse, fail: true,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.mustRun(t, "backfill", "-config", f.cfg)
				db, err := sql.Open("sqlite", "file:"+f.db)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec("PRAGMA user_version = 999"); err != nil {
					t.Fatal(err)
				}
				db.Close()
				return checkRun(t, f)
			},
			want: func(*fixEnv) []string { return []string{"install a cardsync release that knows schema version 999"} }},
	}
}

// runCases: a held lock, an interruption, no warehouse yet, a held removal.
func runCases() []fixCase {
	return []fixCase{
		{name: "locked warehouse (exit 4)", code: exitLocked,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.mustRun(t, "backfill", "-config", f.cfg)
				lock, err := dialect.AcquireLock(f.db)
				if err != nil {
					t.Fatal(err)
				}
				defer lock.Close()
				return backfillRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{fmt.Sprintf("wait for the sync of process %d to end", os.Getpid()), "`cardsync status -config " + q(f.cfg) + "`"}
			}},
		{name: "interrupted (exit 130)", code: exitInterrupted,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				f.srv.OnPageServed(func(int) { cancel() })
				return f.run(ctx, "backfill", "-config", f.cfg)
			},
			want: func(f *fixEnv) []string {
				return []string{"`cardsync backfill -config " + q(f.cfg) + "` resumes from the checkpoint"}
			}},
		{name: "status before any sync", code: exitWarehouse,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				return f.run(t.Context(), "status", "-config", f.cfg)
			},
			want: func(f *fixEnv) []string {
				return []string{"run `cardsync backfill -config " + q(f.cfg) + "` to create it"}
			}},
		{name: "status of a warehouse path that does not exist, no config", code: exitWarehouse,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				return f.run(t.Context(), "status", "-db", f.dir+"/nope.db")
			},
			want: func(f *fixEnv) []string {
				return []string{"check the path " + f.dir + "/nope.db (it does not exist)", "`cardsync backfill -config FILE -db " + q(f.dir+"/nope.db") + "`"}
			}},
		{name: "report into a directory that does not exist", code: exitFailure,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.mustRun(t, "backfill", "-config", f.cfg)
				return f.run(t.Context(), "report", "-config", f.cfg, "-o", f.dir+"/missing/x.html")
			},
			want: func(f *fixEnv) []string {
				return []string{"create the directory " + f.dir + "/missing", "set -o to"}
			}},
		{name: "backup into a path through a file", code: exitWarehouse,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.mustRun(t, "backfill", "-config", f.cfg)
				writeTestFile(t, f.dir+"/afile", "x\n", 0o600)
				return f.run(t.Context(), "backup", "-config", f.cfg, "-to", f.dir+"/afile/bk")
			},
			want: func(f *fixEnv) []string {
				return []string{f.dir + "/afile is a file, not a directory", "set -to (or [backup] dir)"}
			}},
		{name: "backup into an unwritable directory", asUser: true, code: exitWarehouse,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.mustRun(t, "backfill", "-config", f.cfg)
				ro := f.dir + "/ro"
				if err := os.Mkdir(ro, 0o555); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(ro, 0o555); err != nil {
					t.Fatal(err)
				}
				return f.run(t.Context(), "backup", "-config", f.cfg, "-to", ro+"/bk")
			},
			want: func(f *fixEnv) []string {
				return []string{"the directory " + f.dir + "/ro is owned by", "with mode dr-xr-xr-x", "uid " + strconv.Itoa(os.Geteuid()), "set -to (or [backup] dir)"}
			}},
		{name: "held removals (exit 0)", code: exitOK,
			run: func(t *testing.T, f *fixEnv) (int, string, string) {
				f.mustRun(t, "backfill", "-config", f.cfg)
				for _, c := range f.srv.Cards()[:25] {
					f.srv.RemoveCard(c.ID)
				}
				return backfillRun(t, f)
			},
			want: func(f *fixEnv) []string {
				return []string{"mass removal held: 25 cards", "run: cardsync backfill -config " + q(f.cfg) + " -confirm-removals",
					"run `cardsync backfill -config " + q(f.cfg) + " -confirm-removals`"}
			}},
	}
}

// q quotes a word of a command line as hints print it.
func q(s string) string { return worker.ShellQuote(s) }

// unwritableDir is what the fix of an unwritable warehouse directory
// names: the directory, its owner and mode, the user cardsync runs as.
func unwritableDir(f *fixEnv) []string {
	return []string{"the directory " + f.dir + "/ro is owned by", "with mode dr-xr-xr-x", "cardsync runs as", "uid " + strconv.Itoa(os.Geteuid()), "chown"}
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestCheckRetriesWithinTimeout: with api.max_wait far beyond check's
// -timeout, a closed port is retried "until" check's deadline, never
// api.max_wait's (in the log), and check gives up by then, saying so.
func TestCheckRetriesWithinTimeout(t *testing.T) {
	f := newFixEnv(t)
	f.maxWait = "5m"
	f.writeConfig(t, "http://"+closedPort(t), "", "")
	start := time.Now()
	code, out, errOut := f.run(t.Context(), "check", "-config", f.cfg, "-timeout", "2s")
	elapsed := time.Since(start)
	if code != exitUnavailable || elapsed > 2500*time.Millisecond {
		t.Errorf("exit %d after %s, want 5 within -timeout 2s\n%s\n%s", code, elapsed, out, errOut)
	}
	if fail := fixLine(out, "FAIL  "); !strings.Contains(fail, "check gave up after -timeout 2s") || !strings.Contains(fail, "would pass the command's deadline") {
		t.Errorf("the FAIL line does not say check's -timeout ended the retries:\n%s", fail)
	}
	promised := 0
	for line := range strings.Lines(errOut) {
		var rec struct {
			Until string `json:"retrying_until"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Until == "" {
			continue
		}
		promised++
		until, err := time.Parse(time.RFC3339, rec.Until)
		if err != nil {
			t.Fatal(err)
		}
		if deadline := start.Add(2 * time.Second); until.After(deadline) {
			t.Errorf("retrying until %s, past check's deadline %s", until, deadline.UTC())
		}
	}
	if promised == 0 {
		t.Errorf("no log line says until when it retries:\n%s", errOut)
	}
}

// TestStatusHeldRemovalsNameTheCommand: status's held-removal lines print
// the complete command, with the -config status was given.
func TestStatusHeldRemovalsNameTheCommand(t *testing.T) {
	f := newFixEnv(t)
	f.mustRun(t, "backfill", "-config", f.cfg)
	for _, c := range f.srv.Cards()[:25] {
		f.srv.RemoveCard(c.ID)
	}
	f.mustRun(t, "backfill", "-config", f.cfg)
	_, out, errOut := f.run(t.Context(), "status", "-config", f.cfg)
	want := "if they are gone: cardsync backfill -config " + q(f.cfg) + " -confirm-removals"
	if n := strings.Count(out, want); n != 2 {
		t.Errorf("status names %q %d times, want 2 (the warning and the HELD line)\n%s\n%s", want, n, out, errOut)
	}
}
