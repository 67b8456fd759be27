package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

const simUsage = `
Usage: cardsync sim [flags]

Serves the Card Payment Service simulator (spec-faithful: tokens, rate
limits, pagination, error bodies, fault injection, odd data) until
SIGINT/SIGTERM. It prints the base URL, the credentials and a ready
configuration for the other commands; -write-config FILE also writes that
configuration to FILE (and the password to FILE.password, mode 0600), so
that "cardsync backfill -config FILE" syncs from the simulator at once.
Port 0 picks a free port.

Examples:
  cardsync sim
  cardsync sim -listen 127.0.0.1:0 -cards 2000 -seed 7 -window 1s
  cardsync sim -token-shape data.token -token-status 201 -string-ids
  cardsync sim -fault cards:status=503,retry_after=2s,times=3 -fault cards:links-array
  cardsync sim -odd-data -float-noise -account-drift -write-config sim.toml
`

func (m *Main) runSim(ctx context.Context, args []string) error {
	fs := m.newFlagSet("sim", simUsage)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on (loopback by default)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logFormat := fs.String("log-format", "auto", logFormatUsage)
	writeConfig := fs.String("write-config", "", "write a configuration for this simulator to FILE (and the password to FILE.password)")
	var opts sim.Options
	opts.RegisterFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	log, err := newLogger(m.Stderr, *logLevel, *logFormat, m.Getenv)
	if err != nil {
		return &usageError{msg: err.Error()}
	}
	opts.Logger = log
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", *listen, err)
	}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !isLoopbackHost(host) {
		log.Warn("the simulator listens beyond loopback", "addr", ln.Addr().String())
	}
	srv := sim.New(opts)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(m.Stdout, "Card Payment Service simulator: %s, seed %d, %s per %s (token endpoint %d)\n",
		english.Count(opts.Cards, "card"), opts.Seed, english.Count(opts.Limit, "request"), opts.Window, opts.AuthLimit)
	fmt.Fprintf(m.Stdout, "base URL: %s\nemail:    %s\npassword: %s\n", base, opts.Email, opts.Password)
	fmt.Fprintf(m.Stdout, "try:      curl -s -X POST %s/auth/access-token -H 'Content-Type: application/json' -d '{\"email\":\"%s\",\"password\":\"%s\"}'\n",
		base, opts.Email, opts.Password)
	cfgText := simConfig(base, opts, *writeConfig)
	if *writeConfig != "" {
		if err := writeSimConfig(*writeConfig, cfgText, opts.Password); err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "config:   %s (password in %s.password)\nthen:     %s\n", *writeConfig, *writeConfig,
			worker.CommandLine{Config: *writeConfig}.Command("backfill"))
	} else {
		fmt.Fprintf(m.Stdout, "\n# A configuration for the other commands (password: CARDSYNC_API_PASSWORD=%s):\n%s\n", opts.Password, cfgText)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// simConfig is a configuration that syncs from this simulator: its base
// URL, credentials and rate limits (so pacing matches), a warehouse in the
// current directory (or beside the config file) and a one-minute schedule.
// A file's relative paths resolve against its own directory, so those of a
// written file name the files beside it.
func simConfig(base string, o sim.Options, path string) string {
	db := "cardsync-sim.db"
	pw := ""
	if path != "" {
		pw = fmt.Sprintf("password_file = %q\n", filepath.Base(path)+".password")
	}
	window := o.Window.String()
	return fmt.Sprintf(`[api]
base_url = %q
email = %q
%srate_limit = "%d/%s"
auth_rate_limit = "%d/%s"

[warehouse]
path = %q

[schedule]
cron = "@every 1m"
`, base, o.Email, pw, o.Limit, window, o.AuthLimit, window, db)
}

// writeSimConfig writes the configuration and its password file, both 0600.
func writeSimConfig(path, text, password string) error {
	if err := os.WriteFile(path+".password", []byte(password+"\n"), 0o600); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if err := os.Chmod(path+".password", 0o600); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if err := os.WriteFile(path, []byte("# Written by `cardsync sim`: syncs from the simulator it describes.\n"+text), 0o600); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
