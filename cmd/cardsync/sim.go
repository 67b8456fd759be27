package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/cardsync/cardsync/sim"
)

const simUsage = `
Usage: cardsync sim [flags]

Serves the Card Payment Service simulator (spec-faithful: tokens, rate
limits, pagination, error bodies, fault injection) until SIGINT/SIGTERM, and
prints the base URL and credentials to use. Port 0 picks a free port.

Examples:
  cardsync sim
  cardsync sim -listen 127.0.0.1:0 -cards 2000 -seed 7 -window 1s
  cardsync sim -token-shape data.token -token-status 201 -string-ids
  cardsync sim -fault cards:status=503,retry_after=2s,times=3 -fault cards:links-array
`

func (m *Main) runSim(ctx context.Context, args []string) error {
	fs := m.newFlagSet("sim", simUsage)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on (loopback by default)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	var opts sim.Options
	opts.RegisterFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	log, err := newLogger(m.Stderr, *logLevel, "auto", m.Getenv)
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
	fmt.Fprintf(m.Stdout, "Card Payment Service simulator: %d cards, seed %d, %d requests per %s (token endpoint %d)\n",
		opts.Cards, opts.Seed, opts.Limit, opts.Window, opts.AuthLimit)
	fmt.Fprintf(m.Stdout, "base URL: %s\nemail:    %s\npassword: %s\n", base, opts.Email, opts.Password)
	fmt.Fprintf(m.Stdout, "try:      curl -s -X POST %s/auth/access-token -H 'Content-Type: application/json' -d '{\"email\":\"%s\",\"password\":\"%s\"}'\n",
		base, opts.Email, opts.Password)
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

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
