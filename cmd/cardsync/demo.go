package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/report"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

const demoUsage = `
Usage: cardsync demo [flags]

Runs cardsync end to end with no credentials: starts the Card Payment Service
simulator in-process on loopback (with a scaled rate-limit window so it takes
seconds) and syncs four times, so that every query of docs/analysts.md and
every chart of the report shows something:

  1) the backfill;
  2) after one card changed, two removed and one added upstream (the
     removed ones are pending: one walk missing a card is not proof);
  3) again, the removals confirmed (one page is answered 429 Too Many
     Requests on the way: the client waits and retries);
  4) after a removed card came back, one more changed and one more
     removed (pending).

The account's balance and cards_balance move between syncs. The syncs are
stamped 12 hours apart on the demo's clock, the last one now, so the
history spans more than one UTC day and day-by-day queries show a move.
It prints the run summaries and queries to try, and writes report.html
next to the warehouse (what cardsync report writes) and prints its path.
The demo warehouse is replaced on each run.

Examples:
  go run ./cmd/cardsync demo
  cardsync demo -db /tmp/demo.db -cards 1000
`

// demoSpacing is how far apart the demo's syncs are stamped: its clock
// starts one spacing behind the real one per later sync and moves on by a
// spacing before each, so the last sync is stamped now and the history
// spans more than one UTC day. The demo's three spacings stay within the
// report's per-run axis (load.ReportFineSpan).
const demoSpacing = 12 * time.Hour

// demoClock is the demo's clock: the real one, lag behind. Durations
// within a sync are real; the simulator, the worker and the warehouse all
// read it, so card stamps and run stamps agree.
type demoClock struct{ lag atomic.Int64 }

// Now returns the real time less the lag.
func (c *demoClock) Now() time.Time { return time.Now().Add(-time.Duration(c.lag.Load())) }

// behind sets the lag to n spacings.
func (c *demoClock) behind(n int) { c.lag.Store(int64(time.Duration(n) * demoSpacing)) }

func (m *Main) runDemo(ctx context.Context, args []string) error {
	flags := m.newFlagSet("demo", demoUsage)
	db := flags.String("db", "cardsync-demo.db", "warehouse file to (re)create")
	cards := flags.Int("cards", 300, "number of simulated cards")
	seed := flags.Int64("seed", 1, "seed of the simulated data")
	rate := flags.Int("rate", 60, "requests per second the simulator allows (the real API: 180 a minute)")
	logLevel := flags.String("log-level", "warn", "debug, info, warn or error")
	logFormat := flags.String("log-format", "auto", logFormatUsage)
	if err := parse(flags, args); err != nil {
		return err
	}
	if *cards < demoMinCards || *rate < 1 {
		// The demo changes, removes and returns cards among the first
		// five: with fewer, its story (and analysts.md's queries) would
		// show nothing.
		return &usageError{msg: fmt.Sprintf("-cards must be >= %d (the demo changes, removes and returns five of them) and -rate >= 1", demoMinCards)}
	}
	if err := removeDemoWarehouse(ctx, *db); err != nil {
		return err
	}
	// A password of this run's own: the log scrubs the password wherever
	// it appears, and sim's default ("demo") would blank every "demo" in
	// the demo's lines (trigger=demo, cardsync-demo.db).
	password := rand.Text()
	clock := &demoClock{}
	// The token outlives the demo's clock (36 hours): a re-login at the
	// last sync would only add noise to its summary.
	srv := sim.New(sim.Options{Seed: *seed, Cards: *cards, Window: time.Second, Limit: *rate, AuthLimit: 10, Password: password,
		AccountDrift: true, TokenTTL: 7 * 24 * time.Hour, Now: clock.Now})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen on loopback: %w", err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(m.Stdout, "simulator: %s (%s, %d requests/s)\n", base, english.Count(*cards, "card"), *rate)

	s, err := demoSettings(base, password, *rate, *db, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	log := m.logger(s)
	client, err := newClient(s, log, nil, nil)
	if err != nil {
		return err
	}
	// openAccountStore's, with the demo's clock stamping the warehouse.
	opts := s.LoadOptions()
	opts.Logger, opts.Account, opts.Now = log, load.DefaultAccount, clock.Now
	st, err := worker.OpenTarget(ctx, storeTarget(s), opts, true)
	if err != nil {
		return err
	}
	defer st.Close()
	job := st.Job(client, log, worker.JobOptions{Version: thisBuild().Version, Commands: worker.CommandLine{DB: *db}})
	job.Now = clock.Now
	if err := m.demoSyncs(ctx, job, srv, clock); err != nil {
		return err
	}
	ss := srv.Stats()
	fmt.Fprintf(m.Stdout, "\nsimulator saw %s and %s\n", english.Count(ss.TokenRequests, "token request"), english.Count(ss.RateLimited, "rate-limited reply"))
	fmt.Fprintf(m.Stdout, "\nwarehouse: %s — try (read-only: a read-write open's close removes -wal and -shm):\n\n", *db)
	for _, q := range demoQueries {
		fmt.Fprintf(m.Stdout, "  %s\n", demoQueryCommand(*db, q))
	}
	return m.demoReport(ctx, st, *db)
}

// demoSettings are the demo's settings, through the same layers as any
// command's: the defaults, then its flags (an error names the flag).
func demoSettings(base, password string, rate int, db, logLevel, logFormat string) (config.Settings, error) {
	cfg, err := config.Load("", []string{config.PasswordEnv + "=" + password},
		config.Override{Key: "api.base_url", Flag: "(simulator)", Value: base},
		config.Override{Key: "api.email", Flag: "(simulator)", Value: sim.DefaultEmail},
		config.Override{Key: "api.rate_limit", Flag: "rate", Value: fmt.Sprintf("%d/1s", rate)},
		config.Override{Key: "api.auth_rate_limit", Flag: "(simulator)", Value: "10/1s"},
		config.Override{Key: "api.timeout", Flag: "(simulator)", Value: "10s"},
		config.Override{Key: "api.max_wait", Flag: "(simulator)", Value: "30s"},
		config.Override{Key: "warehouse.path", Flag: "db", Value: db},
		config.Override{Key: "log.level", Flag: "log-level", Value: logLevel},
		config.Override{Key: "log.format", Flag: "log-format", Value: logFormat},
	)
	if err != nil {
		return config.Settings{}, err
	}
	return cfg.Settings(true, func(string) string { return "" })
}

// demoMinCards is the least -cards the demo's syncs have a story with.
const demoMinCards = 5

// demoSyncs runs the demo's syncs (demoUsage lists them), each at its
// time on clock, with the upstream changes before each, and prints their
// summaries.
func (m *Main) demoSyncs(ctx context.Context, job *worker.Job, srv *sim.Server, clock *demoClock) error {
	cards := srv.Cards()
	steps := []struct {
		say      string
		upstream func()
	}{
		{"backfill", nil},
		{"upstream: one card changed, two removed, one added; the account's balances moved; sync again (one walk missing a card is not proof, so they are pending)", func() {
			if len(cards) >= demoMinCards {
				srv.UpdateCard(cards[0].ID)
				srv.RemoveCard(cards[1].ID)
				srv.RemoveCard(cards[2].ID)
			}
			srv.AddCard()
		}},
		{"sync again, one page answered 429 Too Many Requests (the client waits and retries): cards missed by two consecutive complete walks are marked removed", func() {
			srv.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultRateLimit, Pages: []int{1}, Times: 1})
		}},
		{"upstream: a removed card came back, one more changed, one more removed; sync again (the card that came back is returned, the one missing is pending)", func() {
			srv.ClearFaults()
			if len(cards) >= demoMinCards {
				srv.RestoreCard(cards[1])
				srv.UpdateCard(cards[3].ID)
				srv.RemoveCard(cards[4].ID)
			}
		}},
	}
	h := int(demoSpacing / time.Hour)
	fmt.Fprintf(m.Stdout, "\nthe demo's clock starts %d hours behind and moves %d hours on before each later sync: its runs are stamped %d hours apart, the last one now\n",
		(len(steps)-1)*h, h, h)
	for i, step := range steps {
		clock.behind(len(steps) - 1 - i)
		if step.upstream != nil {
			step.upstream()
		}
		fmt.Fprintf(m.Stdout, "\n%d) %s:\n", i+1, step.say)
		res, err := job.Run(ctx, worker.TriggerDemo, worker.Options{})
		if err != nil {
			return err
		}
		printSummary(m.Stdout, res, job.Commands)
	}
	return nil
}

