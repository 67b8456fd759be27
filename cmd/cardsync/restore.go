package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
)

const restoreUsage = `
Usage: cardsync restore [flags] FILE

Replaces the warehouse with the backup FILE (one written by cardsync backup,
or any copy of a cardsync warehouse). It first checks FILE (PRAGMA
integrity_check, application_id, a schema not newer than this binary), then
takes the warehouse's writer lock. A sync in progress holds it (a run of
serve or backfill, of any account of the file): restore then changes nothing
and exits 4 at once, or, with -wait, waits for the run to end (at most
-wait-timeout, default 1h; it logs that it waits, then once a minute) and
goes on as soon as no run holds the lock. serve's runs due meanwhile are
skipped until the restore is done. Ctrl-C ends the wait (exit 130, nothing
changed).

It never discards history by surprise: it compares FILE with the warehouse
and refuses (exit 6, nothing changed), saying what each holds (runs,
account snapshots, card versions, the newest run) and what would be lost,
when the warehouse holds runs, account snapshots or card versions FILE
lacks, when FILE is a backup of another warehouse (every warehouse has a
random identity, copied into its backups; the refusal names both), when
either has no identity (written by a cardsync before identities), or when
the warehouse's history cannot be read. -force restores it all the same. A
missing or empty warehouse is simply restored.

It then keeps the current warehouse as
<warehouse>.before-restore-YYYYMMDDTHHMMSSZ (the UTC time of the restore;
an earlier one is never replaced; status lists them), and swaps the backup
in atomically, holding the writer lock: the current -wal goes aside with the
old file and -shm is removed, so nothing of the old file is ever read as
the new one's. The restored file is in WAL mode with an empty -wal and a
-shm of its own, as a live warehouse is, so analysts can read it at once.
Run it as the service user, so the file stays writable for the daemon.

A running cardsync serve switches to the restored file at its next run;
that run (or the next backfill) resumes from the restored checkpoint and
brings the warehouse up to date.

Exit codes: 0 restored, 4 a sync holds the warehouse (without -wait, or
still after -wait-timeout; nothing changed), 6 FILE failed its checks, the
restore would discard history or replace another warehouse (without
-force), or the warehouse could not be replaced, 2 a bad flag or config,
130 interrupted (nothing changed), 1 any other failure.

Examples:
  as_cardsync cardsync restore -config /etc/cardsync/config.toml \
    /var/lib/cardsync/backups/warehouse-20250301T120000Z.db
  as_cardsync cardsync restore -config /etc/cardsync/config.toml -wait \
    /var/lib/cardsync/backups/warehouse-20250301T120000Z.db   # serve is up
  cardsync restore -db ./warehouse.db -force ./backups/warehouse-20250301T120000Z.db
  cardsync restore -db ./warehouse.db ./warehouse.db.before-restore-20250302T090000Z   # undo

Under systemd run it as the service user: as_cardsync is the one-off command
wrapper of systemd/README.md ("One-off commands as the service user").
`

