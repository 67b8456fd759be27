package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
)

// reloadBase is a configuration the reload tests change one key of.
func reloadBase() Settings {
	acct := AccountSettings{Name: load.DefaultAccount, BaseURL: "https://api.example.com", Email: "ops@example.com",
		Password: extract.Secret("hunter2hunter2"), RateLimit: extract.Rate{N: 10, Per: time.Second}}
	return Settings{
		AccountSettings: acct, Accounts: []AccountSettings{acct},
		Timeout: 30 * time.Second, MaxWait: time.Minute, MaxBodyBytes: 1 << 20, AmountScale: 2, MaxPages: 100,
		DBPath: "/var/lib/cardsync/warehouse.db", FileMode: 0o640, Synchronous: "full", RedactFields: []string{"pan"},
		PageAuditRetention: time.Hour, FieldRetention: time.Hour, MaxRemovedFraction: 0.5, CommitDelay: time.Second,
		CronSpec: "*/15 * * * *", Location: time.UTC, RunTimeout: time.Hour, LogLevel: "info", LogFormat: "text",
		WALCheckpoint: "auto", BackupDir: "", BackupKeep: 7, BackupCron: "", ReportPath: "", ReportSince: 24 * time.Hour,
		MetricsListen: "", HealthyWithin: time.Hour,
	}
}

// TestSettingsChanges: each key group a reload can change, whether a SIGHUP
// applies it or it needs a restart, as serve has always said.
func TestSettingsChanges(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	for _, tt := range []struct {
		key     string
		restart bool
		change  func(*Settings)
	}{
		{"api", false, func(s *Settings) { s.Accounts[0].BaseURL = "https://api2.example.com" }},
		{"api", false, func(s *Settings) { s.Accounts[0].Password = "another-password" }},
		{"api", false, func(s *Settings) { s.Accounts[0].RateLimit.N = 5 }},
		{"api", false, func(s *Settings) { s.Timeout = time.Minute }},
		{"api", false, func(s *Settings) { s.MaxWait = time.Hour }},
		{"api", false, func(s *Settings) { s.MaxBodyBytes = 1 << 30 }},
		{"api", false, func(s *Settings) { s.AmountScale = 3 }},
		{"api", false, func(s *Settings) { s.MaxPages = 7 }},
		{"schedule.cron", false, func(s *Settings) { s.CronSpec = "@every 5m" }},
		{"schedule.timezone", false, func(s *Settings) { s.Location = berlin }},
		{"schedule.run_timeout", false, func(s *Settings) { s.RunTimeout = 2 * time.Hour }},
		{"log", false, func(s *Settings) { s.LogLevel = "debug" }},
		{"log", false, func(s *Settings) { s.LogFormat = "json" }},
		{"warehouse.page_audit_retention", false, func(s *Settings) { s.PageAuditRetention = 0 }},
		{"warehouse.field_retention", false, func(s *Settings) { s.FieldRetention = 2 * time.Hour }},
		{"warehouse.path", true, func(s *Settings) { s.DBPath = "/srv/w.db" }},
		{"warehouse.url", true, func(s *Settings) { s.WarehouseURL = "postgres://db/cardsync" }},
		{"warehouse.url", true, func(s *Settings) { s.WarehousePassword = "pg-password" }},
		{"warehouse.max_connections", true, func(s *Settings) { s.MaxConnections = 30 }},
		{"cluster", true, func(s *Settings) { s.LeaseTTL = time.Minute }},
		{"cluster", true, func(s *Settings) { s.Holder = "host-b:42" }},
		{"warehouse.file_mode", true, func(s *Settings) { s.FileMode = 0o600 }},
		{"warehouse.synchronous", true, func(s *Settings) { s.Synchronous = "normal" }},
		{"warehouse.redact_fields", true, func(s *Settings) { s.RedactFields = []string{"pan", "cvv"} }},
		{"cards.keep_fields", true, func(s *Settings) { s.KeepFields = []string{"status"} }},
		{"cards.amount_scale", true, func(s *Settings) { s.CardAmountScale = 3 }},
		{"cards.currency_field", true, func(s *Settings) { s.CurrencyField = "ccy" }},
		{"warehouse.max_removed_fraction", true, func(s *Settings) { s.MaxRemovedFraction = 0.1 }},
		{"warehouse.commit_delay", true, func(s *Settings) { s.CommitDelay = 0 }},
		{"metrics.healthy_within", false, func(s *Settings) { s.HealthyWithin = 2 * time.Hour }},
		{"metrics.listen", true, func(s *Settings) { s.MetricsListen = "127.0.0.1:9464" }},
		{"report", false, func(s *Settings) { s.ReportPath = "/srv/report.html" }},
		{"report", false, func(s *Settings) { s.ReportSince = time.Hour }},
		{"warehouse.checkpoint", true, func(s *Settings) { s.WALCheckpoint = "external" }},
		{"backup", false, func(s *Settings) { s.BackupDir = "/srv/backups" }},
		{"backup", false, func(s *Settings) { s.BackupKeep = 30 }},
		{"backup", false, func(s *Settings) { s.BackupCron = "30 3 * * *" }},
	} {
		old, next := reloadBase(), reloadBase()
		tt.change(&next)
		changed, restart := next.Changes(old)
		if !slices.Equal(changed, []string{tt.key}) {
			t.Errorf("%s: changed %v, want [%s]", tt.key, changed, tt.key)
		}
		if want := tt.restart; slices.Contains(restart, tt.key) != want || len(restart) > 1 {
			t.Errorf("%s: needs a restart %v, want %v", tt.key, restart, want)
		}
		if err := next.CheckAccounts(old); err != nil {
			t.Errorf("%s: %v", tt.key, err)
		}
		if got, want := next.APIChanged(old), tt.key == "api"; got != want {
			t.Errorf("%s: APIChanged %v, want %v", tt.key, got, want)
		}
		if got, want := next.ScheduleChanged(old), strings.HasPrefix(tt.key, "schedule.") && tt.key != "schedule.run_timeout"; got != want {
			t.Errorf("%s: ScheduleChanged %v, want %v", tt.key, got, want)
		}
	}
}

