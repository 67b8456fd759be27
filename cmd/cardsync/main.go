// Command cardsync keeps a local SQLite warehouse (or a shared PostgreSQL
// one) in step with Card Payment Service accounts. Run "cardsync help" for
// its commands.
//
// The command owns flags, logging, exit codes and sd_notify, one file per
// command; it loads configuration through package config and composes
// worker, extract and load. It must not hold sync logic, SQL or validation
// rules of its own.
//
// The commands, one file each: serve, backfill, status, report, check,
// backup, restore, rescan, demo, sim, datasette-metadata and version.
// Logging is tint on a terminal, JSON elsewhere, with journald's priorities
// under systemd. fix.go holds the one fixer: by the errors' types, it
// writes check's FAIL lines and every command's "fix:" line. Every
// warehouse is opened through package load/dialect: the writing store
// through worker (worker.OpenStore), read-only opens (status, check, report
// and serve's report refresh) and a file's backups, restore, checks and
// locks directly.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// The IANA time zone database, built in (about 400 KB): [schedule]
	// timezone must load where the system has none, as in the OCI image
	// (only the binary and a few files) or a minimal host. Go still reads
	// the system's zoneinfo first when there is one.
	_ "time/tzdata"
)

func main() {
	// A closed pipe on stdout or stderr (`cardsync backfill 2>&1 | head`,
	// a pager quit, a journal restarted under serve) must not kill a run
	// mid-walk: with SIGPIPE notified, a write to it fails with EPIPE
	// instead (the logger drops the line) and the run goes on. Notify, not
	// Ignore: an ignored signal would stay ignored in the programs
	// cardsync starts.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	m := NewMain()
	os.Exit(m.Run(context.Background(), os.Args[1:]))
}

// signalContext returns a context cancelled by the first of sigs; a second
// signal exits at once, as litestream does.
func signalContext(ctx context.Context, stderr func(string), sigs ...os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			cancel(&signalError{sig})
		case <-done:
			return
		}
		select {
		case <-ch:
			stderr("second signal: exiting now")
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

type signalError struct{ sig os.Signal }

func (e *signalError) Error() string { return "received " + e.sig.String() }
