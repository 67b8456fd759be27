//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/internal/testbinary"
	"github.com/cardsync/cardsync/load/sqlitecheck"
	"github.com/cardsync/cardsync/sim"
)

// docFiles are the Markdown files whose code blocks the tests run:
// README.md, then every guide in docs/, by name (paths relative to the
// repository root).
func docFiles(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(guides) == 0 {
		t.Fatal("no guides in docs/")
	}
	sort.Strings(guides)
	out := []string{"README.md"}
	for _, g := range guides {
		out = append(out, "docs/"+filepath.Base(g))
	}
	return out
}

// docBlock is one fenced code block of README.md or a guide in docs/.
type docBlock struct {
	file string // relative to the repository root
	lang string
	line int // of the opening fence
	text string
}

// where names the block's opening fence, file:line.
func (b docBlock) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// docBlocks returns the fenced code blocks of every file of docFiles, in
// order.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	var out []docBlock
	for _, name := range docFiles(t) {
		out = append(out, fileBlocks(t, name)...)
	}
	return out
}

// fileBlocks returns the fenced code blocks of one Markdown file (a path
// relative to the repository root).
func fileBlocks(t *testing.T, name string) []docBlock {
	t.Helper()
	f, err := os.Open(filepath.Join("..", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docBlock
	var cur *docBlock
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &docBlock{file: name, lang: strings.TrimPrefix(trimmed, "```"), line: n}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += strings.TrimPrefix(line, "  ") + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// sqlStatements splits a block of SQL into statements, dropping comments.
func sqlStatements(text string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") || strings.TrimSpace(line) == "" {
			continue
		}
		cur.WriteString(line + "\n")
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// The least the docs held when they were split out of README.md (issue
// 27): a block or query lost in a move fails the test instead of silently
// no longer running.
const (
	minSQLiteStatements   = 20 // ```sql blocks run with sqlite3
	minPostgresStatements = 5  // ```sql blocks starting "-- postgres"
	minQueryCommands      = 10 // sqlite3, sqlite-utils, python3 lines on the warehouse
	minRunbookPsql        = 8  // the runbook's psql commands
	minShellBlocks        = 13 // ```sh blocks
)

// The production paths the docs use, replaced by the test's.
const (
	readmeConfig    = "/etc/cardsync/config.toml"
	readmeWarehouse = "/var/lib/cardsync/warehouse.db"
)

// TestREADME runs every SQL query and every shell command of README.md and
// of the guides in docs/ (docFiles).
// The queries run first, through the system sqlite3 CLI (what analysts
// use; Debian 12 ships 3.40), against a warehouse built by simulator runs
// with card changes, removals (one confirmed, one pending), a failed run,
// odd data (rejected items, rounded amounts) and moving balances: each must
// succeed and return rows. Then every command of a ```sh or ```text block
// that queries the warehouse with sqlite3, sqlite-utils or python3 runs on
// its own: each must open the file read-only, succeed, create no file and
// leave -wal and -shm in place (nothing else holds the file open then, so a
// read-write open would remove them on close; so would one of the queries
// above run without -readonly). Then every ```sh block runs as a bash script,
// with /etc/cardsync/config.toml and /var/lib/cardsync/warehouse.db pointing
// at that deployment and `cardsync` on PATH: blocks that use `go` or `make` run in the
// repository (the build and the demo write only git-ignored files there),
// the others in a scratch directory. The one command not run is `go test
// ./...`: it is the suite this test belongs to, run by CI itself. Host
// administration (journalctl, systemctl) is shown in ```text blocks.
func TestREADME(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("CARDSYNC_REQUIRE_TOOLS") != "" {
			t.Fatal("sqlite3 CLI not installed and CARDSYNC_REQUIRE_TOOLS is set")
		}
		t.Skip("sqlite3 CLI not installed")
	}
	blocks := docBlocks(t)
	up := newUpstream(t, sim.Options{Seed: 81, Cards: 300, OddData: true, FloatNoise: true, AccountDrift: true, ExtraFields: true})
	d := newDeployment(t, up)
	d.backfillOK(t)
	var ordinary []sim.Card
	for _, c := range up.Cards() {
		if c.Odd == "" {
			ordinary = append(ordinary, c)
		}
	}
	for _, c := range ordinary[:3] {
		up.UpdateCard(c.ID)
	}
	up.RemoveCard(ordinary[10].ID)
	up.RemoveCard(ordinary[20].ID)
	up.AddCard()
	d.backfillOK(t)
	d.backfillOK(t) // the two removals confirmed
	// It returns in the runs below (the cookbook's removed and returned cards).
	up.RestoreCard(ordinary[10])
	up.InjectFault(sim.Fault{Endpoint: "cards", Kind: sim.FaultStatus, Status: 403, Pages: []int{2}})
	if code, _, _ := d.run("backfill"); code == 0 {
		t.Fatal("the failing run succeeded")
	}
	up.ClearFaults()
	up.RemoveCard(ordinary[30].ID)
	d.backfillOK(t) // resumes the failed walk: the removal shifted cards, so it is inconsistent
	d.backfillOK(t) // a consistent walk: one removal pending
	ro := openRO(t, d.db)
	if n := queryInt(t, ro, `SELECT count(*) FROM removal_pending`); n != 1 {
		t.Fatalf("%d pending removals in the fixture, want 1", n)
	}
	if n := queryInt(t, ro, `SELECT count(*) FROM card_versions WHERE change = 'returned'`); n != 1 {
		t.Fatalf("%d returned cards in the fixture, want 1", n)
	}
	// From here on nothing else holds the file open: a read-write open that
	// closes last would remove -wal and -shm, which keepsWAL catches.
	ro.Close()
	keepsWAL := func(t *testing.T, what string) {
		t.Helper()
		for _, suffix := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(d.db + suffix); err != nil {
				t.Fatalf("%s removed the warehouse's %s: %v", what, suffix, err)
			}
		}
	}
	keepsWAL(t, "the fixture")

	t.Run("sql", func(t *testing.T) {
		n := 0
		for _, b := range blocks {
			if b.lang != "sql" || postgresBlock(b) {
				continue
			}
			for _, q := range sqlStatements(b.text) {
				n++
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				out, err := exec.CommandContext(ctx, cli, "-bail", "-readonly", d.db, q).CombinedOutput()
				cancel()
				keepsWAL(t, b.where()+": sqlite3 -readonly")
				if err != nil {
					t.Errorf("%s: %s\n%v: %s", b.where(), q, err, out)
					continue
				}
				if strings.TrimSpace(string(out)) == "" {
					t.Errorf("%s: no rows from\n%s", b.where(), q)
				}
			}
		}
		t.Logf("%d SQLite statements ran", n)
		if n < minSQLiteStatements {
			t.Errorf("only %d SQLite statements found in README.md and docs/, want at least %d", n, minSQLiteStatements)
		}
	})

	t.Run("read-only", func(t *testing.T) {
		readmeReadOnly(t, blocks, d, keepsWAL)
	})

	t.Run("sh", func(t *testing.T) {
		readmeShell(t, blocks, d, up)
	})
}

// readmeShell runs the docs' shell blocks against the fixture.
func readmeShell(t *testing.T, blocks []docBlock, d *deployment, up *upstream) {
	cfg := filepath.Join(d.dir, "config.toml")
	pw := filepath.Join(d.dir, "api-password")
	if err := os.WriteFile(pw, []byte(sim.DefaultPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[api]\nbase_url = %q\nemail = %q\npassword_file = %q\nrate_limit = \"1000/1s\"\nauth_rate_limit = \"100/1s\"\n[warehouse]\npath = %q\n",
		up.URL, sim.DefaultEmail, pw, d.db)), 0o600); err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(filepath.Join(repo, "cardsync")) })
	scratch := t.TempDir()
	benchFlags := regexp.MustCompile(`(-bench [^ ]+)( -benchtime [^ ]+)?`)
	goTest := regexp.MustCompile(`(?m)^go test \./\.\.\.(\s.*)?$`)
	n, found := 0, 0
	for _, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		found++
		script := goTest.ReplaceAllString(b.text, "# (go test ./... is CI's own step)")
		script = strings.ReplaceAll(script, readmeConfig, cfg)
		script = strings.ReplaceAll(script, readmeWarehouse, d.db)
		// The docs' benchmark commands run once each at a smoke size:
		// this proves they work; measuring is make bench's job, by hand.
		script = benchFlags.ReplaceAllString(script, "$1 -benchtime 1x")
		usesGo := regexp.MustCompile(`(?m)^((CGO_ENABLED=0 )?go|make) `).MatchString(script)
		if usesGo && testing.Short() {
			t.Logf("%s: skipped in -short mode (builds and benchmarks)", b.where())
			continue
		}
		n++
		dir := scratch
		if usesGo {
			dir = repo
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
		testbinary.Own(cmd) // a README line may start `cardsync sim &`
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + filepath.Dir(built(t)) + ":" + os.Getenv("PATH"), "HOME=" + scratch,
			// The build settings of this test's own build (CI's), so the
			// docs' go commands hit the build cache.
			"GOCACHE=" + goEnv("GOCACHE"), "GOPATH=" + goEnv("GOPATH"), "GOFLAGS=" + os.Getenv("GOFLAGS"),
			"CGO_ENABLED=" + goEnv("CGO_ENABLED"),
			benchSmokeEnv + "=1", "BENCH_QUIET_RUNS=20"}
		start := time.Now()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s: %v after %v\n%s\n--- output:\n%s", b.where(), err, time.Since(start).Round(time.Millisecond), script, lastLines(string(out)))
			continue
		}
		t.Logf("%s: ok in %v", b.where(), time.Since(start).Round(time.Millisecond))
	}
	t.Logf("%d of %d shell blocks ran", n, found)
	if n == 0 {
		t.Error("no shell block ran")
	}
	if found < minShellBlocks {
		t.Errorf("only %d ```sh blocks found in README.md and docs/, want at least %d", found, minShellBlocks)
	}
}

