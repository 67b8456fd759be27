//go:build e2e

package e2e

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// canary is the API password of the secret tests: distinctive enough that
// any occurrence is a leak.
const canary = "canary-pw-7f3a9e"

// leakScan collects everything cardsync wrote or showed, labelled, and
// checks it for secrets at the end.
type leakScan struct {
	mu     sync.Mutex
	places []leakPlace
}

type leakPlace struct {
	label string
	data  []byte
}

func (l *leakScan) add(label string, data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.places = append(l.places, leakPlace{label, bytes.Clone(data)})
}

// addFiles adds every file of dir (the warehouse, its -wal and -shm, the
// lock file), read raw.
func (l *leakScan) addFiles(t *testing.T, dir, when string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		l.add(when+": file "+e.Name(), b)
	}
}

// check fails for every place that holds one of the secrets.
func (l *leakScan) check(t *testing.T, secrets map[string]string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var scanned int
	for _, p := range l.places {
		scanned += len(p.data)
		for name, s := range secrets {
			if s != "" && bytes.Contains(p.data, []byte(s)) {
				t.Errorf("%s found in %s", name, p.label)
			}
		}
	}
	t.Logf("scanned %d places, %d bytes, for %d secrets", len(l.places), scanned, len(secrets))
}

// TestCanarySecrets runs backfill, status, check, failing runs with a bad
// password, and the daemon, all at debug level, with a canary password,
// and checks that neither the password nor any token the API issued appears
// in any output, the warehouse, its WAL (read mid-walk, while it is full),
// or the daemon's command line.
func TestCanarySecrets(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 51, Cards: 60, Password: canary})
	d := newDeployment(t, up)
	d.env["CARDSYNC_API_PASSWORD"] = canary
	d.env["CARDSYNC_LOG_LEVEL"] = "debug"
	scan := &leakScan{}

	// Mid-walk, page 1 and 2 are committed but not checkpointed into the
	// database file: the WAL holds them. Take it raw then.
	var walSeen atomic.Bool
	up.OnPageServed(func(page int) {
		if page != 3 {
			return
		}
		for _, suffix := range []string{"", "-wal"} {
			if b, err := os.ReadFile(d.db + suffix); err == nil {
				scan.add("mid-walk: "+filepath.Base(d.db+suffix), b)
				if suffix == "-wal" && len(b) > 0 {
					walSeen.Store(true)
				}
			}
		}
	})

	run := func(label string, wantCode int, args ...string) string {
		t.Helper()
		code, out, errOut := d.run(args...)
		scan.add(label+" stdout", []byte(out))
		scan.add(label+" stderr", []byte(errOut))
		if code != wantCode {
			t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", label, code, wantCode, out, errOut)
		}
		scan.addFiles(t, d.dir, "after "+label)
		return errOut
	}

	// The simulator accepts only the canary, so a successful run proves the
	// canary really was in the environment the binary read.
	run("backfill", 0, "backfill")
	if !walSeen.Load() {
		t.Fatal("no non-empty WAL seen mid-walk: the WAL check tests nothing")
	}
	run("status", 0, "status")
	run("status -json", 0, "status", "-json")
	run("check", 0, "check")

	// Wrong password (it contains the canary, so leaking it is caught too).
	d.env["CARDSYNC_API_PASSWORD"] = canary + "-wrong"
	errOut := run("backfill with a bad password", 3, "backfill")
	if !strings.Contains(errOut, "unauthenticated") {
		t.Errorf("bad password: stderr does not say unauthenticated:\n%s", errOut)
	}
	run("check with a bad password", 3, "check")
	d.env["CARDSYNC_API_PASSWORD"] = canary
	// The last run failed: status says so and exits 1; its output shows the
	// error in full, so it is searched for the canary too.
	run("status after failure", 1, "status")
	if _, out, _ := d.run("status"); !strings.HasPrefix(out, "UNHEALTHY: the last run") {
		t.Errorf("status after a failed run does not say UNHEALTHY first:\n%s", out)
	}
	run("status -json after failure", 1, "status", "-json")

	scanServe(t, d, scan)

	tokens := up.Tokens()
	if len(tokens) == 0 {
		t.Fatal("the upstream saw no token")
	}
	secrets := map[string]string{"password": canary}
	for i, tok := range tokens {
		secrets[fmt.Sprintf("token %d", i)] = tok
		// The signature part is the random one; the header is shared.
		if j := strings.LastIndexByte(tok, '.'); j >= 0 && len(tok)-j > 16 {
			secrets[fmt.Sprintf("token %d signature", i)] = tok[j+1:]
		}
	}
	scan.check(t, secrets)
	if st := up.Stats(); st.TokensIssued < 3 {
		t.Errorf("%d tokens issued, want at least 3 (backfill, check, serve)", st.TokensIssued)
	}
}

