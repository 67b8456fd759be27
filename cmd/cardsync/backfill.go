package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/cardsync/cardsync/load/dialect"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/metrics"
	"github.com/cardsync/cardsync/worker"
)

const backfillUsage = `
Usage: cardsync backfill [flags]

Runs one sync now (trigger "backfill"): authenticates, snapshots the account
and walks every card page into the warehouse. If an earlier walk was
interrupted, it resumes from that walk's checkpoint; -restart discards the
checkpoint and walks from page 1. On a terminal it shows a live progress line.

With [[accounts]] in the config, it syncs every account at the same time
(each with its own lock, token and checkpoint) and prints one summary per
account; -account NAME syncs that one only. If any account fails, the exit
code is that of the first failed account in the config's order.

-metrics-textfile PATH writes the run's metrics for node_exporter's textfile
collector after the run, even a failed one. When PATH's directory does not
exist (node_exporter not installed) it logs a warning and the exit code is
the sync's; any other failure to write it exits 1.

Exit codes: 0 synced, 1 another failure, 2 a bad flag or config, 3 the
credentials were refused, 4 another sync holds the warehouse (with
PostgreSQL: another replica holds the account's lease), 5 the API was
unavailable beyond api.max_wait, 6 a warehouse error, 7 an API answer it
cannot read, 130 interrupted (the checkpoint is kept; the next run resumes).

Examples:
  cardsync backfill -config /etc/cardsync/config.toml
  CARDSYNC_API_PASSWORD=... cardsync backfill -config cardsync.toml -db ./warehouse.db
  cardsync backfill -config cardsync.toml -restart
  cardsync backfill -config cardsync.toml -account acme
  cardsync backfill -config cardsync.toml -metrics-textfile /var/lib/prometheus/node-exporter/cardsync.prom
`

func (m *Main) runBackfill(ctx context.Context, args []string) error {
	fs := m.newFlagSet("backfill", backfillUsage)
	var cf commonFlags
	cf.register(fs)
	restart := fs.Bool("restart", false, "discard the checkpoint and walk from page 1")
	confirm := fs.Bool("confirm-removals", false, "apply removals the mass-removal guard held, when this walk confirms them")
	noProgress := fs.Bool("no-progress", false, "no live progress line, even on a terminal")
	textfile := fs.String("metrics-textfile", "", "after the run, even a failed one, write its metrics to this file in node_exporter's textfile format (written to a temporary file, then renamed; a directory that does not exist is only a warning)")
	account := fs.String("account", "", "sync only this [[accounts]] name (default: every account)")
	s, accounts, err := m.parseAccounts(fs, args, &cf, account, true)
	if err != nil {
		return err
	}
	var prog *progressLine
	log := m.logger(s)
	if !*noProgress && isTerminal(m.Stderr) && len(accounts) == 1 {
		prog = &progressLine{w: m.Stderr}
		// Log lines go through the progress line so they never collide.
		log = m.loggerTo(prog, s)
	}
	var met *metrics.Metrics
	if *textfile != "" {
		// The selected accounts' series, each labelled with its account.
		met = metrics.New(metrics.Options{Accounts: accountNameList(accounts), HealthyWithin: s.HealthyWithin, Logger: log, Warehouse: warehouseKind(s), Build: thisBuild().metrics()})
	}
	opts := worker.Options{Restart: *restart, ConfirmRemovals: *confirm}
	err = m.backfillAccounts(ctx, s, accounts, log, opts, prog, met, m.commandLine(cf))
	if met != nil {
		writeTextfile(log, met, *textfile, &err)
	}
	return err
}

