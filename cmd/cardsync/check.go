package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/worker"
)

const checkUsage = `
Usage: cardsync check [flags]

Checks a deployment without storing anything: validates the configuration,
reaches the API, authenticates (one token request), reads /account, opens
the warehouse read-only and proves it could write it (takes the writer lock
and rolls back a write transaction; this also recreates the -wal and -shm
files that analysts need if a manual read-write open removed them). A
warehouse not created yet (no file; a PostgreSQL schema without one) is
fine once check has proved the first run can create it (the directory
takes a file; the role may create tables in the schema). It checks every
account, then the warehouse, prints what it found (each failed step as a
"FAIL" line: what failed, why, and "fix:" the one thing to change) and
exits with the code of the first problem in config order (exit codes as
for backfill, except that a sync holding the warehouse is reported, never
exit 4), within -timeout: no retry waits past it.

Examples:
  cardsync check -config /etc/cardsync/config.toml
  CARDSYNC_API_PASSWORD=... cardsync check -config cardsync.toml -timeout 10s
`

func (m *Main) runCheck(ctx context.Context, args []string) error {
	flags := m.newFlagSet("check", checkUsage)
	var cf commonFlags
	cf.register(flags)
	timeout := flags.Duration("timeout", 30*time.Second, "give up after this long (a dead API is reported within it)")
	if err := parse(flags, args); err != nil {
		return err
	}
	if *timeout <= 0 {
		return &usageError{msg: "-timeout must be positive"}
	}
	fx := fixer{command: "check", cl: m.commandLine(cf), deadline: fmt.Sprintf("check's -timeout %s", *timeout)}
	s, err := m.settings(cf, true)
	if err != nil {
		return m.checkFailed(fx, err)
	}
	fx.s = s
	limit := fmt.Errorf("check gave up after -timeout %s", *timeout)
	ctx, cancel := context.WithTimeoutCause(ctx, *timeout, limit)
	defer cancel()
	ok := func(format string, a ...any) { fmt.Fprintf(m.Stdout, "ok    "+format+"\n", a...) }
	ok("config valid (api %s, schedule %q %s)", apiURLs(s), s.CronSpec, s.Location)
	first := m.checkAccounts(ctx, fx, limit, ok)
	var exists bool
	if s.WarehouseURL != "" {
		exists, err = checkPostgres(ctx, s, ok)
	} else {
		exists, err = checkSQLite(ctx, s, ok)
	}
	if err != nil {
		err = m.checkFailed(fx, err)
	} else if exists {
		m.checkRules(ctx, s, fx.cl)
	}
	if first != nil {
		return first
	}
	return err
}

// checkRules warns while the warehouse or a backup predates the current
// data rules (worker.RulesWarnings names the fix, a command line of cl); a
// warning is not a failure. What cannot be read here was reported above.
func (m *Main) checkRules(ctx context.Context, s config.Settings, cl worker.CommandLine) {
	wh, err := dialect.OpenReadOnly(ctx, readTarget(s), load.Options{})
	if err != nil {
		return
	}
	defer wh.Close()
	version := 0
	if st, err := wh.RulesState(ctx); err == nil {
		version = st.Version
	}
	warnings := worker.RulesWarnings(version, outdatedBackups(ctx, s), cl)
	if len(warnings) == 0 && version > 0 {
		fmt.Fprintf(m.Stdout, "ok    warehouse at data rules version %d, as this cardsync\n", version)
	}
	for _, w := range warnings {
		fmt.Fprintf(m.Stdout, "WARN  %s\n", w)
	}
}

// checkFailed prints a failed step as a FAIL line: what failed and why
// (the error), then the one thing to change (fx's fix). It returns the
// error with its fix, which Run prints on stderr if it is the first.
func (m *Main) checkFailed(fx fixer, err error) error {
	err = fx.withFix(err)
	if fix := fixOf("check", err); fix != "" {
		fmt.Fprintf(m.Stdout, "FAIL  %s; fix: %s\n", oneLine(err.Error()), fix)
	} else {
		fmt.Fprintf(m.Stdout, "FAIL  %s\n", oneLine(err.Error()))
	}
	return err
}

// oneLine is s on one line (a driver's error may span several): each line
// break, with the indentation around it, becomes one space.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " ")
}

