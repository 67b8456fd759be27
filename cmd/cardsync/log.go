package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"
)

// logFormatUsage is the -log-format flag's usage, on every command.
const logFormatUsage = "auto (tint on a terminal; JSON when stderr is not a terminal, or is the journal), json, text or tint"

// newLogger picks the handler: tint on a terminal, JSON under journald or
// when the output is not a terminal. getenv reads JOURNAL_STREAM.
func newLogger(w io.Writer, level, format string, getenv func(string) string) (*slog.Logger, error) {
	return newLoggerTo(w, w, level, format, getenv)
}

// newLoggerTo is newLogger writing to out while deciding the format from
// the terminal behind term (out may wrap it, as the progress line does).
//
// Under journald (stderr is the journal stream systemd opened) every line
// starts with its syslog priority ("<3>" error, "<4>" warn, "<6>" info, "<7>"
// debug), so `journalctl -p err` finds failed runs; elsewhere lines are
// unchanged.
func newLoggerTo(out, term io.Writer, level, format string, getenv func(string) string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	journal := underJournal(term, getenv)
	var pw *priorityWriter
	w := out
	if journal {
		pw = &priorityWriter{w: out}
		w = pw
	}
	opts := &slog.HandlerOptions{Level: lvl, ReplaceAttr: replaceAttr}
	tintOpts := &tint.Options{Level: lvl, TimeFormat: time.DateTime, ReplaceAttr: replaceAttr, NoColor: getenv("NO_COLOR") != "" || journal}
	var h slog.Handler
	switch strings.ToLower(format) {
	case "json":
		h = slog.NewJSONHandler(w, opts)
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "tint":
		h = tint.NewTextHandler(w, tintOpts)
	case "auto", "":
		if isTerminal(term) && !journal {
			h = tint.NewTextHandler(w, tintOpts)
		} else {
			h = slog.NewJSONHandler(w, opts)
		}
	default:
		return nil, fmt.Errorf("log format %q: want auto, json, text or tint", format)
	}
	if journal {
		h = &priorityHandler{h: h, w: pw}
	}
	return slog.New(h), nil
}

// replaceAttr prints durations as Go duration text ("1m0s", not
// nanoseconds) and keeps secret-named attributes out.
func replaceAttr(groups []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return redactAttr(groups, a)
}

// syslogPriority maps a level to the syslog priority journald reads from
// a line's "<N>" prefix.
func syslogPriority(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "<3>"
	case l >= slog.LevelWarn:
		return "<4>"
	case l >= slog.LevelInfo:
		return "<6>"
	}
	return "<7>"
}

// priorityWriter writes each line with the prefix its handler set; slog's
// handlers write one record in one Write.
type priorityWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
}

func (p *priorityWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}

// priorityHandler sets the writer's prefix from each record's level.
type priorityHandler struct {
	h slog.Handler
	w *priorityWriter
}

func (h *priorityHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *priorityHandler) Handle(ctx context.Context, r slog.Record) error {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	h.w.prefix = syslogPriority(r.Level)
	return h.h.Handle(ctx, r)
}

func (h *priorityHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &priorityHandler{h: h.h.WithAttrs(as), w: h.w}
}

func (h *priorityHandler) WithGroup(name string) slog.Handler {
	return &priorityHandler{h: h.h.WithGroup(name), w: h.w}
}

// redactAttr is a backstop: attributes whose key names a secret are never
// printed, whatever their value. Secrets are also typed (extract.Secret)
// so they redact themselves; this catches a mistake in a key-value call.
func redactAttr(_ []string, a slog.Attr) slog.Attr {
	switch strings.ToLower(a.Key) {
	case "password", "token", "access_token", "authorization", "secret", "api_password":
		return slog.String(a.Key, "[REDACTED]")
	}
	return a
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// underJournal reports whether w is the journald stream systemd connected
// to this service (JOURNAL_STREAM holds its device and inode).
func underJournal(w io.Writer, getenv func(string) string) bool {
	js := getenv("JOURNAL_STREAM")
	f, ok := w.(*os.File)
	if js == "" || !ok {
		return false
	}
	var dev, ino uint64
	if _, err := fmt.Sscanf(js, "%d:%d", &dev, &ino); err != nil {
		return false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	return uint64(st.Dev) == dev && st.Ino == ino
}
