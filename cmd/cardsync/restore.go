package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/cardsync/cardsync/load"
)

const restoreUsage = `
Usage: cardsync restore [flags] FILE

Replaces the warehouse with the backup FILE (one written by cardsync backup,
or any copy of a cardsync warehouse). It first checks FILE (PRAGMA
integrity_check, application_id, a schema not newer than this binary) and
refuses a sync in progress (exit 4: run it again when the sync is done).
It then keeps the current warehouse as <warehouse>.before-restore
(replacing an older one), and swaps the backup in atomically, holding the
writer lock: the current -wal goes aside with the old file and -shm is
removed, so nothing of the old file is ever read as the new one's. Run it
as the service user, so the file stays writable for the daemon.

A running cardsync serve switches to the restored file at its next run;
that run (or the next backfill) resumes from the restored checkpoint and
brings the warehouse up to date.

Exit codes: 0 restored, 4 a sync holds the warehouse, 6 FILE failed its
checks or the warehouse could not be replaced, 2 a bad flag or config.

Examples:
  sudo -u cardsync cardsync restore -config /etc/cardsync/config.toml \
    /var/lib/cardsync/backups/warehouse-20250301T120000Z.db
  cardsync restore -db ./warehouse.db ./warehouse.db.before-restore   # undo
`

func (m *Main) runRestore(ctx context.Context, args []string) error {
	fs := m.newFlagSet("restore", restoreUsage)
	var cf commonFlags
	cf.register(fs)
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
	if err := load.Restore(ctx, s.DBPath, file); err != nil {
		return err
	}
	log.Info("warehouse restored", "from", file, "warehouse", s.DBPath, "before_restore", s.DBPath+load.BeforeRestoreSuffix)
	fmt.Fprintf(m.Stdout, "restored %s to %s\nthe replaced warehouse is kept as %s%s\nthe next run resumes from the restored checkpoint\n",
		file, s.DBPath, s.DBPath, load.BeforeRestoreSuffix)
	return nil
}
