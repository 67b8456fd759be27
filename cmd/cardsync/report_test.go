package main

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// TestReportCommand: report reads the warehouse named by the configuration
// (here CARDSYNC_WAREHOUSE_PATH, then -db) read-only and writes the file.
func TestReportCommand(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 3, Cards: 40})
	out := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := e.run(t.Context(), "report", "-o", out); code != exitWarehouse || !strings.Contains(errOut, "does not exist") {
		t.Errorf("report before any sync: exit %d, %q; want %d", code, errOut, exitWarehouse)
	}
	if code, _, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill exit %d: %s", code, errOut)
	}
	code, stdout, errOut := e.run(t.Context(), "report", "-o", out, "-since", "7d")
	if code != 0 || !strings.Contains(stdout, out) {
		t.Fatalf("report exit %d, stdout %q, stderr %s", code, stdout, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<h1>cardsync report</h1>") || !strings.Contains(string(b), "<title>cardsync report: ") || !strings.Contains(string(b), e.db) || strings.Contains(string(b), "<script") {
		t.Errorf("report does not name the warehouse or has a script:\n%.500s", b)
	}
	if code, _, _ := e.run(t.Context(), "report", "-o", out, "-since", "soon"); code != exitConfig {
		t.Errorf("-since soon: exit %d, want %d", code, exitConfig)
	}
	other := filepath.Join(t.TempDir(), "other.html")
	e.vars["CARDSYNC_WAREHOUSE_PATH"] = filepath.Join(t.TempDir(), "none.db")
	if code, _, errOut := e.run(t.Context(), "report", "-db", e.db, "-o", other); code != 0 {
		t.Errorf("report -db: exit %d: %s", code, errOut)
	}
}

func TestDemoWritesReport(t *testing.T) {
	dir := t.TempDir()
	e := &env{t: t, vars: map[string]string{}}
	code, out, errOut := e.run(t.Context(), "demo", "-db", filepath.Join(dir, "demo.db"), "-cards", "45", "-rate", "200")
	if code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, errOut)
	}
	page := filepath.Join(dir, "report.html")
	if !strings.Contains(out, "report: "+page) {
		t.Errorf("demo does not print the report's path %s:\n%s", page, out)
	}
	b, err := os.ReadFile(page)
	if err != nil || len(b) < 10_000 {
		t.Fatalf("demo report: %d bytes, %v", len(b), err)
	}
	checkDemoCharts(t, string(b))
}

// checkDemoCharts: every chart of the demo's report shows something: none
// says it has no data; the card changes count new, changed, removed and
// returned cards; the runs met a problem (the demo's 429); the amounts
// the simulator moves are drawn and the others said unchanged in a line;
// the backfill's bar is drawn broken, so the later runs' bars stay
// readable.
func checkDemoCharts(t *testing.T, page string) {
	t.Helper()
	if strings.Contains(page, `class="empty"`) {
		t.Error("a chart of the demo's report has no data")
	}
	changes := regexp.MustCompile(`Over the period: (\d+) new, (\d+) changed, (\d+) removed, (\d+) returned\.`).FindStringSubmatch(page)
	if changes == nil || slices.Contains(changes[1:], "0") {
		t.Errorf("card changes of the demo: %q, want some of each", changes)
	}
	if !strings.Contains(page, "Over the period: 1 answer 429 Too Many Requests") {
		t.Error("the demo's runs met no 429: the problems chart shows nothing")
	}
	for _, drawn := range []string{"balance", "cards_balance"} {
		if !strings.Contains(page, `id="bal-`+drawn+`-t"`) {
			t.Errorf("no chart of %s, which the demo moves", drawn)
		}
	}
	if n := strings.Count(page, "(unchanged over 4 snapshots)"); n != 3 {
		t.Errorf("%d amounts said unchanged over the 4 snapshots, want 3 (the simulator moves 2 of 5)", n)
	}
	if !strings.Contains(page, "<title>#1: ") || !strings.Contains(page, `class="cut"`) {
		t.Error("the backfill's bar is not drawn broken")
	}
}

