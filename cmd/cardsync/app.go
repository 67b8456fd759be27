package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/worker"
)

// Exit codes; documented in docs/operating.md ("Exit codes").
const (
	exitOK          = 0
	exitFailure     = 1 // anything not listed below
	exitConfig      = 2 // usage or configuration error
	exitAuth        = 3 // the API refused the credentials
	exitLocked      = 4 // another sync holds the warehouse lock (or another backup its directory)
	exitUnavailable = 5 // the API stayed unreachable, 5xx or rate limited past the wait cap
	exitWarehouse   = 6 // the warehouse could not be opened or written
	exitBadData     = 7 // the API sent data cardsync refuses to store
	exitInterrupted = 130
)

// Main is the program: its I/O and environment are fields so tests can run
// every command in-process.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv and Environ read the environment; tests replace them.
	Getenv  func(string) string
	Environ func() []string
	// Signals, when false, makes commands rely on the ctx passed to Run
	// alone (tests); true installs SIGINT/SIGTERM handling (and SIGHUP:
	// reload for serve, an interruption for the other commands).
	Signals bool
	// Hup, when set, delivers serve's reload requests instead of SIGHUP
	// (tests).
	Hup <-chan struct{}

	// instance is a random id of this process, completing the default
	// [cluster] holder (see instanceID).
	instanceOnce sync.Once
	instance     string
}

// instanceID is a random id of this process (6 hex digits), the same for
// each settings load: the default [cluster] holder is the host name and it.
func (m *Main) instanceID() string {
	m.instanceOnce.Do(func() {
		var b [3]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		m.instance = hex.EncodeToString(b[:])
	})
	return m.instance
}

// NewMain returns a Main wired to the process.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Environ: os.Environ, Signals: true}
}

const usage = `cardsync keeps a local SQLite warehouse in step with a Card Payment Service account.

Usage:
  cardsync <command> [flags]

Commands:
  demo      run the simulator and a backfill into ./cardsync-demo.db (no credentials needed)
  serve     run the daemon: sync on the [schedule] cron until SIGTERM
  backfill  run one sync now, resuming an interrupted walk (-restart starts over)
  status    show recent runs, the checkpoint and freshness (-json for scripts)
  report    write a self-contained HTML report of the warehouse (charts and tables)
  check     validate the config, reach the API, authenticate, prove the warehouse writable; changes nothing
  backup    write a checked copy of the warehouse to backups/ (or -to DIR), keep the newest 7
  rescan    apply this release's data rules to every stored row (and -backups); resumable
  restore   replace the warehouse with a backup FILE (refused if it loses history; the current one kept as .before-restore-<time>)
  datasette-metadata  write Datasette metadata for the warehouse (descriptions, units, card fields) to stdout or -o FILE
  sim       serve the Card Payment Service simulator on loopback
  version   print the version

Run "cardsync <command> -h" for a command's flags and examples.
`

// commands maps each command to the function in its own file.
func (m *Main) commands() map[string]func(context.Context, []string) error {
	return map[string]func(context.Context, []string) error{
		"serve": m.runServe, "backfill": m.runBackfill, "status": m.runStatus, "report": m.runReport,
		"check": m.runCheck, "backup": m.runBackup, "restore": m.runRestore, "demo": m.runDemo, "sim": m.runSim,
		"datasette-metadata": m.runDatasette, "rescan": m.runRescan,
	}
}

// Run runs the command in args and returns the process exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(m.Stderr, usage)
		return exitConfig
	}
	cmd, rest := args[0], args[1:]
	if m.Signals {
		var stop func()
		sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
		if cmd != "serve" {
			// A closed terminal must not leave a run marked running: it
			// interrupts cleanly like Ctrl-C. serve reloads on SIGHUP.
			sigs = append(sigs, syscall.SIGHUP)
		}
		ctx, stop = signalContext(ctx, func(s string) { fmt.Fprintln(m.Stderr, s) }, sigs...)
		defer stop()
	}
	var err error
	switch run := m.commands()[cmd]; {
	case run != nil:
		err = run(ctx, rest)
	case cmd == "version" || cmd == "-version" || cmd == "--version":
		return m.runVersion(rest)
	case cmd == "help" || cmd == "-h" || cmd == "-help" || cmd == "--help":
		fmt.Fprint(m.Stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(m.Stderr, "cardsync: unknown command %q\n\n%s", cmd, usage)
		return exitConfig
	}
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	code := exitCode(err)
	var silent *silentError
	fix := fixOf(cmd, err)
	// A run's failure was logged once, with its cause, by the worker; a
	// fix still follows the error it fixes, on the line above it.
	say := (!worker.Logged(err) || fix != "") && !errors.As(err, &silent)
	if say && underJournal(m.Stderr, m.Getenv) {
		// Under journald every line is a log record with its priority
		// (journalctl -p err finds it): the error and its fix as one.
		// The level is a constant: newLogger cannot fail here.
		lg, _ := newLogger(m.Stderr, "info", "json", m.Getenv)
		attrs := []any{"command", cmd, "err", err.Error()}
		if fix != "" {
			attrs = append(attrs, "fix", fix)
		}
		lg.Error("cardsync "+cmd+" failed", attrs...)
		return code
	}
	if say {
		fmt.Fprintf(m.Stderr, "cardsync %s: %v\n", cmd, err)
	}
	if fix != "" {
		fmt.Fprintf(m.Stderr, "cardsync %s: fix: %s\n", cmd, fix)
	}
	return code
}