// scanServe runs serve until its first run is recorded and scans its
// command line, environment, files and output for the canary.
func scanServe(t *testing.T, d *deployment, scan *leakScan) {
	t.Helper()
	// The daemon: password only in the environment; it keeps the warehouse
	// open, so the WAL stays. Look at its command line and files while it
	// runs.
	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1h"
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd, stdout, stderr := d.command(ctx, "serve")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitForRuns(t, d, 3, done) // backfill, bad-password backfill, serve's first run
	// Read /proc only once the daemon is surely past exec (before that
	// it shows the parent's command line and environment).
	pid := cmd.Process.Pid
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(environ, []byte("CARDSYNC_API_PASSWORD="+canary)) {
		t.Errorf("the canary is not in the daemon's environment: the cmdline check would prove nothing (%d bytes of environment)", len(environ))
	}
	scan.add("serve /proc/PID/cmdline", cmdline)
	if bytes.Contains(cmdline, []byte("pw")) {
		t.Errorf("serve command line %q contains \"pw\"", cmdline)
	}
	scan.addFiles(t, d.dir, "while serve runs")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v\n%s", err, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10s of SIGTERM")
	}
	scan.add("serve stdout", stdout.Bytes())
	scan.add("serve stderr", stderr.Bytes())
	scan.addFiles(t, d.dir, "at the end")
}

// waitForRuns waits until the warehouse has n finished runs, or the daemon
// exits, or a deadline passes.
func waitForRuns(t *testing.T, d *deployment, n int64, exited <-chan error) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	db := openRO(t, d.db)
	for {
		var got int64
		_ = db.QueryRow(`SELECT count(*) FROM sync_runs WHERE finished_at IS NOT NULL`).Scan(&got)
		if got >= n {
			return
		}
		select {
		case err := <-exited:
			t.Fatalf("serve exited before its run finished: %v", err)
		case <-deadline:
			t.Fatalf("only %d of %d runs finished after 20s", got, n)
		case <-tick.C:
		}
	}
}

