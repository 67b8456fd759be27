package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"90d", 90 * 24 * time.Hour, true},
		{"1d", 24 * time.Hour, true},
		{"36h", 36 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"0d", 0, false},
		{"-3d", 0, false},
		{"-1h", 0, false},
		{"1.5d", 0, false},
		{"d", 0, false},
		{"", 0, false},
		{"90 days", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSince(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("ParseSince(%q) = %v, %v; want %v (ok %v)", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

// TestParseSinceCap: a number of days past the cap is refused naming the
// cap, not as if it were not a positive number.
func TestParseSinceCap(t *testing.T) {
	if _, err := ParseSince("36600d"); err != nil {
		t.Errorf("ParseSince(36600d): %v", err)
	}
	_, err := ParseSince("100000d")
	if err == nil || !strings.Contains(err.Error(), "cap of 36600 days") || strings.Contains(err.Error(), "positive") {
		t.Errorf("ParseSince(100000d) = %v, want an error naming the cap", err)
	}
}