// usageError marks a command-line mistake.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// exitCode maps an error to the documented exit codes.
func exitCode(err error) int {
	var ce *config.Error
	var ue *usageError
	var pe *extract.ProtocolError
	var se *silentError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &se):
		return se.code
	case errors.As(err, &ce), errors.As(err, &ue):
		return exitConfig
	case errors.Is(err, load.ErrLocked), errors.Is(err, dialect.ErrBackupBusy):
		return exitLocked
	case errors.Is(err, worker.ErrInterrupted), errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, extract.ErrUnauthenticated):
		return exitAuth
	case errors.Is(err, load.ErrBadData):
		return exitBadData
	case errors.Is(err, worker.ErrWarehouse):
		return exitWarehouse
	case gaveUpOnBadAnswer(err):
		// Retries that ended on a truncated or malformed 2xx body: the
		// API answered, but not with usable JSON.
		return exitBadData
	case errors.Is(err, extract.ErrUnavailable):
		return exitUnavailable
	case errors.As(err, &pe), errors.Is(err, extract.ErrForeignOrigin), errors.Is(err, extract.ErrRedirect),
		errors.Is(err, extract.ErrPaginationLoop), errors.Is(err, extract.ErrTooManyPages):
		// A redirect (to any origin), a 204, or a pagination that does not
		// advance is an answer of the API that cardsync refuses, like
		// malformed JSON.
		return exitBadData
	}
	return exitFailure
}

// gaveUpOnBadAnswer reports whether err is the end of retries
// (*extract.WaitError) whose last attempt got a 2xx answer with a body that
// breaks the protocol (truncated or malformed JSON). A protocol error of a
// 5xx, 408 or 429 (an HTML error page) is unavailability and is not one.
func gaveUpOnBadAnswer(err error) bool {
	var we *extract.WaitError
	var pe *extract.ProtocolError
	return errors.As(err, &we) && errors.As(we.Last, &pe) && pe.StatusCode >= 200 && pe.StatusCode < 300
}

// commonFlags are the flags every command that reads the config takes.
type commonFlags struct {
	config    string
	db        string
	logLevel  string
	logFormat string
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "path of the TOML config file (default: none; CARDSYNC_CONFIG)")
	fs.StringVar(&c.db, "db", "", "warehouse path (overrides [warehouse] path)")
	fs.StringVar(&c.logLevel, "log-level", "", "debug, info, warn or error (overrides [log] level)")
	fs.StringVar(&c.logFormat, "log-format", "", logFormatUsage+" (overrides [log] format)")
}