func (m *Main) runRestore(ctx context.Context, args []string) error {
	fs := m.newFlagSet("restore", restoreUsage)
	var cf commonFlags
	cf.register(fs)
	force := fs.Bool("force", false, "restore even if it discards history the warehouse holds, or FILE is another warehouse's")
	wait := fs.Bool("wait", false, "when a sync holds the warehouse (a run in progress), wait for it to end instead of exiting 4")
	waitTimeout := fs.Duration("wait-timeout", defaultRestoreWait, "with -wait: how long to wait at most before exiting 4")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{msg: err.Error()}
	}
	if fs.NArg() == 0 {
		return &usageError{msg: "name the backup FILE to restore"}
	}
	file := fs.Arg(0)
	// Flags may follow FILE.
	if err := parse(fs, fs.Args()[1:]); err != nil {
		return err
	}
	timeoutSet := false
	fs.Visit(func(f *flag.Flag) { timeoutSet = timeoutSet || f.Name == "wait-timeout" })
	switch {
	case timeoutSet && !*wait:
		return &usageError{msg: "-wait-timeout needs -wait"}
	case *waitTimeout <= 0:
		return &usageError{msg: fmt.Sprintf("-wait-timeout %s: want a positive duration", *waitTimeout)}
	}
	s, err := m.sqliteSettings(cf, "restore", "restore a pg_dump with pg_restore while no replica runs")
	if err != nil {
		return err
	}
	log := m.logger(s)
	opts := dialect.RestoreOptions{Force: *force}
	if *wait {
		opts.Wait = *waitTimeout
		opts.Waiting = func(held *load.LockedError, waited time.Duration) {
			log.Info("waiting for the sync in progress to end before restoring", "pid", held.PID,
				"waited", waited.Round(time.Second).String(), "gives_up_after", waitTimeout.String())
		}
	}
	res, err := dialect.Restore(ctx, s.DBPath, file, opts)
	cl := m.commandLine(cf)
	var refused *dialect.RestoreRefusedError
	var gaveUp *dialect.LockWaitError
	switch {
	case errors.As(err, &refused):
		printRefusal(m.Stderr, refused, cl.Command("restore", "-force", file))
		return &silentError{code: exitWarehouse, msg: refused.Error()}
	case errors.As(err, &gaveUp):
		fmt.Fprintf(m.Stderr, "cardsync restore: refused, nothing changed: after waiting %s, still %v on the warehouse %s.\n"+
			"Run it again with a longer -wait-timeout (%s), or stop serve first (systemctl stop cardsync) and restore, then start it.\n",
			gaveUp.Waited.Round(time.Second), gaveUp.Held, s.DBPath, cl.Command("restore", "-wait", "-wait-timeout", (2*(*waitTimeout)).String(), file))
		return &silentError{code: exitLocked, msg: gaveUp.Error()}
	case errors.Is(err, load.ErrLocked):
		held := err
		var le *load.LockedError
		if errors.As(err, &le) {
			held = le
		}
		fmt.Fprintf(m.Stderr, "cardsync restore: refused, nothing changed: %v on the warehouse %s (a run in progress).\n"+
			"Run it again with -wait to restore as soon as the run ends (at most -wait-timeout, default %s: %s), "+
			"or stop serve first (systemctl stop cardsync) and restore, then start it.\n",
			held, s.DBPath, defaultRestoreWait, cl.Command("restore", "-wait", file))
		return &silentError{code: exitLocked, msg: err.Error()}
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(m.Stderr, "cardsync restore: interrupted, nothing changed")
		return &silentError{code: exitInterrupted, msg: err.Error()}
	case err != nil:
		return err
	}
	c := res.Comparison
	log.Info("warehouse restored", "from", file, "warehouse", s.DBPath, "before_restore", res.BeforeRestore, "forced", *force,
		"discarded_runs", c.LostRuns, "discarded_account_snapshots", c.LostAccountSnapshots, "discarded_card_versions", c.LostCardVersions)
	fmt.Fprintf(m.Stdout, "restored %s to %s\n", file, s.DBPath)
	if res.BeforeRestore != "" {
		fmt.Fprintf(m.Stdout, "the replaced warehouse is kept as %s\n", res.BeforeRestore)
	} else {
		fmt.Fprintln(m.Stdout, "there was no warehouse to keep")
	}
	if c.Discards() {
		fmt.Fprintf(m.Stdout, "-force: the restored warehouse lacks %s of the replaced one\n", c.LostText())
	}
	fmt.Fprintln(m.Stdout, "the next run resumes from the restored checkpoint")
	return nil
}

// defaultRestoreWait is -wait-timeout's default.
const defaultRestoreWait = time.Hour

// printRefusal says why restore refused and what each side holds, and
// the command that restores anyway (force).
func printRefusal(w io.Writer, e *dialect.RestoreRefusedError, force string) {
	c := e.Comparison
	fmt.Fprintf(w, "cardsync restore: refused, nothing changed:\n")
	for _, r := range e.Reasons {
		fmt.Fprintf(w, "  - %s\n", r)
	}
	fmt.Fprintf(w, "  the warehouse %s: %s\n", e.Warehouse, c.Current)
	fmt.Fprintf(w, "  the file      %s: %s\n", e.File, c.File)
	if c.Present {
		fmt.Fprintf(w, "  a restore would discard %s\n", c.LostText())
	}
	fmt.Fprintf(w, "Run it again with -force to restore anyway (%s); the replaced warehouse is then kept as %s%s-<UTC time>.\n",
		force, e.Warehouse, dialect.BeforeRestoreSuffix)
}