// readmeReadOnly runs the docs' query commands against the fixture, read-only.
func readmeReadOnly(t *testing.T, blocks []docBlock, d *deployment, keepsWAL func(*testing.T, string)) {
	cmds := docQueryCommands(blocks)
	t.Logf("%d query commands found", len(cmds))
	if len(cmds) < minQueryCommands {
		t.Fatalf("only %d query commands found in README.md and docs/, want at least %d", len(cmds), minQueryCommands)
	}
	sqlitecheck.Program(t, "sqlite-utils", "sqlite-utils python3-click-default-group")
	sqlitecheck.Program(t, "python3", "python3")
	for _, c := range cmds {
		if !strings.Contains(c.text, "-readonly ") && !strings.Contains(c.text, "?mode=ro") {
			t.Errorf("%s: does not open the warehouse read-only: %s", c.where(), c.text)
		}
		script := strings.ReplaceAll(c.text, readmeWarehouse, d.db)
		script = strings.ReplaceAll(script, "WAREHOUSE", d.db)
		script = strings.ReplaceAll(script, "'NAME'", "'default'")
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
		testbinary.Own(cmd) // a README line may start `cardsync sim &`
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		cancel()
		keepsWAL(t, c.where()+": "+c.text)
		if err != nil {
			t.Errorf("%s: %s\n%v: %s", c.where(), script, err, out)
			continue
		}
		if c.lang == "sh" && strings.TrimSpace(string(out)) == "" {
			t.Errorf("%s: no output from\n%s", c.where(), script)
		}
		if entries, _ := os.ReadDir(cmd.Dir); len(entries) > 0 {
			t.Errorf("%s: created %s in the working directory (a URI taken for a file name?)", c.where(), entries[0].Name())
		}
	}
}

