package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/metrics"
	"github.com/cardsync/cardsync/worker"
)

// accountsBusyTimeout is how long a write of one account waits for
// another account's commit on the same file (load.Options.BusyTimeout).
// It stays within the time the watchdog allows a commit (30 s), so a wait
// never looks like a stuck run.
const accountsBusyTimeout = 30 * time.Second

// accountText is named when the settings name their accounts
// (config.Settings.NamedAccounts), plain for the [api] table's one account, whose output
// reads as it always did: the one place output wording depends on it.
func accountText(s config.Settings, named, plain string) string {
	if s.NamedAccounts() {
		return named
	}
	return plain
}

// accountPrefix starts a line (or an error) about account name: "account
// NAME: " for named accounts, "" for the [api] table's one account.
func accountPrefix(s config.Settings, name string) string {
	return accountText(s, "account "+name+": ", "")
}

// parseAccounts parses the command line, then loads the settings (needAPI
// as for m.settings) and the accounts -account selects (every account when
// it is empty).
func (m *Main) parseAccounts(fs *flag.FlagSet, args []string, cf *commonFlags, account *string, needAPI bool) (config.Settings, []config.AccountSettings, error) {
	if err := parse(fs, args); err != nil {
		return config.Settings{}, nil, err
	}
	s, err := m.settings(*cf, needAPI)
	if err != nil {
		return s, nil, err
	}
	accounts, err := selectAccounts(s, *account)
	return s, accounts, err
}

// selectAccounts returns the accounts a command syncs: every configured
// one, or the one -account names (a usage error listing the names when it
// names none of them).
func selectAccounts(s config.Settings, name string) ([]config.AccountSettings, error) {
	if name == "" {
		return s.Accounts, nil
	}
	var names []string
	for _, a := range s.Accounts {
		if a.Name == name {
			return []config.AccountSettings{a}, nil
		}
		names = append(names, a.Name)
	}
	return nil, &usageError{msg: fmt.Sprintf("-account %q: no such account; the configured accounts are: %s", name, strings.Join(names, ", "))}
}

// groupPacers returns the one pacer of each rate_group among accounts.
func groupPacers(accounts []config.AccountSettings) map[string]*extract.Pacer {
	p := map[string]*extract.Pacer{}
	for _, a := range accounts {
		if a.RateGroup != "" && p[a.RateGroup] == nil {
			p[a.RateGroup] = extract.NewPacer(a.RateLimit, a.AuthRateLimit, nil)
		}
	}
	return p
}

// newAccountClient builds the API client of account a: its own token, and
// its rate_group's pacer (pacers, from groupPacers) or one of its own.
func newAccountClient(s config.Settings, a config.AccountSettings, pacers map[string]*extract.Pacer, log *slog.Logger,
	onWait func(string, time.Duration), obs extract.Observer) (*extract.Client, error) {
	cfg := s.ExtractConfigFor(a)
	cfg.UserAgent = "cardsync/" + thisBuild().Version
	cfg.Logger = log
	cfg.OnWait = onWait
	cfg.Observer = obs
	cfg.Pacer = pacers[a.RateGroup]
	c, err := extract.New(cfg)
	if err != nil {
		return nil, &config.Error{Key: accountText(s, "account "+a.Name, "api"), Msg: err.Error()}
	}
	return c, nil
}

// openAccountStore takes account's run lock (when hold) and opens its
// handle on the warehouse; turns, shared by the accounts a process opens
// on one file, gives their commits turns (nil: SQLite's busy handler);
// pools, shared by the accounts a process opens on one PostgreSQL
// database, bounds their connections together (nil: a pool each).
func openAccountStore(ctx context.Context, s config.Settings, account string, log *slog.Logger, hold bool, turns *load.WriteTurns, pools *dialect.Pools) (*worker.Store, error) {
	opts := s.LoadOptions()
	opts.Logger = log
	opts.Account = account
	opts.WriteTurns = turns
	if len(s.Accounts) > 1 {
		opts.BusyTimeout = accountsBusyTimeout
	}
	t := storeTarget(s)
	t.Pools = pools
	return worker.OpenTarget(ctx, t, opts, hold)
}

// accountLogger scopes log to account when several are configured (one
// account's lines stay as they always were).
func accountLogger(s config.Settings, log *slog.Logger, account string) *slog.Logger {
	if !s.NamedAccounts() {
		return log
	}
	return log.With("account", account)
}

// accountNameList lists the names of accounts, in order.
func accountNameList(accounts []config.AccountSettings) []string {
	names := make([]string, len(accounts))
	for i, a := range accounts {
		names[i] = a.Name
	}
	return names
}

// clientObserver is met's observer of account's API client; nil without
// metrics.
func clientObserver(met *metrics.Metrics, account string) extract.Observer {
	if met == nil {
		return nil
	}
	return met.ClientObserver(account)
}

// runObserver is met's observer of the runs of st's account, which also
// refreshes the account's gauges from st after each run; nil without
// metrics.
func runObserver(met *metrics.Metrics, st *worker.Store) worker.Observer {
	if met == nil {
		return nil
	}
	return met.RunObserver(st.Warehouse.Account(), st.Warehouse)
}
