package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"github.com/cardsync/cardsync/config"
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
password and makes no API request. The file is written to a temporary file
beside FILE and renamed over it.

Examples:
  cardsync report -config /etc/cardsync/config.toml -o /srv/www/cardsync.html
  cardsync report -db ./cardsync-demo.db -o report.html -since 30d && xdg-open report.html
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
	if err := notWithPostgres(s, "report", "query the database with SQL (see the README's \"Shared PostgreSQL warehouse\")"); err != nil {
		return err
	}
	since, err := config.ParseSince(*sinceText)
	if err != nil {
		return &usageError{msg: fmt.Sprintf("-since %q: %v", *sinceText, err)}
	}
	if *out == "" {
		return &usageError{msg: "-o: want a file name"}
	}
	wh, err := openForReading(ctx, s.DBPath, accounts[0].Name)
	if err != nil {
		return err
	}
	defer wh.Close()
	if err := report.Write(ctx, wh, *out, report.Options{Since: since, Mode: fileMode(s.DBPath)}); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "report: %s\n", *out)
	return nil
}

// fileMode is the permission of the file at path, for files made from it
// (a report of the warehouse); 0 when it cannot be read.
func fileMode(path string) fs.FileMode {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Mode().Perm()
}