// writeTextfile writes met to path after a backfill whose result is *err.
// A textfile directory that does not exist (node_exporter not installed)
// is a warning, as is one cardsync may not write (the setfacl step not
// taken): the sync's result stands, so a timer's tick that synced does
// not fail. Any other failure to write it is an error, and the
// command's when the sync succeeded.
func writeTextfile(log *slog.Logger, met *metrics.Metrics, path string, err *error) {
	werr := met.WriteTextfile(path)
	switch {
	case werr == nil:
	case errors.Is(werr, metrics.ErrNoTextfileDir):
		log.Warn("metrics textfile not written: its directory does not exist (is node_exporter's textfile collector installed?); "+
			"the sync's result stands. Create the directory, or drop -metrics-textfile (systemd: remove the textfile drop-in of cardsync-backfill.service)",
			"path", path)
	case errors.Is(werr, metrics.ErrTextfileDirNotWritable):
		log.Warn("metrics textfile not written: cardsync may not write its directory; the sync's result stands. "+
			"Let the user cardsync runs as write it (systemd/README.md: setfacl -m u:cardsync:rwx on the directory), or drop -metrics-textfile",
			"path", path, "err", werr)
	default:
		log.Error("metrics textfile not written", "err", werr)
		if *err == nil {
			*err = &worker.LoggedError{Err: werr}
		}
	}
}

