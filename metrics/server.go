package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server serves a Handler on one listening address until Shutdown.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
	// once reads done for the first Shutdown; a second one returns at once.
	once     sync.Once
	serveErr error
}

// Listen binds addr (host:port; port 0 picks a free one) and serves h on it
// in the background. A bind error (a port in use, an address not on this
// host) is returned at once, so `serve` fails at start-up, not later.
func Listen(addr string, h http.Handler, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listen %s: %w", addr, err)
	}
	s := &Server{
		ln: ln,
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    16 << 10,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		},
		done: make(chan error, 1),
	}
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		if err != nil {
			log.Error("metrics server stopped", "err", err)
		}
		s.done <- err
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops accepting connections and waits for the requests in
// progress until ctx ends, then closes the rest.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
		err = fmt.Errorf("metrics server shutdown: %w", err)
	}
	s.once.Do(func() { s.serveErr = <-s.done })
	if s.serveErr != nil && err == nil {
		err = fmt.Errorf("metrics server: %w", s.serveErr)
	}
	return err
}
