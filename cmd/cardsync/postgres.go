package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/worker"
)

// storeTarget is where the settings say the warehouse is: the SQLite file,
// or the PostgreSQL database of [warehouse] url with this replica's
// [cluster] holder and lease_ttl.
func storeTarget(s config.Settings) worker.Target {
	return worker.Target{Path: s.DBPath, URL: s.WarehouseURL, Password: s.WarehousePassword.Reveal(), Schema: s.WarehouseSchema,
		Holder: s.Holder, LeaseTTL: s.LeaseTTL}
}

// warehouseName names the warehouse in messages: the file, or the URL
// without a password.
func warehouseName(s config.Settings) string {
	if s.WarehouseURL != "" {
		return load.RedactURL(s.WarehouseURL)
	}
	if abs, err := filepath.Abs(s.DBPath); err == nil {
		return abs
	}
	return s.DBPath
}

// readTarget is where the settings say the warehouse is, for a command
// that reads it (dialect.OpenReadOnly): the SQLite file, or the PostgreSQL
// database of [warehouse] url.
func readTarget(s config.Settings) dialect.Target {
	return dialect.Target{Path: s.DBPath, URL: s.WarehouseURL, Password: s.WarehousePassword.Reveal(), Schema: s.WarehouseSchema}
}

// notWithPostgres is the error of a command that only knows SQLite files,
// run with [warehouse] url; instead says what to use.
func notWithPostgres(s config.Settings, command, instead string) error {
	if s.WarehouseURL == "" {
		return nil
	}
	return &config.Error{Key: "warehouse.url", Source: config.Source{Kind: config.FromDefault},
		Msg: fmt.Sprintf("cardsync %s works on a SQLite warehouse; with a PostgreSQL warehouse (%s), %s", command, warehouseName(s), instead)}
}

// sqliteSettings loads the settings of a command that only knows SQLite
// files, refusing a PostgreSQL warehouse (see notWithPostgres).
func (m *Main) sqliteSettings(cf commonFlags, command, instead string) (config.Settings, error) {
	s, err := m.settings(cf, false)
	if err != nil {
		return s, err
	}
	return s, notWithPostgres(s, command, instead)
}

// checkPostgres is check's warehouse part with [warehouse] url: it signs
// in and, in a schema that holds no warehouse yet, proves the role may
// create one there (dialect.CheckCreatable: like a missing SQLite file, the
// first run creates it); else it reads the schema version without
// migrating (an older schema is reported, not an error: the next sync
// upgrades it), checks that the server accepts writes (not a standby) and
// that the role may write every table a sync writes (Writable: a read-only
// role fails, exit 6, naming the privilege it lacks) and reads each
// account. exists reports whether the schema holds a warehouse.
func checkPostgres(ctx context.Context, s config.Settings, ok func(format string, a ...any)) (exists bool, err error) {
	exists, err = dialect.CheckCreatable(ctx, readTarget(s))
	if err != nil {
		return false, err
	}
	if !exists {
		ok("warehouse %s: signed in; schema %s holds no warehouse yet, and the role may create one there: the first run creates it",
			load.RedactURL(s.WarehouseURL), cmp.Or(s.WarehouseSchema, "public"))
		return false, nil
	}
	for i, a := range s.Accounts {
		wh, err := openForReading(ctx, s, a.Name)
		var old *load.SchemaVersionError
		if errors.As(err, &old) && errors.Is(err, load.ErrSchemaTooOld) {
			ok("warehouse %s: signed in, at schema version %d; the next sync upgrades it to %d", load.RedactURL(s.WarehouseURL), old.Database, old.Binary)
			return true, nil
		}
		if err != nil {
			return true, err
		}
		defer wh.Close()
		if err := checkPostgresAccount(ctx, s, wh, i == 0, a.Name, ok); err != nil {
			return true, err
		}
	}
	return true, nil
}

// checkPostgresAccount checks one account of the opened warehouse (first:
// the warehouse itself too).
func checkPostgresAccount(ctx context.Context, s config.Settings, wh load.Reader, first bool, account string, ok func(format string, a ...any)) error {
	if first {
		if err := wh.Writable(ctx); err != nil {
			return err
		}
		ok("warehouse %s: signed in, schema version %d, accepts writes", wh.Path(), dialect.SchemaVersion(readTarget(s)))
	}
	sum, err := wh.Summary(ctx)
	if err != nil {
		return fmt.Errorf("read status: %w", err)
	}
	facts, err := wh.WriterFacts(ctx, false)
	if err != nil {
		return err
	}
	lease := worker.AccountLease(facts.Leases, account)
	held := "no live lease"
	if lease.Live() {
		held = fmt.Sprintf("lease held by %s until %s", lease.Holder, lease.ExpiresAt)
	}
	ok("account %s: %s; %s", account, statusOneLine(sum), held)
	if first && sum.CardsFlatStale {
		ok("warning: cards_flat lags behind card_fields and could not be re-created (a view built on it blocks the DROP?); cards and checkpoints sync as usual")
	}
	return nil
}