// backfillAccounts runs one sync of each of accounts, all at once, and
// prints each one's summary (or failure) under its name: "account NAME: "
// when the accounts are named; the [api] table's one account prints its
// summary alone, and its failure is the command's error only. The error is
// the first failed account's, in the config's order.
func (m *Main) backfillAccounts(ctx context.Context, s config.Settings, accounts []config.AccountSettings, log *slog.Logger,
	opts worker.Options, prog *progressLine, met *metrics.Metrics, cl worker.CommandLine) error {
	pacers := groupPacers(s.Accounts)
	// The accounts share one PostgreSQL pool, bounded by
	// [warehouse] max_connections, as serve's do.
	pools := dialect.NewPools(s.PoolConns(len(accounts)))
	results := make([]worker.Result, len(accounts))
	errs := make([]error, len(accounts))
	var wg sync.WaitGroup
	for i, a := range accounts {
		wg.Go(func() {
			results[i], errs[i] = m.backfill(ctx, s, a, pacers, pools, accountLogger(s, log, a.Name), worker.TriggerBackfill, opts, prog, met,
				accountCommandLine(s, cl, a.Name))
		})
	}
	wg.Wait()
	var first error
	for i, a := range accounts {
		prefix, err := accountPrefix(s, a.Name), errs[i]
		if err == nil {
			fmt.Fprint(m.Stdout, prefix)
			printSummary(m.Stdout, results[i], accountCommandLine(s, cl, a.Name))
			continue
		}
		err = fixer{command: "backfill", s: s, account: a, cl: cl}.withFix(err)
		if prefix != "" {
			fmt.Fprintf(m.Stdout, "%sfailed (exit %d): %v\n", prefix, exitCode(err), err)
			if fix := fixOf("backfill", err); fix != "" {
				fmt.Fprintf(m.Stdout, "%sfix: %s\n", prefix, fix)
			}
			err = fmt.Errorf("%s%w", prefix, err)
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// backfill opens account a's store and runs one sync of it, paced by its
// rate_group's pacer (pacers; nil: its own); met, when not nil, counts it.
func (m *Main) backfill(ctx context.Context, s config.Settings, a config.AccountSettings, pacers map[string]*extract.Pacer,
	pools *dialect.Pools, log *slog.Logger, trigger string, opts worker.Options, prog *progressLine, met *metrics.Metrics, cl worker.CommandLine) (worker.Result, error) {
	var onWait func(string, time.Duration)
	if prog != nil {
		onWait = prog.onWait
	}
	client, err := newAccountClient(s, a, pacers, log, onWait, clientObserver(met, a.Name))
	if err != nil {
		return worker.Result{}, err
	}
	st, err := openAccountStore(ctx, s, a.Name, log, true, nil, pools)
	if err != nil {
		return worker.Result{}, err
	}
	defer st.Close()
	jo := worker.JobOptions{Version: thisBuild().Version, AuditRetention: s.PageAuditRetention, FieldRetention: s.FieldRetention, Commands: cl}
	if met != nil {
		if err := met.Refresh(ctx, st.Warehouse); err != nil {
			log.Warn("metrics: cannot seed the gauges from the warehouse", "err", err)
		}
		jo.Observer = runObserver(met, st)
	}
	if prog != nil {
		jo.Progress = prog.update
	}
	job := st.Job(client, log, jo)
	res, err := job.Run(ctx, trigger, opts)
	prog.done()
	return res, err
}

// printSummary prints a run result for people; the commands it names are
// cl's.
func printSummary(w io.Writer, r worker.Result, cl worker.CommandLine) {
	fmt.Fprintf(w, "run %d %s in %s: %s, %s (%d new, %d changed, %d returned, %d unchanged), %d removed\n",
		r.RunID, r.Status, r.Duration.Round(time.Millisecond), english.Count(r.Pages, "page"), english.Count(r.Cards, "card"), r.New, r.Changed, r.Returned, r.Unchanged, r.Removed)
	if r.Resumed {
		fmt.Fprintf(w, "resumed an interrupted walk at page %d\n", r.StartPage)
	}
	fmt.Fprintf(w, "requests %d, retries %d, rate limited %d, token requests %d\n", r.Requests, r.Retries, r.RateLimited, r.AuthRequests)
	if r.Rejected > 0 {
		fmt.Fprintf(w, "%s set aside in rejected_cards (see the warnings above; the rest was stored)\n", english.Count(r.Rejected, "item"))
	}
	if r.AccountError != "" {
		fmt.Fprintf(w, "no account snapshot this run: %s\n", r.AccountError)
	}
	if r.RemovalsHeld > 0 {
		fmt.Fprintf(w, "mass removal held: %s not listed, none marked removed; if %s gone, run: %s\n", english.Count(r.RemovalsHeld, "card"), english.TheyAre(r.RemovalsHeld),
			cl.AccountCommand("backfill", "-confirm-removals"))
	}
	if r.WalkComplete && !r.WalkConsistent {
		fmt.Fprintf(w, "walk inconsistent: %s: %s; no removals marked, the next run re-walks\n",
			worker.ReasonText(r.InconsistentReason, r.InconsistentPages), r.Inconsistency)
	}
	if r.PendingRemovals > 0 && r.RemovalsHeld == 0 {
		fmt.Fprintf(w, "%s not listed; marked removed if the next walk also misses %s\n", english.Count(r.PendingRemovals, "card"), english.Them(r.PendingRemovals))
	}
}

// progressLine draws one self-rewriting status line on a terminal. It is
// also the log's writer: a log line clears the progress line, prints, and
// the progress line is drawn again below it.
type progressLine struct {
	mu      sync.Mutex
	w       io.Writer
	waiting string
	last    worker.Progress
	drawn   bool
}

// Write prints a log line above the progress line.
func (p *progressLine) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
	n, err := p.w.Write(b)
	if p.drawn {
		p.draw()
	}
	return n, err
}

func (p *progressLine) update(pr worker.Progress) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = pr
	p.waiting = ""
	p.draw()
}

func (p *progressLine) onWait(reason string, d time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case strings.HasPrefix(reason, "cannot reach"):
		// Said at once, whatever the wait: the URL or the network is wrong.
		p.waiting = " | " + reason
		p.draw()
	case d >= time.Second:
		p.waiting = fmt.Sprintf(" | waiting %s (%s)", d.Round(time.Second), reason)
		p.draw()
	}
}

func (p *progressLine) draw() {
	pr := p.last
	done := pr.Page - pr.StartPage + 1
	rate := 0.0
	if pr.Elapsed > 0 {
		rate = float64(pr.Cards) / pr.Elapsed.Seconds()
	}
	eta := "?"
	if done > 0 && pr.TotalPages >= pr.Page {
		per := pr.Elapsed / time.Duration(done)
		eta = (per * time.Duration(pr.TotalPages-pr.Page)).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r\033[Kpage %d/%d  %s  %.0f cards/s  ETA %s%s", pr.Page, pr.TotalPages, english.Count(pr.Cards, "card"), rate, eta, p.waiting)
	p.drawn = true
}

// done removes the progress line; the run summary follows on stdout.
func (p *progressLine) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}
