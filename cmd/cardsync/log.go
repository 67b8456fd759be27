package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"
)

// newLogger picks the handler: tint on a terminal, JSON under journald or
// when the output is not a terminal. getenv reads JOURNAL_STREAM.
func newLogger(w io.Writer, level, format string, getenv func(string) string) (*slog.Logger, error) {
	return newLoggerTo(w, w, level, format, getenv)
}

// newLoggerTo is newLogger writing to out while deciding the format from
// the terminal behind term (out may wrap it, as the progress line does).
func newLoggerTo(out, term io.Writer, level, format string, getenv func(string) string) (*slog.Logger, error) {
	w := out
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: lvl, ReplaceAttr: redactAttr}
	switch strings.ToLower(format) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "tint":
		return slog.New(tint.NewTextHandler(w, &tint.Options{Level: lvl, TimeFormat: time.DateTime, ReplaceAttr: redactAttr, NoColor: getenv("NO_COLOR") != ""})), nil
	case "auto", "":
		if isTerminal(term) && !underJournal(term, getenv) {
			return slog.New(tint.NewTextHandler(w, &tint.Options{Level: lvl, TimeFormat: time.DateTime, ReplaceAttr: redactAttr, NoColor: getenv("NO_COLOR") != ""})), nil
		}
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("log format %q: want auto, json, text or tint", format)
	}
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
