package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/cardsync/cardsync/internal/testbinary"
	"github.com/cardsync/cardsync/sim"
)

// binary is the cardsync executable, built once for the whole package the
// way a release is (testbinary.Cardsync), by TestMain.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	pg.Stop()
	testbinary.Cleanup()
	os.Exit(code)
}

// built returns the binary, building it on first use: a run of tests that
// needs none (the docs checks) builds nothing.
func built(t testing.TB) string {
	t.Helper()
	binary = testbinary.Cardsync(t)
	return binary
}

// upstream is a simulator over real HTTP on loopback that also records
// every Authorization header it received (for the secret checks).
type upstream struct {
	*sim.Server
	URL string

	mu     sync.Mutex
	tokens map[string]bool
}

// newUpstream starts a simulator. Zero Window/Limit mean a fast scaled
// window (1s, 1000 requests, 100 token requests).
func newUpstream(t *testing.T, opts sim.Options) *upstream {
	t.Helper()
	if opts.Window == 0 {
		opts.Window = time.Second
	}
	if opts.Limit == 0 {
		opts.Limit = 1000
	}
	if opts.AuthLimit == 0 {
		opts.AuthLimit = 100
	}
	u := &upstream{Server: sim.New(opts), tokens: map[string]bool{}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && tok != "" {
			u.mu.Lock()
			u.tokens[tok] = true
			u.mu.Unlock()
		}
		u.Server.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	u.URL = ts.URL
	return u
}

// Tokens returns every bearer token the upstream has seen.
func (u *upstream) Tokens() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for tok := range u.tokens {
		out = append(out, tok)
	}
	return out
}

// destination is the kind of warehouse a deployment writes.
type destination string

const (
	toSQLite   destination = "sqlite"
	toPostgres destination = "postgres"
)

// isPostgres reports whether a deployment's warehouse (its db) is a
// PostgreSQL URL rather than a SQLite file.
func isPostgres(where string) bool {
	return strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://")
}

// deployment is one warehouse and the environment the binary runs with.
type deployment struct {
	t   *testing.T
	dir string
	// db is the warehouse: the SQLite file's path, or the URL of the
	// PostgreSQL database (postgres://…) of a PostgreSQL deployment. The
	// read helpers (openRO and those built on it) take either.
	db  string
	env map[string]string
	// cred, when set, runs the binary as that user (root only).
	cred *syscall.Credential
}

func newDeployment(t *testing.T, up *upstream) *deployment {
	t.Helper()
	dir := t.TempDir()
	d := &deployment{t: t, dir: dir, db: filepath.Join(dir, "warehouse.db"), env: map[string]string{
		"CARDSYNC_API_EMAIL":           sim.DefaultEmail,
		"CARDSYNC_API_PASSWORD":        sim.DefaultPassword,
		"CARDSYNC_API_RATE_LIMIT":      "1000/1s",
		"CARDSYNC_API_AUTH_RATE_LIMIT": "100/1s",
		"CARDSYNC_API_TIMEOUT":         "5s",
		"CARDSYNC_API_MAX_WAIT":        "10s",
		"CARDSYNC_LOG_FORMAT":          "json",
		"CARDSYNC_LOG_LEVEL":           "debug",
	}}
	if up != nil {
		d.env["CARDSYNC_API_BASE_URL"] = up.URL
	}
	d.env["CARDSYNC_WAREHOUSE_PATH"] = d.db
	return d
}

// newDeploymentTo is newDeployment writing to dest: for toPostgres, a
// fresh database of the package's PostgreSQL server (pgServer), named by
// CARDSYNC_WAREHOUSE_URL ([warehouse] url) with no warehouse path set.
func newDeploymentTo(t *testing.T, up *upstream, dest destination) *deployment {
	t.Helper()
	d := newDeployment(t, up)
	if dest == toPostgres {
		d.db = pgServer(t).NewDatabase(t)
		delete(d.env, "CARDSYNC_WAREHOUSE_PATH")
		d.env["CARDSYNC_WAREHOUSE_URL"] = d.db
	}
	return d
}

func (d *deployment) environ() []string {
	env := []string{"PATH=" + os.Getenv("PATH")}
	if _, ok := d.env["HOME"]; !ok {
		env = append(env, "HOME="+d.dir)
	}
	for k, v := range d.env {
		env = append(env, k+"="+v)
	}
	return env
}

