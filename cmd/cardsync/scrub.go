package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cardsync/cardsync/redact"
)

// scrubHandler passes every log record through secrets.Scrub before the
// real handler formats it: the message and every attribute, errors and
// Stringers included. Upstream text is already scrubbed where it enters
// (package extract); this is the last line, so that a secret or a card
// number never reaches stderr or the journal, whatever a caller logged.
type scrubHandler struct {
	h       slog.Handler
	secrets *redact.Secrets
}

func newScrubHandler(h slog.Handler, s *redact.Secrets) slog.Handler {
	if s == nil {
		return h
	}
	return scrubHandler{h: h, secrets: s}
}

// Enabled implements slog.Handler.
func (h scrubHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.secrets.Scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h scrubHandler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = h.attr(a)
	}
	return scrubHandler{h: h.h.WithAttrs(clean), secrets: h.secrets}
}

// WithGroup implements slog.Handler.
func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{h: h.h.WithGroup(name), secrets: h.secrets}
}

func (h scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.secrets.Scrub(v.String()))
	case slog.KindGroup:
		as := v.Group()
		clean := make([]slog.Attr, len(as))
		for i, g := range as {
			clean[i] = h.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(clean...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.secrets.Scrub(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, h.secrets.Scrub(x.String()))
		case []string:
			clean := make([]string, len(x))
			for i, s := range x {
				clean[i] = h.secrets.Scrub(s)
			}
			return slog.Any(a.Key, clean)
		default:
			return slog.String(a.Key, h.secrets.Scrub(fmt.Sprint(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