// TestServeReportRefresh: serve's [report] observer writes the report
// after a successful run and leaves it alone after a failed one; without
// [report] path there is none.
func TestServeReportRefresh(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 4, Cards: 25})
	if code, _, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s", code, errOut)
	}
	out := filepath.Join(t.TempDir(), "site", "index.html")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	e.vars["CARDSYNC_REPORT_PATH"] = out
	e.vars["CARDSYNC_REPORT_SINCE"] = "7d"
	cfg, err := config.Load("", e.environ())
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Settings(false, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if s.ReportSince != 7*24*time.Hour {
		t.Fatalf("report.since = %v, want 7 days", s.ReportSince)
	}
	// The daemon's writer stays open, as under serve: the refresh reads
	// through a connection of its own.
	wh, err := sqlite.Open(t.Context(), s.DBPath, s.LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	var logs syncBuffer
	obs := reportObserver(t.Context(), s, s.DBPath, slog.New(slog.NewTextHandler(&logs, nil)))
	obs.RunFinished(t.Context(), worker.Result{Status: load.StatusFailed})
	obs.wait()
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("a failed run wrote the report")
	}
	obs.RunFinished(t.Context(), worker.Result{Status: load.StatusSucceeded})
	obs.RunFinished(t.Context(), worker.Result{Status: load.StatusSucceeded}) // folded into the first
	obs.wait()
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), "<svg") {
		t.Fatalf("report after a successful run: %v (%d bytes)", err, len(page))
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*")); len(leftovers) != 0 {
		t.Errorf("temp files left beside the report: %v", leftovers)
	}
	// A directory that is gone: logged, not fatal.
	bad := reportObserver(t.Context(), config.Settings{ReportPath: filepath.Join(t.TempDir(), "missing", "r.html"), ReportSince: time.Hour}, s.DBPath, slog.New(slog.NewTextHandler(&logs, nil)))
	bad.RunFinished(t.Context(), worker.Result{Status: load.StatusSucceeded})
	bad.wait()
	if !strings.Contains(logs.String(), "not refreshed") {
		t.Errorf("a failed refresh is not logged:\n%s", logs.String())
	}
	delete(e.vars, "CARDSYNC_REPORT_PATH")
	cfg, _ = config.Load("", e.environ())
	s, _ = cfg.Settings(false, func(string) string { return "" })
	if reportObserver(t.Context(), s, s.DBPath, nil) != nil {
		t.Errorf("without [report] path serve refreshes a report")
	}
}

