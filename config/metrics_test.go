package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMetricsSettings(t *testing.T) {
	pw := writeFile(t, "pw", "s3cret\n", 0o600)
	base := "[api]\nbase_url = \"https://api.example.com\"\nemail = \"a@example.com\"\npassword_file = \"" + pw + "\"\n"
	tests := []struct {
		name        string
		file        string
		env         []string
		wantListen  string
		wantWithin  time.Duration
		wantErrLine int
		wantErr     string
	}{
		{name: "defaults: off, three 15-minute intervals", file: base, wantWithin: 45 * time.Minute},
		{name: "loopback", file: base + "[metrics]\nlisten = \"127.0.0.1:9464\"\n", wantListen: "127.0.0.1:9464", wantWithin: 45 * time.Minute},
		{name: "localhost and IPv6 loopback", file: base + "[metrics]\nlisten = \"[::1]:9464\"\n", wantListen: "[::1]:9464", wantWithin: 45 * time.Minute},
		{name: "every interface when written out", file: base + "[metrics]\nlisten = \"0.0.0.0:9464\"\n", wantListen: "0.0.0.0:9464", wantWithin: 45 * time.Minute},
		{name: "from the environment", file: base, env: []string{"CARDSYNC_METRICS_LISTEN=localhost:0", "CARDSYNC_METRICS_HEALTHY_WITHIN=2h"}, wantListen: "localhost:0", wantWithin: 2 * time.Hour},
		{name: "derived from the schedule", file: base + "[schedule]\ncron = \"@every 5m\"\n", wantWithin: 15 * time.Minute},
		{name: "explicit", file: base + "[metrics]\nhealthy_within = \"90m\"\n", wantWithin: 90 * time.Minute},
		{name: "no host", file: base + "[metrics]\nlisten = \":9464\"\n", wantErrLine: 6, wantErr: "has no host"},
		{name: "no port", file: base + "[metrics]\nlisten = \"127.0.0.1\"\n", wantErrLine: 6, wantErr: "host:port"},
		{name: "host name", file: base + "[metrics]\nlisten = \"metrics.example.com:9464\"\n", wantErrLine: 6, wantErr: "IP address"},
		{name: "bad port", file: base + "[metrics]\nlisten = \"127.0.0.1:http\"\n", wantErrLine: 6, wantErr: "port"},
		{name: "bad healthy_within", file: base + "[metrics]\nhealthy_within = \"soon\"\n", wantErrLine: 6, wantErr: "metrics.healthy_within"},
		{name: "zero healthy_within", file: base + "[metrics]\nhealthy_within = \"0s\"\n", wantErrLine: 6, wantErr: "positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(writeFile(t, "c.toml", tt.file, 0o600), tt.env)
			if err != nil {
				t.Fatal(err)
			}
			s, err := cfg.Settings(true, noEnv)
			if tt.wantErr != "" {
				var ce *Error
				if !errors.As(err, &ce) || ce.Key != "metrics.listen" && ce.Key != "metrics.healthy_within" ||
					!strings.Contains(err.Error(), tt.wantErr) || ce.Source.Line != tt.wantErrLine {
					t.Fatalf("got %v, want a metrics.* error at line %d containing %q", err, tt.wantErrLine, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.MetricsListen != tt.wantListen || s.HealthyWithin != tt.wantWithin {
				t.Errorf("listen %q, healthy_within %v; want %q, %v", s.MetricsListen, s.HealthyWithin, tt.wantListen, tt.wantWithin)
			}
		})
	}
}

// TestEveryMustBePositive: a period of zero or below is refused, not
// taken as every second.
func TestEveryMustBePositive(t *testing.T) {
	for _, spec := range []string{"@every -5m", "@every 0s", "@every -1ns", " @every  -1h "} {
		if _, err := ParseCron(spec); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("ParseCron(%q) = %v, want refused as not positive", spec, err)
		}
	}
	for _, spec := range []string{"@every 15m", "@every 1s", "@every 500ms"} {
		if _, err := ParseCron(spec); err != nil {
			t.Errorf("ParseCron(%q): %v", spec, err)
		}
	}
}

func TestScheduleInterval(t *testing.T) {
	now := time.Date(2026, 3, 4, 10, 7, 0, 0, time.UTC) // a Wednesday
	for _, tt := range []struct {
		spec string
		want time.Duration
	}{
		{"*/15 * * * *", 15 * time.Minute},
		{"@hourly", time.Hour},
		{"0 9 * * 1-5", 72 * time.Hour}, // Friday to Monday
	} {
		sched, err := ParseCron(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := ScheduleInterval(sched, now); got != tt.want {
			t.Errorf("ScheduleInterval(%q) = %v, want %v", tt.spec, got, tt.want)
		}
	}
}