// newFlagSet builds a FlagSet whose usage prints text (with examples) then
// the flags.
func (m *Main) newFlagSet(name, text string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprint(m.Stderr, strings.TrimLeft(text, "\n"))
		fmt.Fprintln(m.Stderr, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags, turning a bad flag into a usage error.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return &usageError{msg: fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// commandLine is how this command was invoked, as the command lines that
// hints print repeat it (worker.CommandLine): its config file (-config,
// else $CARDSYNC_CONFIG) and -db, as given.
func (m *Main) commandLine(cf commonFlags) worker.CommandLine {
	path := cf.config
	if path == "" {
		path = m.Getenv(config.ConfigEnv)
	}
	return worker.CommandLine{Config: path, DB: cf.db}
}

// accountCommandLine is cl about account name: with -account when the
// settings name their accounts, without for the [api] table's one.
func accountCommandLine(s config.Settings, cl worker.CommandLine, name string) worker.CommandLine {
	if s.NamedAccounts() {
		return cl.ForAccount(name)
	}
	return cl.ForAccount("")
}

// settings loads and validates the configuration for a command: defaults,
// the file (-config, else $CARDSYNC_CONFIG), CARDSYNC_* variables, then the
// flags, each error naming the source of the bad value.
func (m *Main) settings(cf commonFlags, needAPI bool) (config.Settings, error) {
	path := cf.config
	if path == "" {
		path = m.Getenv(config.ConfigEnv)
	}
	var flags []config.Override
	if cf.db != "" {
		flags = append(flags, config.Override{Key: "warehouse.path", Flag: "db", Value: cf.db})
	}
	if cf.logLevel != "" {
		flags = append(flags, config.Override{Key: "log.level", Flag: "log-level", Value: cf.logLevel})
	}
	if cf.logFormat != "" {
		flags = append(flags, config.Override{Key: "log.format", Flag: "log-format", Value: cf.logFormat})
	}
	cfg, err := config.Load(path, m.Environ(), flags...)
	if err != nil {
		return config.Settings{}, err
	}
	if err := cfg.Configured(); err != nil {
		return config.Settings{}, err
	}
	s, err := cfg.Settings(needAPI, m.Getenv)
	s.Holder = s.ReplicaHolder(m.instanceID())
	return s, err
}

// logger builds the logger the settings ask for.
func (m *Main) logger(s config.Settings) *slog.Logger {
	return m.loggerTo(m.Stderr, s)
}

// loggerTo is logger writing through out (which wraps m.Stderr).
func (m *Main) loggerTo(out io.Writer, s config.Settings) *slog.Logger {
	l, err := newLoggerTo(out, m.Stderr, s.LogLevel, s.LogFormat, m.Getenv)
	if err != nil {
		// Settings validated both; should they not have, the format is
		// still chosen by the terminal, never JSON on one.
		l, _ = newLoggerTo(out, m.Stderr, "info", "auto", m.Getenv)
	}
	return slog.New(newScrubHandler(l.Handler(), s.Secrets))
}

// newClient builds the API client of the [api] account; obs may be nil.
func newClient(s config.Settings, log *slog.Logger, onWait func(string, time.Duration), obs extract.Observer) (*extract.Client, error) {
	return newAccountClient(s, s.AccountSettings, nil, log, onWait, obs)
}

// openForReading opens account of the settings' warehouse read-only
// (dialect.OpenReadOnly) for a command that only reads (status, report,
// check of a PostgreSQL warehouse): no DDL, no write (a PostgreSQL role
// with SELECT alone may use it), an older schema refused with a
// *load.SchemaVersionError. A missing file says no sync has run yet.
func openForReading(ctx context.Context, s config.Settings, account string) (load.Reader, error) {
	if s.WarehouseURL != "" {
		return dialect.OpenReadOnly(ctx, readTarget(s), load.Options{Account: account, Secrets: s.Secrets})
	}
	if _, err := os.Stat(s.DBPath); errors.Is(err, fs.ErrNotExist) {
		return nil, &noWarehouseError{path: s.DBPath}
	}
	wh, err := dialect.OpenReadOnly(ctx, readTarget(s), load.Options{Account: account, Secrets: s.Secrets})
	if err != nil {
		return nil, fmt.Errorf("open %s read-only: %w", s.DBPath, err)
	}
	return wh, nil
}

const versionUsage = `
Usage: cardsync version

Prints the version of this build, then its commit, build date (the
commit's time) and Go release, one per line, and exits:

  cardsync v1.2.0
  commit: 3f5c0e9a1b7d4c2e8f6a0b1c2d3e4f5a6b7c8d9e
  built: 2026-11-20T09:14:03Z
  go: go1.26.8

A release build carries its tag (or, between tags, the commit as git
describe names it). A build from a git checkout without the release's
stamps shows the first 12 digits of the commit (with -dirty if the tree
had uncommitted changes); a build without either says dev and unknown.
`

// runVersion prints the version; -h prints its usage, any other argument
// is a usage error.
func (m *Main) runVersion(args []string) int {
	switch {
	case len(args) == 0:
		thisBuild().print(m.Stdout)
		return exitOK
	case len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		fmt.Fprint(m.Stdout, strings.TrimPrefix(versionUsage, "\n"))
		return exitOK
	default:
		fmt.Fprintf(m.Stderr, "cardsync version: unexpected argument %q%s", args[0], versionUsage)
		return exitConfig
	}
}