// demoReport writes report.html next to the demo warehouse at db and
// prints its path.
func (m *Main) demoReport(ctx context.Context, st *worker.Store, db string) error {
	page := filepath.Join(filepath.Dir(db), "report.html")
	if err := report.Write(ctx, st.Warehouse, page, report.Options{}); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "\nreport: %s (open it in any browser: xdg-open %s)\n\n", page, page)
	return nil
}

// demoQueries are printed by demo; a test runs each against the demo file.
var demoQueries = []string{
	"SELECT * FROM account_balances ORDER BY taken_at DESC LIMIT 1;",
	"SELECT taken_at, amount, old_value, new_value FROM account_balance_changes WHERE previous_snapshot_id IS NOT NULL ORDER BY taken_at, amount;",
	"SELECT card_id, status, balance, currency FROM cards_flat ORDER BY CAST(card_id AS INTEGER) LIMIT 5;",
	"SELECT card_id, version, valid_from, valid_to, run_id FROM card_versions WHERE card_id IN (SELECT card_id FROM card_versions WHERE version > 1) ORDER BY card_id, version;",
	"SELECT run_id, trigger, status, pages, cards_seen, cards_new, cards_changed, cards_returned, cards_removed, walk_consistent FROM sync_runs ORDER BY run_id;",
}

// demoQueryCommand is the shell command demo prints to run q on the
// warehouse at db: the sqlite3 CLI with -readonly, because a read-write
// connection that closes last checkpoints the WAL and removes -wal and
// -shm, which read-only users need (see docs/analysts.md).
func demoQueryCommand(db, q string) string {
	return "sqlite3 -readonly -header -column " + shellWord(db) + ` "` + q + `"`
}

// shellWord returns s as one word of a POSIX shell command: as it is when
// it holds no character the shell treats specially, else single-quoted.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+:@%,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// removeDemoWarehouse deletes an earlier demo warehouse at path, and refuses
// to touch anything else: a file that is not a cardsync warehouse, one with
// runs other than demo runs (a real warehouse given by mistake), or one
// another process is syncing.
func removeDemoWarehouse(ctx context.Context, path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	lock, err := dialect.AcquireLock(path)
	if err != nil {
		return fmt.Errorf("refusing to replace %s: %w", path, err)
	}
	defer lock.Close()
	others, err := dialect.ForeignRuns(ctx, path, worker.TriggerDemo)
	if err != nil {
		return &usageError{msg: fmt.Sprintf("refusing to replace %s: not a demo warehouse (%v); choose another -db", path, err)}
	}
	if others > 0 {
		return &usageError{msg: fmt.Sprintf("refusing to replace %s: it holds %s; choose another -db", path, english.Count(others, "non-demo run"))}
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove old demo warehouse: %w", err)
		}
	}
	return nil
}