// command returns the built binary ready to run with the deployment's
// environment.
func (d *deployment) command(ctx context.Context, args ...string) (*exec.Cmd, *lockedWriter, *lockedWriter) {
	bin := binary // built by a benchmark's benchDeployment, whose d.t is nil
	if bin == "" {
		bin = built(d.t)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = d.environ()
	if d.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: d.cred}
	}
	// Its process group dies with the test, even when the test binary
	// panics on its deadline.
	testbinary.Own(cmd)
	stdout, stderr := &lockedWriter{w: new(bytes.Buffer)}, &lockedWriter{w: new(bytes.Buffer)}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd, stdout, stderr
}

// run runs the binary to completion and returns its exit code and output.
func (d *deployment) run(args ...string) (int, string, string) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.t.Context(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := d.command(ctx, args...)
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			d.t.Fatalf("run %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return code, stdout.String(), stderr.String()
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Bytes returns a copy of what was written so far; safe while the
// process writes.
func (l *lockedWriter) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.w.Bytes())
}

// String returns what was written so far; safe while the process writes.
func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// openRO opens the warehouse read-only, as an analyst would: a SQLite file
// in mode=ro, or a PostgreSQL database in read-only transactions. Queries
// meant for both write their parameters $1, $2…, which both drivers bind.
func openRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	if isPostgres(path) {
		return openPostgresRO(t, path)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openPostgresRO opens a PostgreSQL warehouse through pgx's database/sql
// driver with every transaction read-only. It keeps no idle connection:
// tests open many readers, often in parallel, and the server's
// connections are shared with the binaries under test.
func openPostgresRO(t *testing.T, rawURL string) *sql.DB {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("warehouse URL: %v", err)
	}
	q := u.Query()
	q.Set("default_transaction_read_only", "on")
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(0)
	t.Cleanup(func() { db.Close() })
	return db
}

// utcText is the SQL expression of a time column as the SQLite warehouse
// stores it (UTC text, YYYY-MM-DDTHH:MM:SSZ), for a warehouse at where:
// the column itself in SQLite, its timestamptz formatted in PostgreSQL.
func utcText(where, column string) string {
	if !isPostgres(where) {
		return column
	}
	return `to_char(` + column + ` AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`
}

func queryInt(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n sql.NullInt64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n.Int64
}

// canonicalJSON decodes JSON without float64 so documents compare by value.
func canonicalJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// requireRoot skips a test that must switch users when not run as root,
// except in CI (CARDSYNC_REQUIRE_TOOLS set), where it fails: CI runs as
// root, and a check that never runs proves nothing.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CARDSYNC_REQUIRE_TOOLS") != "" {
		t.Fatal("this test switches users and needs root; CI must run it")
	}
	t.Skip("needs root to run the binary as a non-root service user")
}

// Service and analyst ids of the permission tests: plain numbers, no
// passwd entries needed.
const (
	serviceUID = 40001
	serviceGID = 40001 // the analysts' read group, as in the unit
	analystUID = 40002
)

// stateDir makes a state directory like the unit's StateDirectory=:
// owned by the service user, setgid, 2750. It lives outside t.TempDir (whose
// parents are 0700) so the other uids can reach it.
func stateDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cardsync-state-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, serviceUID, serviceGID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o750|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// asService makes the deployment run as the service user with its
// warehouse in a state directory of its own.
func (d *deployment) asService(t *testing.T) {
	t.Helper()
	dir := stateDir(t)
	d.db = filepath.Join(dir, "warehouse.db")
	d.env["CARDSYNC_WAREHOUSE_PATH"] = d.db
	d.env["HOME"] = dir
	d.cred = &syscall.Credential{Uid: serviceUID, Gid: serviceGID}
}

// account is one [[accounts]] entry of a test's config: its name and its
// upstream's URL.
type account struct{ name, url string }

// useAccounts writes d's config with one [[accounts]] entry per account,
// in order, each signing in to its simulator with the default credentials
// (a password file beside the config) at a pace no test waits on, and
// points CARDSYNC_CONFIG at it.
func (d *deployment) useAccounts(t *testing.T, accounts ...account) {
	t.Helper()
	pw := filepath.Join(d.dir, "pw")
	if err := os.WriteFile(pw, []byte(sim.DefaultPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg strings.Builder
	for _, a := range accounts {
		fmt.Fprintf(&cfg, "[[accounts]]\nname = %q\nbase_url = %q\nemail = %q\npassword_file = %q\nrate_limit = \"1000/1s\"\nauth_rate_limit = \"100/1s\"\n\n",
			a.name, a.url, sim.DefaultEmail, pw)
	}
	if err := os.WriteFile(filepath.Join(d.dir, "c.toml"), []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	d.env["CARDSYNC_CONFIG"] = filepath.Join(d.dir, "c.toml")
}