// postgresBlock reports whether a ```sql block of the docs is
// PostgreSQL's: its first line is the comment "-- postgres".
func postgresBlock(b docBlock) bool {
	first, _, _ := strings.Cut(b.text, "\n")
	return b.lang == "sql" && strings.TrimSpace(first) == "-- postgres"
}

// docCommand is one command line of a code block of the docs.
type docCommand struct {
	file string
	lang string
	line int
	text string
}

// where names the command's line, file:line.
func (c docCommand) where() string { return fmt.Sprintf("%s:%d", c.file, c.line) }

// docQueryCommands returns every command line of the docs that queries
// the warehouse with an analyst's tool (sqlite3, sqlite-utils, python3),
// in ```sh blocks and in the runbook's ```text blocks (where the file is
// WAREHOUSE and the account NAME).
func docQueryCommands(blocks []docBlock) []docCommand {
	var out []docCommand
	for _, b := range blocks {
		if b.lang != "sh" && b.lang != "text" {
			continue
		}
		for i, line := range strings.Split(b.text, "\n") {
			line = strings.TrimSpace(line)
			tool := strings.HasPrefix(line, "sqlite3 ") || strings.HasPrefix(line, "sqlite-utils ") || strings.HasPrefix(line, "python3 ")
			if tool && (strings.Contains(line, readmeWarehouse) || strings.Contains(line, "WAREHOUSE")) {
				out = append(out, docCommand{file: b.file, lang: b.lang, line: b.line + 1 + i, text: line})
			}
		}
	}
	return out
}

func goEnv(key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
