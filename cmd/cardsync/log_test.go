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
