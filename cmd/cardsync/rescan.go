package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/worker"
)

const rescanUsage = `
Usage: cardsync rescan [flags]

Applies this release's data rules (card numbers, card codes, secrets,
[warehouse] redact_fields) to every row the warehouse already stores:
cards and their versions, card_fields names, account snapshots, rejected
items and the runs' error texts, of every account. A rule that improves
protects only what is synced after it; rescan brings what older releases
stored up to the current rules, then records the warehouse's rules version
(status and check warn until then).

It works in batches of -batch rows, each in its own short transaction with
a checkpoint: a rescan killed or interrupted continues where it stopped
the next time. It is safe beside a running serve: each batch holds the
account's run lock (SQLite) or its lease row (PostgreSQL) for the batch
only, so a run and a batch never write the same account at once. A card's
hash changes with its data only, so the next sync finds unchanged cards
unchanged. The password (and [warehouse] password) of the config are
removed wherever they appear; API tokens are not known to rescan (they are
issued to each run) and are found only when they look like a token.

-backups also rewrites the backups in the backup directory that predate
the current rules (SQLite): each is copied, rescanned, written compact and
checked, and replaces the backup under its own name, mode and identity.
A backup it cannot rewrite is named with the reason: delete it, or restore
it and rescan.

Exit codes: 0 done, 1 another failure, 2 a bad flag or config, 6 a
warehouse error, 130 interrupted (the checkpoint is kept; run it again to
continue).

Examples:
  cardsync rescan -config /etc/cardsync/config.toml
  cardsync rescan -config cardsync.toml -db ./warehouse.db -backups
`

func (m *Main) runRescan(ctx context.Context, args []string) error {
	flags := m.newFlagSet("rescan", rescanUsage)
	var cf commonFlags
	cf.register(flags)
	batch := flags.Int("batch", load.DefaultRescanBatch, "rows per transaction")
	backups := flags.Bool("backups", false, "also rewrite the backups in the backup directory that predate the current rules (SQLite)")
	to := flags.String("to", "", "backup directory for -backups (overrides [backup] dir; default: backups/ beside the warehouse)")
	if err := parse(flags, args); err != nil {
		return err
	}
	if *batch < 1 {
		return &usageError{msg: fmt.Sprintf("-batch %d: want 1 or more", *batch)}
	}
	s, err := m.settings(cf, true)
	if err != nil {
		return err
	}
	if *backups && s.WarehouseURL != "" {
		return &usageError{msg: "-backups: a PostgreSQL warehouse has no backup directory (its dumps are pg_dump's)"}
	}
	log := m.logger(s)
	opts := s.LoadOptions()
	opts.Logger = log
	ro := load.RescanOptions{Policy: opts.Settings().Policy, Batch: *batch, Logger: log}
	if s.WarehouseURL == "" {
		if _, err := os.Stat(s.DBPath); errors.Is(err, fs.ErrNotExist) {
			return &noWarehouseError{path: s.DBPath}
		}
	}
	start := time.Now()
	st, err := worker.OpenTarget(ctx, storeTarget(s), opts, false)
	if err != nil {
		return err
	}
	res, err := rescanOpened(ctx, st.Warehouse, ro)
	if err == nil && res.TotalChanged() > 0 {
		// As after a run: a file's WAL emptied into the file, so the texts
		// replaced (overwritten there: secure_delete) leave the -wal too
		// (a server: nothing to do).
		if oerr := st.Warehouse.Optimize(ctx); oerr != nil {
			log.Warn("rescan: WAL checkpoint failed; the next run's does it", "err", oerr)
		}
	}
	st.Close()
	if err != nil {
		return err
	}
	printRescan(m.Stdout, "warehouse", res)
	log.Info("rescan finished", "rules_version", res.Version, "rows_changed", res.TotalChanged(),
		"secrets_redacted", res.Secrets, "batches", res.Batches, "resumed", res.Resumed,
		"duration", time.Since(start).Round(time.Millisecond))
	if !*backups {
		return nil
	}
	return m.rescanBackups(ctx, s, *to, opts, ro)
}

// rescanOpened rescans an opened warehouse (either dialect is a
// load.Rescanner).
func rescanOpened(ctx context.Context, wh load.Rescanner, ro load.RescanOptions) (load.RescanResult, error) {
	res, err := load.Rescan(ctx, wh, ro)
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return res, fmt.Errorf("%w (the checkpoint is kept: run cardsync rescan again to continue): %w", worker.ErrInterrupted, err)
	}
	return res, err
}

// rescanBackups rewrites the backups of dir that predate the current
// rules; one it cannot rewrite is named, with what to do.
func (m *Main) rescanBackups(ctx context.Context, s config.Settings, to string, opts load.Options, ro load.RescanOptions) error {
	dir, _ := backupTarget(s, to, 0)
	if dir == "" {
		dir = dialect.DefaultBackupDir(s.DBPath)
	}
	files, err := dialect.ListBackups(dir, s.DBPath)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(m.Stdout, "no backups in %s\n", dir)
		return nil
	}
	if err != nil {
		return err
	}
	opts.Logger = nil // a backup's copy logs nothing of its own
	var first error
	for _, f := range files {
		res, changed, err := dialect.RescanBackup(ctx, f, opts, ro)
		switch {
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("%w: %w", worker.ErrInterrupted, err)
		case err != nil:
			fmt.Fprintf(m.Stdout, "backup %s not rewritten: %v; delete it (it predates the current rules) or restore it and run cardsync rescan\n", f, err)
			if first == nil {
				first = err
			}
		case changed:
			printRescan(m.Stdout, "backup "+f, res)
		default:
			fmt.Fprintf(m.Stdout, "backup %s already at rules version %d\n", f, redact.RulesVersion)
		}
	}
	return first
}

// printRescan prints what a rescan changed, for people.
func printRescan(w io.Writer, what string, r load.RescanResult) {
	phases := make([]string, 0, len(r.Read))
	for p := range r.Read {
		phases = append(phases, p)
	}
	sort.Strings(phases)
	fmt.Fprintf(w, "%s rescanned: rules version %d, %s changed", what, r.Version, english.Count(r.TotalChanged(), "row"))
	for _, p := range phases {
		fmt.Fprintf(w, ", %s %d/%d", p, r.Changed[p], r.Read[p])
	}
	fmt.Fprintf(w, "; %s held a known secret", english.Count(r.Secrets, "value"))
	if r.IDs > 0 {
		fmt.Fprintf(w, "; card ids moved from a card number to its masked form: %d", r.IDs)
	}
	if r.Resumed {
		fmt.Fprint(w, " (continued an interrupted rescan)")
	}
	fmt.Fprintln(w)
}