// TestBadConfig runs backfill with broken configurations: each must exit 2
// with a message naming the key (and the file line when it came from the
// file), and create no warehouse.
func TestBadConfig(t *testing.T) {
	cases := []struct {
		name     string
		file     string // config file; {PWFILE} is replaced by a 0644 password file, {PWFIFO} by a FIFO, {PWTWOLINES} by a 0600 file of two lines
		command  string // default backfill
		unsetEnv []string
		wantKey  string
		wantLine int // 0: the problem is not in the file
		wantMsg  string
	}{
		{name: "unknown key", file: "[api]\nemail = \"demo@example.com\"\nretry_forever = true\n",
			wantKey: "api.retry_forever", wantLine: 3, wantMsg: "unknown key"},
		{name: "wrong type", file: "# limits\n[api]\nmax_body_bytes = \"four megabytes\"\n",
			wantKey: "api.max_body_bytes", wantLine: 3},
		{name: "missing password", unsetEnv: []string{"CARDSYNC_API_PASSWORD"},
			wantKey: "api.password_file", wantMsg: "no password"},
		{name: "http to a non-loopback host", file: "[api]\nbase_url = \"http://api.example.com\"\n",
			unsetEnv: []string{"CARDSYNC_API_BASE_URL"},
			wantKey:  "api.base_url", wantLine: 2, wantMsg: "loopback"},
		{name: "world-readable password file", file: "[api]\n\npassword_file = \"{PWFILE}\"\n",
			unsetEnv: []string{"CARDSYNC_API_PASSWORD"},
			wantKey:  "api.password_file", wantLine: 3, wantMsg: "0644"},
		// A FIFO blocked check in open(2) for good; a file of two lines
		// was sent whole as the password.
		{name: "password file is a FIFO", file: "[api]\npassword_file = \"{PWFIFO}\"\n", command: "check",
			unsetEnv: []string{"CARDSYNC_API_PASSWORD"},
			wantKey:  "api.password_file", wantLine: 2, wantMsg: "a named pipe (FIFO), not a regular file"},
		{name: "password file of two lines", file: "[api]\npassword_file = \"{PWTWOLINES}\"\n",
			unsetEnv: []string{"CARDSYNC_API_PASSWORD"},
			wantKey:  "api.password_file", wantLine: 2, wantMsg: "more than one line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDeployment(t, &upstream{URL: "http://127.0.0.1:9"})
			for _, k := range tc.unsetEnv {
				delete(d.env, k)
			}
			confDir := t.TempDir()
			args := []string{cmp.Or(tc.command, "backfill")}
			cfgPath := filepath.Join(confDir, "cardsync.toml")
			if tc.file != "" {
				pw := filepath.Join(confDir, "api-password")
				if err := os.WriteFile(pw, []byte(canary+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(pw, 0o644); err != nil { // whatever the umask
					t.Fatal(err)
				}
				fifo := filepath.Join(confDir, "api-password.fifo")
				if err := syscall.Mkfifo(fifo, 0o600); err != nil {
					t.Fatal(err)
				}
				twoLines := filepath.Join(confDir, "api-password.two-lines")
				if err := os.WriteFile(twoLines, []byte(canary+"\n"+canary+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				text := strings.NewReplacer("{PWFILE}", pw, "{PWFIFO}", fifo, "{PWTWOLINES}", twoLines).Replace(tc.file)
				if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "-config", cfgPath)
			}
			code, out, errOut := d.run(args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (config error)\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if !strings.Contains(errOut, tc.wantKey) {
				t.Errorf("stderr does not name the key %s:\n%s", tc.wantKey, errOut)
			}
			if tc.wantLine > 0 {
				if where := fmt.Sprintf("%s:%d", cfgPath, tc.wantLine); !strings.Contains(errOut, where) {
					t.Errorf("stderr does not point at %s:\n%s", where, errOut)
				}
			}
			if tc.wantMsg != "" && !strings.Contains(errOut, tc.wantMsg) {
				t.Errorf("stderr does not say %q:\n%s", tc.wantMsg, errOut)
			}
			if strings.Contains(out+errOut, canary) {
				t.Errorf("the password file's content was printed")
			}
			entries, err := os.ReadDir(d.dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				t.Errorf("%s was created in the warehouse directory", e.Name())
			}
			t.Logf("exit %d: %s", code, strings.TrimSpace(errOut))
		})
	}
}

// TestSecretsInDataProof serves cards and an account that carry the API
// password and the current token (secrets-in-data: a value, a key, a
// nested value, a "Bearer" text, an item rejected for reusing an id, the
// account's name and raw body), runs a backfill, a backup and the report,
// and checks the warehouse, its -wal, the backup and the report for the
// password, every token and every 8-byte piece of each: none is there, the
// items are kept with [REDACTED] in their place, and sync_runs counts them.
func TestSecretsInDataProof(t *testing.T) { testSecretsInData(t, toSQLite) }

// TestPostgresSecretsInDataProof is TestSecretsInDataProof on PostgreSQL:
// every public table read as text (report and backup read SQLite files).
func TestPostgresSecretsInDataProof(t *testing.T) { testSecretsInData(t, toPostgres) }

func testSecretsInData(t *testing.T, dest destination) {
	up := newUpstream(t, sim.Options{Seed: 53, Cards: 45, Password: canary, Faults: []sim.Fault{{Kind: sim.FaultSecretsInData}}})
	d := newDeploymentTo(t, up, dest)
	d.env["CARDSYNC_API_PASSWORD"] = canary
	scan := &leakScan{}
	run := func(label string, args ...string) {
		t.Helper()
		code, out, errOut := d.run(args...)
		scan.add(label+" stdout", []byte(out))
		scan.add(label+" stderr", []byte(errOut))
		if code != 0 {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", label, code, out, errOut)
		}
	}
	run("backfill", "backfill")
	run("second backfill", "backfill")
	db := openRO(t, d.db)
	if dest == toPostgres {
		// report and backup work on SQLite files: the tables are all there is.
		tables, err := db.Query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for tables.Next() {
			var n string
			if err := tables.Scan(&n); err != nil {
				t.Fatal(err)
			}
			names = append(names, n)
		}
		tables.Close()
		for _, n := range names {
			var text string
			if err := db.QueryRow(`SELECT coalesce(string_agg(t::text, E'\n'), '') FROM ` + n + ` t`).Scan(&text); err != nil {
				t.Fatal(err)
			}
			scan.add("table "+n, []byte(text))
		}
	} else {
		report := filepath.Join(t.TempDir(), "report.html")
		run("report", "report", "-o", report, "-since", "3650d")
		html, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		scan.add("report", html)
		if !bytes.Contains(html, []byte(`[REDACTED]`)) {
			t.Errorf("the report shows no [REDACTED]: its rejected items table proves nothing")
		}
		backups := t.TempDir()
		run("backup", "backup", "-to", backups)
		scan.addFiles(t, d.dir, "after the backup")
		scan.addFiles(t, backups, "backup")
	}

	var redacted, rejected, versions int64
	if err := db.QueryRow(`SELECT sum(secrets_redacted), sum(cards_rejected) FROM sync_runs`).Scan(&redacted, &rejected); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM card_versions`).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	// Per run and page: the first card's note, token key, nested value
	// and the rejected item; per run: the account's name and notes.
	if redacted < 2*(3*4+2) || rejected < 2*3 {
		t.Errorf("secrets_redacted %d, cards_rejected %d over two runs of 3 pages: want the secrets counted and the items rejected", redacted, rejected)
	}
	if versions != 45 {
		t.Errorf("%d card versions for 45 cards: a new token in the data each run must not make a new version", versions)
	}
	var name string
	if err := db.QueryRow(`SELECT name FROM account_snapshots ORDER BY snapshot_id DESC LIMIT 1`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if name != "Acme [REDACTED] [REDACTED]" {
		t.Errorf("account name %q, want the password and the token replaced", name)
	}

	tokens := up.Tokens()
	if len(tokens) < 2 {
		t.Fatalf("the upstream saw %d tokens, want one per run", len(tokens))
	}
	secrets := map[string]string{}
	for name, s := range map[string]string{"password": canary} {
		secrets[name] = s
	}
	for i, tok := range tokens {
		secrets[fmt.Sprintf("token %d", i)] = tok
	}
	for name, s := range maps.Clone(secrets) {
		for k := 0; k+8 <= len(s); k++ {
			secrets[fmt.Sprintf("%s bytes %d-%d", name, k, k+8)] = s[k : k+8]
		}
	}
	scan.check(t, secrets)
}
