package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/report"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

const demoUsage = `
Usage: cardsync demo [flags]

Runs cardsync end to end with no credentials: starts the Card Payment Service
simulator in-process on loopback (with a scaled rate-limit window so it takes
seconds), backfills the warehouse, then changes a few cards upstream (one
changed, one removed, one added) and syncs again (the removed card is now
pending: one walk missing a card is not proof it is gone), syncs once more
(the removal is confirmed), and prints the run summaries and queries to try.
It also writes report.html next to the warehouse (what cardsync report
writes) and prints its path. The demo warehouse is replaced on each run.

Examples:
  go run ./cmd/cardsync demo
  cardsync demo -db /tmp/demo.db -cards 1000
`

func (m *Main) runDemo(ctx context.Context, args []string) error {
	flags := m.newFlagSet("demo", demoUsage)
	db := flags.String("db", "cardsync-demo.db", "warehouse file to (re)create")
	cards := flags.Int("cards", 300, "number of simulated cards")
	seed := flags.Int64("seed", 1, "seed of the simulated data")
	rate := flags.Int("rate", 60, "requests per second the simulator allows (the real API: 180 a minute)")
	logLevel := flags.String("log-level", "warn", "debug, info, warn or error")
	if err := parse(flags, args); err != nil {
		return err
	}
	if *cards < 0 || *rate < 1 {
		return &usageError{msg: "-cards must be >= 0 and -rate >= 1"}
	}
	if err := removeDemoWarehouse(ctx, *db); err != nil {
		return err
	}
	srv := sim.New(sim.Options{Seed: *seed, Cards: *cards, Window: time.Second, Limit: *rate, AuthLimit: 10})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen on loopback: %w", err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(m.Stdout, "simulator: %s (%d cards, %d requests/s)\n", base, *cards, *rate)

	s := Settings{
		BaseURL:       base,
		Email:         sim.DefaultEmail,
		Password:      extract.Secret(sim.DefaultPassword),
		RateLimit:     extract.Rate{N: *rate, Per: time.Second},
		AuthRateLimit: extract.Rate{N: 10, Per: time.Second},
		Timeout:       10 * time.Second,
		MaxWait:       30 * time.Second,
		MaxBodyBytes:  4 << 20,
		AmountScale:   2,
		MaxPages:      100_000,
		DBPath:        *db,
		FileMode:      0o640,
		Synchronous:   "FULL",
		LogLevel:      *logLevel,
		LogFormat:     "auto",
		Secrets:       &redact.Secrets{},
	}
	log := m.logger(s)
	client, err := newClient(s, log, nil)
	if err != nil {
		return err
	}
	lock, err := load.AcquireLock(s.DBPath)
	if err != nil {
		return fmt.Errorf("%w: %w", worker.ErrWarehouse, err)
	}
	defer lock.Close()
	wh, err := openWarehouse(ctx, s, log)
	if err != nil {
		return err
	}
	defer wh.Close()
	job := &worker.Job{Client: client, Warehouse: wh, Lock: lock, Logger: log, Version: version()}

	fmt.Fprintln(m.Stdout, "\n1) backfill:")
	res, err := job.Run(ctx, worker.TriggerDemo, worker.Options{})
	if err != nil {
		return err
	}
	printSummary(m.Stdout, res)

	all := srv.Cards()
	if len(all) >= 2 {
		srv.UpdateCard(all[0].ID)
		srv.RemoveCard(all[1].ID)
	}
	srv.AddCard()
	fmt.Fprintln(m.Stdout, "\n2) upstream: one card changed, one removed, one added; sync again (one walk missing a card is not proof, so it is pending):")
	res, err = job.Run(ctx, worker.TriggerDemo, worker.Options{})
	if err != nil {
		return err
	}
	printSummary(m.Stdout, res)

	fmt.Fprintln(m.Stdout, "\n3) sync again: a card missed by two consecutive complete walks is marked removed:")
	res, err = job.Run(ctx, worker.TriggerDemo, worker.Options{})
	if err != nil {
		return err
	}
	printSummary(m.Stdout, res)

	st := srv.Stats()
	fmt.Fprintf(m.Stdout, "\nsimulator saw %d token requests and %d rate-limited replies\n", st.TokenRequests, st.RateLimited)
	fmt.Fprintf(m.Stdout, "\nwarehouse: %s — try:\n\n", *db)
	for _, q := range demoQueries {
		fmt.Fprintf(m.Stdout, "  sqlite3 -header -column %s \"%s\"\n", *db, q)
	}
	page := filepath.Join(filepath.Dir(*db), "report.html")
	if err := report.Write(ctx, wh, page, report.Options{}); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "\nreport: %s (open it in any browser: xdg-open %s)\n\n", page, page)
	return nil
}

// demoQueries are printed by demo; a test runs each against the demo file.
var demoQueries = []string{
	"SELECT * FROM account_balances ORDER BY taken_at DESC LIMIT 1;",
	"SELECT card_id, status, balance, currency FROM cards_flat ORDER BY CAST(card_id AS INTEGER) LIMIT 5;",
	"SELECT card_id, version, valid_from, valid_to, run_id FROM card_versions WHERE card_id IN (SELECT card_id FROM card_versions WHERE version > 1) ORDER BY card_id, version;",
	"SELECT run_id, trigger, status, pages, cards_seen, cards_new, cards_changed, cards_removed, walk_consistent FROM sync_runs ORDER BY run_id;",
}

// removeDemoWarehouse deletes an earlier demo warehouse at path, and refuses
// to touch anything else: a file that is not a cardsync warehouse, one with
// runs other than demo runs (a real warehouse given by mistake), or one
// another process is syncing.
func removeDemoWarehouse(ctx context.Context, path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	lock, err := load.AcquireLock(path)
	if err != nil {
		return fmt.Errorf("refusing to replace %s: %w", path, err)
	}
	defer lock.Close()
	wh, err := load.OpenReadOnly(ctx, path)
	if err != nil {
		return &usageError{msg: fmt.Sprintf("refusing to replace %s: not a demo warehouse (%v); choose another -db", path, err)}
	}
	var others int
	err = wh.DB().QueryRowContext(ctx, `SELECT count(*) FROM sync_runs WHERE trigger != 'demo'`).Scan(&others)
	wh.Close()
	if err != nil {
		return fmt.Errorf("%w: inspect %s: %w", worker.ErrWarehouse, path, err)
	}
	if others > 0 {
		return &usageError{msg: fmt.Sprintf("refusing to replace %s: it holds %d non-demo runs; choose another -db", path, others)}
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove old demo warehouse: %w", err)
		}
	}
	return nil
}