// TestReportOnPostgres: with [warehouse] url, report reads the PostgreSQL
// warehouse (as a role with SELECT alone, too) and writes the page with
// the exact amounts of the account_balances view; a new file is 0600.
func TestReportOnPostgres(t *testing.T) {
	url := pgURL(t)
	srv, e := newEnv(t, sim.Options{Seed: 11, Cards: 25})
	a := srv.Account()
	a.Balance, a.CardsBalance, a.AvailableRechargeBalance = strPtr("31337.07"), strPtr("-0.07"), strPtr("0.10")
	srv.SetAccount(a)
	delete(e.vars, "CARDSYNC_WAREHOUSE_PATH")
	e.vars["CARDSYNC_WAREHOUSE_URL"] = url
	e.vars["CARDSYNC_CLUSTER_HOLDER"] = "test-host:1"
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 || !strings.Contains(out, "25 cards (25 new") {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := pgText(t, url, `SELECT balance::text || ' ' || cards_balance::text FROM account_balances`); got != "31337.07 -0.07" {
		t.Fatalf("account_balances holds %q", got)
	}

	role := fmt.Sprintf("reader_%d", time.Now().UnixNano())
	pgAdmin(t, url, `CREATE ROLE `+role+` LOGIN PASSWORD 'reader-pw'`,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT USAGE ON SCHEMA public TO `+role,
		`GRANT SELECT ON ALL TABLES IN SCHEMA public TO `+role)
	for _, as := range []string{"owner", "read-only role"} {
		t.Run(as, func(t *testing.T) {
			if as != "owner" {
				e.vars["CARDSYNC_WAREHOUSE_URL"] = strings.Replace(url, "postgres://postgres@", "postgres://"+role+"@", 1)
				e.vars["CARDSYNC_WAREHOUSE_PASSWORD"] = "reader-pw"
			}
			out := filepath.Join(t.TempDir(), "r.html")
			code, stdout, errOut := e.run(t.Context(), "report", "-o", out, "-since", "7d")
			if code != 0 || !strings.Contains(stdout, out) {
				t.Fatalf("report: exit %d, stdout %q, stderr %s", code, stdout, errOut)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			page := string(b)
			// The page names the warehouse by its redacted URL, defanged
			// (no URL in the page).
			shown := strings.ReplaceAll(html.EscapeString(postgres.RedactURL(e.vars["CARDSYNC_WAREHOUSE_URL"])), "://", "&#58;//")
			for _, want := range []string{"<h1>cardsync report</h1>", ">31337.07<", ">-0.07<", ">0.10<", shown} {
				if !strings.Contains(page, want) {
					t.Errorf("the page lacks %q", want)
				}
			}
			if strings.Contains(page, "<script") || strings.Contains(page, "reader-pw") {
				t.Error("the page has a script or the password")
			}
			if fi, err := os.Stat(out); err != nil || fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("report file mode %v (%v), want 0600 less the umask", fi.Mode(), err)
			}
		})
	}
}

func strPtr(s string) *string { return &s }

// TestServeReportRefreshOnPostgres: with [warehouse] url, serve's
// [report] refresh reads the PostgreSQL warehouse read-only and writes the
// page after a successful run; a new file is 0600.
func TestServeReportRefreshOnPostgres(t *testing.T) {
	url := pgURL(t)
	_, e := newEnv(t, sim.Options{Seed: 12, Cards: 15})
	delete(e.vars, "CARDSYNC_WAREHOUSE_PATH")
	e.vars["CARDSYNC_WAREHOUSE_URL"] = url
	e.vars["CARDSYNC_CLUSTER_HOLDER"] = "test-host:1"
	if code, out, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	out := filepath.Join(t.TempDir(), "index.html")
	e.vars["CARDSYNC_REPORT_PATH"] = out
	cfg, err := config.Load("", e.environ())
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Settings(false, func(string) string { return "" })
	if err != nil {
		t.Fatalf("[report] path with [warehouse] url: %v", err)
	}
	var logs syncBuffer
	obs := reportObserver(t.Context(), s, s.DBPath, slog.New(slog.NewTextHandler(&logs, nil)))
	obs.RunFinished(t.Context(), worker.Result{Status: load.StatusSucceeded})
	obs.wait()
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), "<svg") {
		t.Fatalf("report after a successful run: %v (%d bytes)\n%s", err, len(page), logs.String())
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("report file mode %v (%v), want 0600 less the umask", fi.Mode(), err)
	}
	if strings.Contains(logs.String(), "not refreshed") {
		t.Errorf("the refresh failed:\n%s", logs.String())
	}
}

// TestReportRefreshRecoversPanic: a refresh that panics is logged as an
// error, without a stack, and the daemon and the next refresh go on.
func TestReportRefreshRecoversPanic(t *testing.T) {
	var logs syncBuffer
	r := &reportRefresh{ctx: t.Context(), out: "site/index.html", log: slog.New(slog.NewTextHandler(&logs, nil))}
	calls := 0
	r.write = func(context.Context) error {
		calls++
		if calls == 1 {
			var none []int64
			_ = none[calls-1] // index out of range, as the chart's once was
		}
		return nil
	}
	r.RunFinished(t.Context(), worker.Result{Status: load.StatusSucceeded})
	r.wait()
	got := logs.String()
	if !strings.Contains(got, "level=ERROR") || !strings.Contains(got, "[report] path not refreshed") ||
		!strings.Contains(got, "index out of range") || strings.Contains(got, "goroutine") || strings.Contains(got, ".go:") {
		t.Errorf("a panicking refresh logged:\n%s\nwant one error line with the panic's message and no stack", got)
	}
	r.RunFinished(t.Context(), worker.Result{Status: load.StatusSucceeded})
	r.wait()
	if calls != 2 {
		t.Errorf("%d refreshes after a panic, want the next success to refresh again", calls)
	}
}

// TestReportNamesAccount: with [[accounts]], report and serve's refresh
// say in the page's heading and title which account it shows; the [api]
// table's one account's page does not (TestReportCommand).
func TestReportNamesAccount(t *testing.T) {
	_, _, e := accountsEnv(t)
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		args    []string
		account string
	}{{nil, "alpha"}, {[]string{"-account", "beta"}, "beta"}} {
		out := filepath.Join(dir, tt.account+".html")
		if code, _, errOut := e.run(t.Context(), append([]string{"report", "-o", out}, tt.args...)...); code != 0 {
			t.Fatalf("report %v: exit %d: %s", tt.args, code, errOut)
		}
		checkPageAccount(t, out, tt.account)
	}

	out := filepath.Join(dir, "served.html")
	e.vars["CARDSYNC_REPORT_PATH"] = out
	cfg, err := config.Load(e.vars["CARDSYNC_CONFIG"], e.environ())
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Settings(false, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	obs := reportObserver(t.Context(), s, s.DBPath, slog.New(slog.NewTextHandler(&logs, nil)))
	obs.RunFinished(t.Context(), worker.Result{Status: load.StatusSucceeded})
	obs.wait()
	if strings.Contains(logs.String(), "not refreshed") {
		t.Fatalf("the refresh failed:\n%s", logs.String())
	}
	checkPageAccount(t, out, "alpha")
}

func checkPageAccount(t *testing.T, path, account string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.Contains(page, "<h1>cardsync report for account "+account+"</h1>") || !strings.Contains(page, "<title>cardsync report for account "+account+": ") {
		t.Errorf("%s does not name account %s in its heading and title:\n%.700s", path, account, page)
	}
}

// TestReportExtremeBalances: the review's account, whose balance is
// 92233720368547758.07 (math.MaxInt64 cents) in one backfill and 0.01 in
// the next (the report hung), or 90000000000000000.00 then 0.01 (the
// report panicked), gets its page, with the exact amounts and no temporary
// file left, on SQLite and on PostgreSQL.
func TestReportExtremeBalances(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		for _, big := range []string{"92233720368547758.07", "90000000000000000.00", "-92233720368547758.07"} {
			t.Run(dialect+"/"+big, func(t *testing.T) {
				srv, e := newEnv(t, sim.Options{Seed: 21, Cards: 5})
				if dialect == "postgres" {
					url := pgURL(t)
					delete(e.vars, "CARDSYNC_WAREHOUSE_PATH")
					e.vars["CARDSYNC_WAREHOUSE_URL"] = url
					e.vars["CARDSYNC_CLUSTER_HOLDER"] = "test-host:1"
				}
				checkExtremeReport(t, srv, e, big)
			})
		}
	}
}

// checkExtremeReport backfills with the balance big, then 0.01, and
// checks the report.
func checkExtremeReport(t *testing.T, srv *sim.Server, e *env, big string) {
	t.Helper()
	for _, balance := range []string{big, "0.01"} {
		a := srv.Account()
		a.Balance = strPtr(balance)
		srv.SetAccount(a)
		if code, out, errOut := e.run(t.Context(), "backfill", "-no-progress"); code != 0 {
			t.Fatalf("backfill with balance %s: exit %d\n%s\n%s", balance, code, out, errOut)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	if code, _, errOut := e.run(t.Context(), "report", "-o", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{big, "0.01"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the page lacks the balance %s", want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
