//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/internal/testbinary"
	"github.com/cardsync/cardsync/sim"
)

// How many accounts one warehouse holds (`make bench-accounts`, issue 24):
// one `cardsync serve` (the built binary, shipped pacing: 180/1m, 10/1m)
// syncs N accounts, each from its own simulator (a sim.Server on its own
// loopback port with the API's real limits: 180 requests and 10 tokens a
// minute), into one SQLite file and into one PostgreSQL database (a
// throwaway server started from the Debian binaries with PostgreSQL's
// shipped durability: fsync, synchronous_commit and full_page_writes on).
// Each simulator holds more cards than a walk reaches in the trial, so
// every account backfills for the whole window (every page new cards:
// the heaviest steady state). After every account has fetched a page and a
// warm-up, a window measures each account's accepted requests per minute
// from its simulator's side against 180; an N passes when every account
// keeps >= 0.95 of that pace and no simulator answered a 429.
//
// It runs only with CARDSYNC_BENCH_ACCOUNTS set (the list of N to try in
// order, or "default"); the search stops at a target's first failing N and
// bisects between it and the last passing N (BENCH_ACCOUNTS_BISECT rounds).
// BENCH_ACCOUNTS_WARMUP, BENCH_ACCOUNTS_WINDOW (Go durations),
// BENCH_ACCOUNTS_TARGETS ("sqlite,postgres") and
// BENCH_ACCOUNTS_PG_MAX_CONNECTIONS tune it. The server keeps PostgreSQL's
// default max_connections (100) unless that variable sets it: serve's
// accounts share one pool of [warehouse] max_connections (default 20), and
// the table reports the most connections seen during the window.

// benchAccountsDefault is the list of N tried by CARDSYNC_BENCH_ACCOUNTS=default.
const benchAccountsDefault = "25,50,100,200,300,400"

// paceFloor is the share of 180/min every account must keep.
const paceFloor = 0.95

// apiPace is the API's limit per account: requests a minute.
const apiPace = 180

// accountsBench is one configured search.
type accountsBench struct {
	steps          []int
	warmup, window time.Duration
	targets        []string
	bisect         int
	pgMaxConns     int // 0: pgDefaultMaxConnections
}

// trialResult is what one N cost and whether every account kept its pace.
type trialResult struct {
	target           string
	n                int
	minPace, medPace float64
	limited          int64   // 429s answered by the simulators, whole trial
	cpuPerAcct       float64 // cardsync CPU seconds per account per minute of the window
	rssPerAcct       float64 // MiB of cardsync's resident set per account (end of window)
	rssMiB           float64
	conns            int    // most PostgreSQL connections of cardsync seen in the window (-1: SQLite)
	logErrors        int    // ERROR lines in serve's log
	firstError       string // the first of them
	note             string
}

func (r trialResult) ok() bool {
	return r.note == "" && r.limited == 0 && r.minPace >= paceFloor
}

func (r trialResult) verdict() string {
	switch {
	case r.note != "":
		return "FAIL (" + r.note + ")"
	case r.limited > 0:
		return "FAIL (429s)"
	case r.minPace < paceFloor:
		return "FAIL (pace)"
	}
	return "ok"
}

func TestAccountsPerWarehouse(t *testing.T) {
	spec := os.Getenv("CARDSYNC_BENCH_ACCOUNTS")
	if spec == "" {
		t.Skip("set CARDSYNC_BENCH_ACCOUNTS (e.g. default, or 50,100,200) to run: make bench-accounts")
	}
	b := parseAccountsBench(t, spec)
	fmt.Printf("accounts bench: warm-up %s, window %s, pace floor %.2f of %d/min, load %s\n",
		b.warmup, b.window, paceFloor, apiPace, loadAverage())
	var summary []string
	for _, target := range b.targets {
		results := b.search(t, target)
		best := 0
		for _, r := range results {
			if r.ok() && r.n > best {
				best = r.n
			}
		}
		summary = append(summary, fmt.Sprintf("accounts bench: %s holds N = %d accounts (tried %s)", target, best, triedList(results)))
	}
	for _, s := range summary {
		fmt.Println(s)
	}
}

func triedList(rs []trialResult) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%d:%s", r.n, map[bool]string{true: "ok", false: "fail"}[r.ok()]))
	}
	return strings.Join(out, " ")
}

