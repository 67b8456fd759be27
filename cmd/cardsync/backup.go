package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
)

const backupUsage = `
Usage: cardsync backup [flags]

Writes a consistent copy of the warehouse and prints its path:
DIR/<stem>-YYYYMMDDTHHMMSSZ.db, named by the warehouse file's name without
.db (warehouse-… for warehouse.db) and the UTC time of the backup. The
copy is written with VACUUM INTO a temporary file in DIR, read in one
transaction through a read-only connection (a running sync and analysts'
queries go on), then checked (PRAGMA integrity_check, application_id,
user_version), given the warehouse's permissions (0640), fsynced and renamed
into place; a failed or killed backup leaves no file under that name. The
newest -keep backups of this warehouse in DIR are kept and older ones
removed: only files named <stem>-… that carry this warehouse's identity (a
random id every warehouse gets once, copied into its backups). A file of
another warehouse, or whose identity cannot be read, is never removed (it
says so), so several warehouses may share DIR. DIR defaults to backups/
beside the warehouse. It needs no password and makes no API request.

Exit codes: 0 written, 4 another backup is writing to DIR, 6 the warehouse
could not be read or the copy failed its checks, 2 a bad flag or config,
130 interrupted (nothing is left behind), 1 any other failure.

Examples:
  cardsync backup -config /etc/cardsync/config.toml
  cardsync backup -db ./warehouse.db -to /srv/backups/cardsync -keep 30
`

func (m *Main) runBackup(ctx context.Context, args []string) error {
	fs := m.newFlagSet("backup", backupUsage)
	var cf commonFlags
	cf.register(fs)
	to := fs.String("to", "", "backup directory (overrides [backup] dir; default: backups/ beside the warehouse)")
	keep := fs.Int("keep", 0, fmt.Sprintf("how many backups to keep in the directory (overrides [backup] keep; default %d)", load.DefaultBackupKeep))
	if err := parse(fs, args); err != nil {
		return err
	}
	if *keep < 0 {
		return &usageError{msg: fmt.Sprintf("-keep %d: want 1 or more", *keep)}
	}
	s, err := m.sqliteSettings(cf, "backup", "back it up with pg_dump or your database's own backups")
	if err != nil {
		return err
	}
	log := m.logger(s)
	dir, n := backupTarget(s, *to, *keep)
	if dir == "" {
		dir = dialect.DefaultBackupDir(s.DBPath)
	}
	start := time.Now()
	res, err := dialect.Backup(ctx, s.DBPath, dir, n, start)
	path := res.Path
	for _, sk := range res.Skipped {
		log.Info("backup left alone by pruning", "path", sk.Path, "reason", sk.Reason)
	}
	if err != nil && (path == "" || !errors.Is(err, load.ErrBackupPrune)) {
		return fixer{command: "backup", s: s, cl: m.commandLine(cf), output: "-to (or [backup] dir)"}.withFix(err)
	}
	if err != nil {
		log.Warn("backup written, but older backups could not all be pruned", "path", path, "err", err)
	}
	var size int64
	if fi, serr := os.Stat(path); serr == nil {
		size = fi.Size()
	}
	log.Info("backup written", "path", path, "bytes", size, "duration", time.Since(start).Round(time.Millisecond))
	fmt.Fprintln(m.Stdout, path)
	return nil
}

// backupTarget returns the directory ("" for the default beside the
// warehouse) and the number of backups to keep: the flags, else [backup]
// dir and keep.
func backupTarget(s config.Settings, to string, keep int) (string, int) {
	return cmp.Or(to, s.BackupDir), cmp.Or(keep, s.BackupKeep)
}
