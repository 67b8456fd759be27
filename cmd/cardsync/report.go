package main

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/report"
	"github.com/cardsync/cardsync/worker"
)

const reportUsage = `
Usage: cardsync report [-o FILE] [flags]

Writes one self-contained HTML file about the warehouse: account balances
over time, cards by status, cards new/changed/removed, run outcomes,
durations, 429s, rejections and held removals (over up to 3 days of
data: per run up to 72 runs, else per second, 5 s, 15 s, minute, 5 min,
15 min or hour, the smallest giving at most 72 points; beyond 3 days of
data, per day), the latest balances
as exact decimals, the last 20 runs, the cards that changed with their
fields before and after, and rejected items. The file has no script and
loads nothing from anywhere: open it in any browser, mail it, print it.

With [[accounts]] in the config it reports on one account: -account NAME,
or the first account of the config; the page names it in its heading
and title.

It opens the warehouse read-only (while the worker runs, too), needs no
API password and makes no API request. The file is written to a temporary
file beside FILE and renamed over it; a new file gets the SQLite
warehouse file's permissions (less the umask).

With [warehouse] url it reads the PostgreSQL warehouse instead, in one
read-only transaction (a role with SELECT alone is enough), and shows the
same figures and exact amounts; a new file is then readable by its owner
only (0600), as is serve's refresh of [report] path.

Examples:
  cardsync report -config /etc/cardsync/config.toml -o /srv/www/cardsync.html
  cardsync report -db ./cardsync-demo.db -o report.html -since 30d && xdg-open report.html
  CARDSYNC_WAREHOUSE_URL=postgres://cardsync@db.example/cardsync cardsync report -o report.html
`

func (m *Main) runReport(ctx context.Context, args []string) error {
	flags := m.newFlagSet("report", reportUsage)
	var cf commonFlags
	cf.register(flags)
	out := flags.String("o", "report.html", "the HTML file to write")
	sinceText := flags.String("since", "90d", "how far back the report looks: a Go duration (36h) or days (90d)")
	account := flags.String("account", "", "the [[accounts]] name to report on (default: the config's first account)")
	s, accounts, err := m.parseAccounts(flags, args, &cf, account, false)
	if err != nil {
		return err
	}
	since, err := config.ParseSince(*sinceText)
	if err != nil {
		return &usageError{msg: fmt.Sprintf("-since %q: %v", *sinceText, err)}
	}
	if *out == "" {
		return &usageError{msg: "-o: want a file name"}
	}
	fx := fixer{command: "report", s: s, cl: m.commandLine(cf), output: "-o"}
	wh, err := openForReading(ctx, s, accounts[0].Name)
	if err != nil {
		return fx.withFix(err)
	}
	defer wh.Close()
	opts := report.Options{Since: since, Mode: reportMode(s.WarehouseURL, s.DBPath), Account: reportAccount(s, accounts[0].Name)}
	if err := writeReport(ctx, wh, *out, opts); err != nil {
		return fx.withFix(err)
	}
	fmt.Fprintf(m.Stdout, "report: %s\n", *out)
	return nil
}

// writeReport writes the report of wh (either dialect reads the report's
// data: load.Reporter) to out.
func writeReport(ctx context.Context, wh load.Reporter, out string, opts report.Options) error {
	return report.Write(ctx, wh, out, opts)
}

// reportAccount is the account name a report of account says: the name
// when the settings name accounts (config.Settings.NamedAccounts), empty
// for the [api] table's one account, whose page never named it.
func reportAccount(s config.Settings, account string) string {
	if !s.NamedAccounts() {
		return ""
	}
	return account
}

// reportMode is the permission of a new report file (less the umask): the
// warehouse file's, or, with a PostgreSQL URL, which has no file to take
// the mode from, postgresReportMode: the page shows the account's data, so
// only its owner may read it.
func reportMode(url, path string) fs.FileMode {
	if url != "" {
		return postgresReportMode
	}
	return fileMode(path)
}

// postgresReportMode is the permission of a new report file of a
// PostgreSQL warehouse (less the umask), which has no file whose mode the
// report could follow.
const postgresReportMode fs.FileMode = 0o600

// fileMode is the permission of the file at path, for files made from it
// (a report of the warehouse); 0 when it cannot be read.
func fileMode(path string) fs.FileMode {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Mode().Perm()
}