func parseAccountsBench(t *testing.T, spec string) accountsBench {
	t.Helper()
	if spec == "default" || spec == "1" {
		spec = benchAccountsDefault
	}
	b := accountsBench{warmup: 30 * time.Second, window: 60 * time.Second, targets: []string{"sqlite", "postgres"}, bisect: 1}
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			t.Fatalf("CARDSYNC_BENCH_ACCOUNTS=%q: want a list of account counts", spec)
		}
		b.steps = append(b.steps, n)
	}
	envDur := func(name string, d *time.Duration) {
		if v := os.Getenv(name); v != "" {
			var err error
			if *d, err = time.ParseDuration(v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	envInt := func(name string, n *int) {
		if v := os.Getenv(name); v != "" {
			var err error
			if *n, err = strconv.Atoi(v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	envDur("BENCH_ACCOUNTS_WARMUP", &b.warmup)
	envDur("BENCH_ACCOUNTS_WINDOW", &b.window)
	envInt("BENCH_ACCOUNTS_BISECT", &b.bisect)
	envInt("BENCH_ACCOUNTS_PG_MAX_CONNECTIONS", &b.pgMaxConns)
	if v := os.Getenv("BENCH_ACCOUNTS_TARGETS"); v != "" {
		b.targets = strings.Split(v, ",")
	}
	return b
}

// search tries the steps in order until one fails, then bisects between
// the last passing N and the failing one.
func (b accountsBench) search(t *testing.T, target string) []trialResult {
	printTrialHeader(target)
	var results []trialResult
	lo, hi := 0, 0
	for _, n := range b.steps {
		r := b.trial(t, target, n)
		printTrialRow(r)
		results = append(results, r)
		if !r.ok() {
			hi = n
			break
		}
		lo = n
	}
	for range b.bisect {
		if hi == 0 || hi-lo <= max(lo/10, 1) {
			break
		}
		mid := (lo + hi) / 2
		r := b.trial(t, target, mid)
		printTrialRow(r)
		results = append(results, r)
		if r.ok() {
			lo = mid
		} else {
			hi = mid
		}
	}
	return results
}

func printTrialHeader(target string) {
	fmt.Printf("\n== %s\n", target)
	fmt.Printf("| %-5s | %-15s | %-4s | %-22s | %-16s | %-5s | %-6s | %s\n",
		"N", "pace min/median", "429s", "CPU s/account/minute", "RSS MiB/account", "conns", "errors", "verdict")
}

func printTrialRow(r trialResult) {
	conns := "-"
	if r.conns >= 0 {
		conns = strconv.Itoa(r.conns)
	}
	fmt.Printf("| %-5d | %.3f / %.3f   | %-4d | %-22.4f | %-16.3f | %-5s | %-6d | %s (RSS %.0f MiB, load %s)\n",
		r.n, r.minPace, r.medPace, r.limited, r.cpuPerAcct, r.rssPerAcct, conns, r.logErrors, r.verdict(), r.rssMiB, loadAverage())
	if r.firstError != "" {
		fmt.Printf("  first ERROR line: %.400s\n", r.firstError)
	}
}

// trial runs one daemon with n accounts into a fresh warehouse of target.
func (b accountsBench) trial(t *testing.T, target string, n int) trialResult {
	t.Helper()
	res := trialResult{target: target, n: n, conns: -1}
	dir := t.TempDir()
	// Enough cards that no walk ends inside the trial: 3 pages a second of 15.
	cards := int((b.warmup+b.window+90*time.Second).Seconds())*3*sim.DefaultPageSize + 100
	sims := make([]*sim.Server, n)
	urls := make([]string, n)
	for i := range n {
		sims[i] = sim.New(sim.Options{Seed: int64(1000 + i), Cards: cards})
		ts := httptest.NewServer(sims[i])
		defer ts.Close()
		urls[i] = ts.URL
	}
	where := "path = " + strconv.Quote(filepath.Join(dir, "warehouse.db"))
	var pgURL string
	if target == "postgres" {
		var stop func()
		pgURL, stop = benchPG(t, cmp.Or(b.pgMaxConns, pgDefaultMaxConnections))
		defer stop()
		where = "url = " + strconv.Quote(pgURL)
	}
	cfgPath := writeAccountsConfig(t, dir, where, urls)
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(built(t), "serve", "-config", cfgPath)
	testbinary.Own(cmd)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stopServe(t, cmd)

	if !allFetching(sims, cmd, 3*time.Minute) {
		res.note = "not every account fetched within 3m"
		return res
	}
	time.Sleep(b.warmup)
	before, cpu0 := accepted(sims), procCPU(cmd.Process.Pid)
	start := time.Now()
	peak := watchConnections(t, pgURL, b.window)
	after, cpu1 := accepted(sims), procCPU(cmd.Process.Pid)
	el := time.Since(start)
	if cmd.ProcessState != nil {
		res.note = "serve exited"
		return res
	}
	paces := make([]float64, n)
	for i := range n {
		paces[i] = float64(after[i]-before[i]) / el.Minutes() / apiPace
	}
	slices.Sort(paces)
	res.minPace, res.medPace = paces[0], paces[n/2]
	for _, s := range sims {
		res.limited += s.Stats().RateLimited
	}
	res.cpuPerAcct = (cpu1 - cpu0).Seconds() / float64(n) / el.Minutes()
	res.rssMiB = float64(procRSSKiB(cmd.Process.Pid)) / 1024
	res.rssPerAcct = res.rssMiB / float64(n)
	if pgURL != "" {
		res.conns = max(peak, pgConnections(t, pgURL))
	}
	res.logErrors, res.firstError = countErrors(filepath.Join(dir, "serve.log"))
	return res
}

func writeAccountsConfig(t *testing.T, dir, where string, urls []string) string {
	t.Helper()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(sim.DefaultPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var c strings.Builder
	fmt.Fprintf(&c, "[warehouse]\n%s\n\n[schedule]\ncron = \"@every 1h\"\nrun_on_start = true\n\n[log]\nformat = \"json\"\n\n", where)
	for i, u := range urls {
		fmt.Fprintf(&c, "[[accounts]]\nname = \"a%04d\"\nbase_url = %q\nemail = %q\npassword_file = %q\n\n", i, u, sim.DefaultEmail, pw)
	}
	path := filepath.Join(dir, "cardsync.toml")
	if err := os.WriteFile(path, []byte(c.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func stopServe(t *testing.T, cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Logf("serve did not stop within 90s of SIGTERM: killed")
	}
}

// allFetching waits until every simulator has served a card page.
func allFetching(sims []*sim.Server, cmd *exec.Cmd, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		waiting := 0
		for _, s := range sims {
			if s.Stats().Requests[sim.EndpointCards] == 0 {
				waiting++
			}
		}
		if waiting == 0 {
			return true
		}
		time.Sleep(time.Second)
	}
	return false
}

// accepted returns each simulator's accepted data requests so far.
func accepted(sims []*sim.Server) []int64 {
	out := make([]int64, len(sims))
	for i, s := range sims {
		out[i] = s.Stats().General.Accepted
	}
	return out
}

// procCPU is a live process's user+system CPU time (/proc/PID/stat).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// Fields after the command: state is [0], utime [11], stime [12].
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * time.Second / 100 // USER_HZ
}

// procRSSKiB is a live process's resident set (VmRSS).
func procRSSKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

// countErrors counts the ERROR lines of serve's log and returns the first.
func countErrors(path string) (int, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1, ""
	}
	n, first := 0, ""
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, `"level":"ERROR"`) {
			if n++; first == "" {
				first = strings.TrimSpace(line)
			}
		}
	}
	return n, first
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// pgDefaultMaxConnections is PostgreSQL's default max_connections, the
// bench server's.
const pgDefaultMaxConnections = 100

// watchConnections waits for window, counting cardsync's connections to
// url (none: "") every second, and returns the most seen (-1: none
// counted).
func watchConnections(t *testing.T, url string, window time.Duration) int {
	if url == "" {
		time.Sleep(window)
		return -1
	}
	most := -1
	end := time.Now().Add(window)
	for time.Now().Before(end) {
		most = max(most, pgConnections(t, url))
		time.Sleep(min(time.Second, time.Until(end)))
	}
	return most
}

func pgConnections(t *testing.T, url string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Logf("count connections: %v", err)
		return -1
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'cardsync'`).Scan(&n); err != nil {
		t.Logf("count connections: %v", err)
		return -1
	}
	return n
}