// checkAccounts authenticates as each account and reads its /account. It
// goes on past a failing account (printed as a FAIL line) and returns the
// first failure. limit is the cause of ctx's deadline (check's -timeout).
func (m *Main) checkAccounts(ctx context.Context, fx fixer, limit error, ok func(format string, a ...any)) error {
	s := fx.s
	// check prints its own findings; the client's routine lines (a token
	// obtained) would interleave with them, so it logs warnings and errors
	// only, unless debug logging was asked for.
	quiet := s
	if quiet.LogLevel != "debug" && quiet.LogLevel != "error" {
		quiet.LogLevel = "warn"
	}
	log := m.logger(quiet)
	pacers := groupPacers(s.Accounts)
	var first error
	for _, a := range s.Accounts {
		who := accountPrefix(s, a.Name)
		client, err := newAccountClient(s, a, pacers, accountLogger(s, log, a.Name), nil, nil)
		if err != nil {
			err = fmt.Errorf("%s%w", who, err)
		} else {
			err = checkAccount(ctx, client, who, a.Email, limit, ok)
		}
		if err != nil {
			fa := fx
			fa.account = a
			err = m.checkFailed(fa, err)
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// checkAccount authenticates the client (who names its account when there
// are several) and reads the account.
func checkAccount(ctx context.Context, client *extract.Client, who, email string, limit error, ok func(format string, a ...any)) error {
	if err := client.Authenticate(ctx); err != nil {
		return fmt.Errorf("%s%w", who, checkCause(ctx, limit, err))
	}
	ok("%sauthenticated as %s", who, email)
	acct, err := client.Account(ctx)
	if err != nil {
		return fmt.Errorf("%s%w", who, checkCause(ctx, limit, err))
	}
	name := "(null)"
	if acct.Name != nil {
		name = *acct.Name
	}
	bal := "(null)"
	if acct.Balance != nil {
		bal = acct.Balance.String()
	}
	// The account's text is upstream data: it may carry the password or
	// the token, which never reach the terminal.
	ok("%saccount %q read: balance %s", who, client.Scrub(name), client.Scrub(bal))
	return nil
}

// checkCause puts limit, the cause of ctx's deadline (check's -timeout),
// in front of an error that the deadline ended, or that ended its retries
// because the next would have passed it.
// An API that did not answer within -timeout is unavailable (exit code 5).
func checkCause(ctx context.Context, limit, err error) error {
	var we *extract.WaitError
	switch {
	case context.Cause(ctx) != nil && errors.Is(err, context.DeadlineExceeded):
		return &checkTimeoutError{cause: context.Cause(ctx), err: err}
	case errors.As(err, &we) && we.Deadline:
		return fmt.Errorf("%w: %w", limit, err)
	}
	return err
}

// checkTimeoutError is a request to the API that check's -timeout ended:
// it reads as the cause then the error, and is extract.ErrUnavailable.
type checkTimeoutError struct{ cause, err error }

func (e *checkTimeoutError) Error() string { return e.cause.Error() + ": " + e.err.Error() }

// Unwrap returns the cause and the error.
func (e *checkTimeoutError) Unwrap() []error { return []error{e.cause, e.err} }

// Is reports extract.ErrUnavailable.
func (e *checkTimeoutError) Is(target error) bool { return target == extract.ErrUnavailable }

// checkSQLite checks the SQLite warehouse: that it can be created, or else
// read, and written; exists reports whether the file is there.
func checkSQLite(ctx context.Context, s config.Settings, ok func(format string, a ...any)) (exists bool, err error) {
	exists, err = dialect.CheckCreatable(ctx, readTarget(s))
	if err != nil {
		return false, err
	}
	if !exists {
		ok("warehouse %s does not exist yet; its directory is writable and the first run creates it", s.DBPath)
		return false, nil
	}
	wh, err := dialect.OpenReadOnly(ctx, dialect.Target{Path: s.DBPath}, load.Options{})
	var old *load.SchemaVersionError
	switch {
	case errors.As(err, &old) && errors.Is(err, load.ErrSchemaTooOld):
		ok("warehouse %s is at schema version %d; the next sync upgrades it to %d", s.DBPath, old.Database, old.Binary)
	case err != nil:
		return true, fmt.Errorf("open %s read-only: %w", s.DBPath, err)
	default:
		sum, err := wh.Summary(ctx)
		wh.Close()
		if err != nil {
			return true, fmt.Errorf("read status: %w", err)
		}
		ok("warehouse %s readable: %s", s.DBPath, statusOneLine(sum))
	}
	switch err := dialect.CheckWritable(ctx, s.DBPath); {
	case err == nil:
		ok("warehouse writable: took the writer lock and rolled back a write transaction")
	case errors.Is(err, load.ErrLocked):
		ok("warehouse held by a running sync (%v): not probed for writing", err)
	default:
		return true, err
	}
	return true, nil
}
