package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLogDurationsAsText checks that every log format prints a duration as
// Go duration text, never as a count of nanoseconds.
func TestLogDurationsAsText(t *testing.T) {
	for _, format := range []string{"json", "text", "tint"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := newLogger(&buf, "info", format, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			log.Info("retrying", "wait", time.Minute, slog.Group("walk", "elapsed", 1500*time.Millisecond))
			out := buf.String()
			for _, want := range []string{"1m0s", "1.5s"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s output does not show %q: %s", format, want, out)
				}
			}
			if strings.Contains(out, "60000000000") || strings.Contains(out, "1500000000") {
				t.Errorf("%s output shows nanoseconds: %s", format, out)
			}
		})
	}
}

// TestProgressLineSaysUnreachable: a backfill that cannot reach the API
// says so on its progress line at once, whatever the wait; other waits
// show from a second up.
func TestProgressLineSaysUnreachable(t *testing.T) {
	var b strings.Builder
	p := &progressLine{w: &b}
	p.onWait("status 503", 500*time.Millisecond)
	if b.Len() != 0 {
		t.Errorf("a short wait was drawn: %q", b.String())
	}
	p.onWait("cannot reach api.base_url http://127.0.0.1:9: connection refused (retrying until 2026-11-26T00:43:27Z)", 500*time.Millisecond)
	if !strings.Contains(b.String(), "| cannot reach api.base_url http://127.0.0.1:9: connection refused (retrying until 2026-11-26T00:43:27Z)") {
		t.Errorf("progress line %q does not say the API is unreachable", b.String())
	}
}
