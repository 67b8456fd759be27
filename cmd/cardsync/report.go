package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/report"
)

const reportUsage = `
Usage: cardsync report -o FILE [flags]

Writes one self-contained HTML file about the warehouse: account balances
over time (per day), cards by status, cards new/changed/removed per day, run
outcomes, durations, 429s, rejections and held removals, the latest balances
as exact decimals, the last 20 runs, the cards that changed with their
fields before and after, and rejected items. The file has no script and
loads nothing from anywhere: open it in any browser, mail it, print it.

With [[accounts]] in the config it reports on one account: -account NAME,
or the first account of the config.

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
	wh, err := openForReading(ctx, s, accounts[0].Name)
	if err != nil {
		return err
	}
	defer wh.Close()
	if err := writeReport(ctx, wh, *out, report.Options{Since: since, Mode: reportMode(s.WarehouseURL, s.DBPath)}); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "report: %s\n", *out)
	return nil
}

// writeReport writes the report of wh, a warehouse whose dialect reads
// the report's data (load.Reporter), to out.
func writeReport(ctx context.Context, wh load.Destination, out string, opts report.Options) error {
	r, ok := wh.(load.Reporter)
	if !ok {
		return fmt.Errorf("warehouse %s reads no report", wh.Path())
	}
	return report.Write(ctx, r, out, opts)
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
