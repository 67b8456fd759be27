package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/worker"
)

const checkUsage = `
Usage: cardsync check [flags]

Checks a deployment without writing anything: validates the configuration,
reaches the API, authenticates (one token request), reads /account, and
opens the warehouse read-only. It prints what it found and exits non-zero
on the first problem (exit codes as for backfill).

Examples:
  cardsync check -config /etc/cardsync/config.toml
  CARDSYNC_API_PASSWORD=... cardsync check -config cardsync.toml
`

func (m *Main) runCheck(ctx context.Context, args []string) error {
	flags := m.newFlagSet("check", checkUsage)
	var cf commonFlags
	cf.register(flags)
	if err := parse(flags, args); err != nil {
		return err
	}
	s, err := m.settings(cf, true)
	if err != nil {
		return err
	}
	ok := func(format string, a ...any) { fmt.Fprintf(m.Stdout, "ok    "+format+"\n", a...) }
	ok("config valid (api %s, schedule %q %s)", s.BaseURL, s.CronSpec, s.Location)
	log := m.logger(s)
	client, err := newClient(s, log, nil)
	if err != nil {
		return err
	}
	if err := client.Authenticate(ctx); err != nil {
		return fmt.Errorf("authenticate at %s: %w", s.BaseURL, err)
	}
	ok("authenticated as %s", s.Email)
	acct, err := client.Account(ctx)
	if err != nil {
		return fmt.Errorf("read account: %w", err)
	}
	name := "(null)"
	if acct.Name != nil {
		name = *acct.Name
	}
	bal := "(null)"
	if acct.Balance != nil {
		bal = acct.Balance.String()
	}
	ok("account %q read: balance %s", name, bal)

	if _, err := os.Stat(s.DBPath); errors.Is(err, fs.ErrNotExist) {
		dir := filepath.Dir(s.DBPath)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("%w: warehouse directory %s does not exist", worker.ErrWarehouse, dir)
		}
		ok("warehouse %s does not exist yet; the first run creates it", s.DBPath)
		return nil
	}
	wh, err := load.OpenReadOnly(ctx, s.DBPath)
	if err != nil {
		return fmt.Errorf("%w: open %s read-only: %w", worker.ErrWarehouse, s.DBPath, err)
	}
	defer wh.Close()
	st, err := wh.Summary(ctx)
	if err != nil {
		return fmt.Errorf("%w: read status: %w", worker.ErrWarehouse, err)
	}
	ok("warehouse %s readable: %s", s.DBPath, statusOneLine(st))
	return nil
}