// reportObserver is serve's [report] refresh of the config's first
// account, of the warehouse file at path or of the PostgreSQL warehouse of
// [warehouse] url: nil without [report] path.
func reportObserver(ctx context.Context, s config.Settings, path string, log *slog.Logger) *reportRefresh {
	if s.ReportPath == "" {
		return nil
	}
	account := load.DefaultAccount
	if len(s.Accounts) > 0 {
		account = s.Accounts[0].Name
	}
	target := readTarget(s)
	target.Path = path
	r := &reportRefresh{ctx: ctx, target: target, opts: load.Options{Account: account, Secrets: s.Secrets},
		out: s.ReportPath, since: s.ReportSince, account: reportAccount(s, account), log: log}
	r.write = r.writeOnce
	return r
}

// reportRefreshTimeout bounds one refresh of the report.
const reportRefreshTimeout = 5 * time.Minute

// reportRefresh writes the HTML report after each successful run, in the
// background on a read-only connection of its own (never the writer's,
// never inside the run's commit window or under its lock), one at a time:
// a success while a refresh is still writing is folded into it. The file is
// a temp file renamed over the last one, so a file server always has a
// whole page. A failure, or a panic (recovered), is logged, never fatal:
// the next success tries again.
type reportRefresh struct {
	ctx    context.Context // serve's: a stop cancels a refresh
	target dialect.Target
	// opts.Account is the one the report shows: the config's first.
	opts  load.Options
	out   string
	since time.Duration
	// account is the name the page says (empty: the [api] table's one
	// account, not named).
	account string
	log     *slog.Logger
	// write writes the report once (writeOnce; tests put a failure in).
	write func(ctx context.Context) error

	mu      sync.Mutex
	running bool
	again   bool
	wg      sync.WaitGroup
}

// RunFinished implements worker.Observer.
func (r *reportRefresh) RunFinished(_ context.Context, res worker.Result) {
	if res.Status != load.StatusSucceeded {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running {
		r.again = true
		return
	}
	r.running = true
	r.wg.Add(1)
	go r.loop()
}

// loop refreshes until no success arrived during the last refresh.
func (r *reportRefresh) loop() {
	defer r.wg.Done()
	for {
		r.refresh()
		r.mu.Lock()
		if !r.again || r.ctx.Err() != nil {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.again = false
		r.mu.Unlock()
	}
}

// refresh writes the report once and logs how it went. A failure is a
// warning; a panic (a bug, never the data's fault) is recovered and logged
// as an error without its stack, and the daemon goes on.
func (r *reportRefresh) refresh() {
	ctx, cancel := context.WithTimeout(r.ctx, reportRefreshTimeout)
	defer cancel()
	start := time.Now()
	panicked, err := r.writeRecovered(ctx)
	switch {
	case panicked:
		r.log.Error("[report] path not refreshed; the next successful run tries again", "path", r.out, "err", err)
	case err != nil:
		r.log.Warn("[report] path not refreshed; the next successful run tries again", "path", r.out, "err", err)
	default:
		r.log.Debug("report refreshed", "path", r.out, "duration", time.Since(start).Round(time.Millisecond))
	}
}

// writeRecovered runs r.write, turning a panic into an error.
func (r *reportRefresh) writeRecovered(ctx context.Context) (panicked bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked, err = true, fmt.Errorf("report refresh panicked: %v", p)
		}
	}()
	return false, r.write(ctx)
}

// writeOnce opens the warehouse read-only and writes the report.
func (r *reportRefresh) writeOnce(ctx context.Context) error {
	wh, err := dialect.OpenReadOnly(ctx, r.target, r.opts)
	if err != nil {
		return err
	}
	defer wh.Close()
	return writeReport(ctx, wh, r.out, report.Options{Since: r.since, Mode: reportMode(r.target.URL, r.target.Path), Account: r.account})
}

// wait waits for a refresh in progress (serve's stop, tests).
func (r *reportRefresh) wait() {
	if r != nil {
		r.wg.Wait()
	}
}

// asObserver returns r as a worker.Observer (nil when r is nil, so that
// worker.Observers skips it) and keeps it in list for the stop to wait on.
func asObserver(r *reportRefresh, list *[]*reportRefresh) worker.Observer {
	if r == nil {
		return nil
	}
	*list = append(*list, r)
	return r
}
