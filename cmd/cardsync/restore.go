package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/cardsync/cardsync/load/dialect"
)

const restoreUsage = `
Usage: cardsync restore [flags] FILE

Replaces the warehouse with the backup FILE (one written by cardsync backup,
or any copy of a cardsync warehouse). It first checks FILE (PRAGMA
integrity_check, application_id, a schema not newer than this binary) and
refuses a sync in progress (exit 4: run it again when the sync is done).

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
the new one's. Run it as the service user, so the file stays writable for
the daemon.

A running cardsync serve switches to the restored file at its next run;
that run (or the next backfill) resumes from the restored checkpoint and
brings the warehouse up to date.

Exit codes: 0 restored, 4 a sync holds the warehouse, 6 FILE failed its
checks, the restore would discard history or replace another warehouse
(without -force), or the warehouse could not be replaced, 2 a bad flag or
config, 130 interrupted (nothing changed), 1 any other failure.

Examples:
  as_cardsync cardsync restore -config /etc/cardsync/config.toml \
    /var/lib/cardsync/backups/warehouse-20250301T120000Z.db
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
	s, err := m.sqliteSettings(cf, "restore", "restore a pg_dump with pg_restore while no replica runs")
	if err != nil {
		return err
	}
	log := m.logger(s)
	res, err := dialect.Restore(ctx, s.DBPath, file, *force)
	var refused *dialect.RestoreRefusedError
	if errors.As(err, &refused) {
		printRefusal(m.Stderr, refused)
		return &silentError{code: exitWarehouse, msg: refused.Error()}
	}
	if err != nil {
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
		fmt.Fprintf(m.Stdout, "-force: the restored warehouse lacks %d runs, %d account snapshots and %d card versions of the replaced one\n",
			c.LostRuns, c.LostAccountSnapshots, c.LostCardVersions)
	}
	fmt.Fprintln(m.Stdout, "the next run resumes from the restored checkpoint")
	return nil
}

// printRefusal says why restore refused and what each side holds.
func printRefusal(w io.Writer, e *dialect.RestoreRefusedError) {
	c := e.Comparison
	fmt.Fprintf(w, "cardsync restore: refused, nothing changed:\n")
	for _, r := range e.Reasons {
		fmt.Fprintf(w, "  - %s\n", r)
	}
	fmt.Fprintf(w, "  the warehouse %s: %s\n", e.Warehouse, c.Current)
	fmt.Fprintf(w, "  the file      %s: %s\n", e.File, c.File)
	if c.Present {
		fmt.Fprintf(w, "  a restore would discard %d runs, %d account snapshots and %d card versions\n",
			c.LostRuns, c.LostAccountSnapshots, c.LostCardVersions)
	}
	fmt.Fprintf(w, "Run it again with -force to restore anyway; the replaced warehouse is then kept as %s%s-<UTC time>.\n",
		e.Warehouse, dialect.BeforeRestoreSuffix)
}