// TestSettingsChangesNothing: a reload of the same settings changes
// nothing and needs no restart.
func TestSettingsChangesNothing(t *testing.T) {
	changed, restart := reloadBase().Changes(reloadBase())
	if !slices.Equal(changed, []string{"nothing"}) || restart != nil {
		t.Errorf("changed %v, restart %v; want [nothing] and none", changed, restart)
	}
}

// TestSettingsAccountsNeedRestart: adding, removing or renaming an account
// needs a restart, and the refusal names the accounts before and after.
func TestSettingsAccountsNeedRestart(t *testing.T) {
	acme := func(name string) AccountSettings {
		a := reloadBase().AccountSettings
		a.Name = name
		return a
	}
	for _, tt := range []struct {
		name      string
		old, next []AccountSettings
		want      string
	}{
		{"added", []AccountSettings{acme("acme")}, []AccountSettings{acme("acme"), acme("globex")}, "from acme to acme, globex"},
		{"removed", []AccountSettings{acme("acme"), acme("globex")}, []AccountSettings{acme("globex")}, "from acme, globex to globex"},
		{"renamed", []AccountSettings{acme("acme")}, []AccountSettings{acme("initech")}, "from acme to initech"},
		{"reordered", []AccountSettings{acme("a"), acme("b")}, []AccountSettings{acme("b"), acme("a")}, "from a, b to b, a"},
	} {
		old, next := reloadBase(), reloadBase()
		old.Accounts, next.Accounts = tt.old, tt.next
		changed, restart := next.Changes(old)
		if !slices.Contains(changed, "accounts") || !slices.Equal(restart, []string{"accounts"}) {
			t.Errorf("%s: changed %v, restart %v; want accounts, needing a restart", tt.name, changed, restart)
		}
		err := next.CheckAccounts(old)
		if err == nil || !strings.Contains(err.Error(), "the accounts changed "+tt.want+": adding, removing or renaming an account needs a restart") {
			t.Errorf("%s: CheckAccounts: %v", tt.name, err)
		}
	}
	// The same names with other values are a reload, not a restart.
	old, next := reloadBase(), reloadBase()
	old.Accounts = []AccountSettings{acme("acme"), acme("globex")}
	next.Accounts = []AccountSettings{acme("acme"), acme("globex")}
	next.Accounts[1].Email = "new@globex.example"
	if changed, restart := next.Changes(old); !slices.Equal(changed, []string{"api"}) || restart != nil {
		t.Errorf("an account's email changed: changed %v, restart %v; want [api], no restart", changed, restart)
	}
}
