package config

import (
	"fmt"
	"slices"
	"strings"
)

// reloadRule is one key group a reload compares: whether it differs
// between two settings, and whether a change takes effect only after a
// restart (a SIGHUP cannot apply it).
type reloadRule struct {
	key     string
	restart bool
	differs func(old, s Settings) bool
}

// reloadAliases names the rule that notices a change of a key no rule is
// named after (docs/configuration.md says so of each key).
var reloadAliases = map[string]string{
	"warehouse.password_file": "warehouse.url",
	"warehouse.schema":        "warehouse.url",
	"accounts.name":           "accounts",
}

// reloadRules are serve's key groups, in the order a reload lists them.
func reloadRules() []reloadRule {
	return []reloadRule{
		{"api", false, func(a, b Settings) bool { return b.APIChanged(a) }},
		{"schedule.cron", false, func(a, b Settings) bool { return a.CronSpec != b.CronSpec }},
		{"schedule.timezone", false, func(a, b Settings) bool { return a.Location.String() != b.Location.String() }},
		{"schedule.run_timeout", false, func(a, b Settings) bool { return a.RunTimeout != b.RunTimeout }},
		{"log", false, func(a, b Settings) bool { return a.LogLevel != b.LogLevel || a.LogFormat != b.LogFormat }},
		{"warehouse.page_audit_retention", false, func(a, b Settings) bool { return a.PageAuditRetention != b.PageAuditRetention }},
		{"warehouse.field_retention", false, func(a, b Settings) bool { return a.FieldRetention != b.FieldRetention }},
		{"warehouse.path", true, func(a, b Settings) bool { return a.DBPath != b.DBPath }},
		{"warehouse.url", true, func(a, b Settings) bool {
			return a.WarehouseURL != b.WarehouseURL || a.WarehousePassword != b.WarehousePassword || a.WarehouseSchema != b.WarehouseSchema
		}},
		{"warehouse.max_connections", true, func(a, b Settings) bool { return a.MaxConnections != b.MaxConnections }},
		{"cluster", true, func(a, b Settings) bool {
			return a.LeaseTTL != b.LeaseTTL || a.Holder != b.Holder || a.HolderSet != b.HolderSet
		}},
		{"warehouse.file_mode", true, func(a, b Settings) bool { return a.FileMode != b.FileMode }},
		{"warehouse.synchronous", true, func(a, b Settings) bool { return a.Synchronous != b.Synchronous }},
		{"warehouse.redact_fields", true, func(a, b Settings) bool {
			return strings.Join(a.RedactFields, ",") != strings.Join(b.RedactFields, ",")
		}},
		// keep_fields is a warehouse option, like redact_fields: the
		// warehouse is opened with it, so a change needs a restart.
		{"cards.keep_fields", true, func(a, b Settings) bool {
			return (a.KeepFields == nil) != (b.KeepFields == nil) || !slices.Equal(a.KeepFields, b.KeepFields)
		}},
		// The scale of card money is a warehouse option too.
		{"cards.amount_scale", true, func(a, b Settings) bool { return a.CardAmountScale != b.CardAmountScale }},
		{"cards.currency_field", true, func(a, b Settings) bool { return a.CurrencyField != b.CurrencyField }},
		{"warehouse.max_removed_fraction", true, func(a, b Settings) bool { return a.MaxRemovedFraction != b.MaxRemovedFraction }},
		{"warehouse.commit_delay", true, func(a, b Settings) bool { return a.CommitDelay != b.CommitDelay }},
		{"metrics.healthy_within", false, func(a, b Settings) bool { return a.HealthyWithin != b.HealthyWithin }},
		{"metrics.listen", true, func(a, b Settings) bool { return a.MetricsListen != b.MetricsListen }},
		{"report", false, func(a, b Settings) bool { return a.ReportPath != b.ReportPath || a.ReportSince != b.ReportSince }},
		{"warehouse.checkpoint", true, func(a, b Settings) bool { return a.Checkpoint != b.Checkpoint }},
		{"backup", false, func(a, b Settings) bool {
			return a.BackupDir != b.BackupDir || a.BackupKeep != b.BackupKeep || a.BackupCron != b.BackupCron
		}},
		{"accounts", true, func(a, b Settings) bool { return b.CheckAccounts(a) != nil }},
	}
}

// Changes lists the key groups a reload from old to s changes ("nothing"
// when none does), and those among them that take effect only after a
// restart: the warehouse's keys, [cluster], [metrics] listen, and adding,
// removing or renaming an account (CheckAccounts refuses such a reload).
func (s Settings) Changes(old Settings) (changed, restart []string) {
	for _, r := range reloadRules() {
		if !r.differs(old, s) {
			continue
		}
		changed = append(changed, r.key)
		if r.restart {
			restart = append(restart, r.key)
		}
	}
	if len(changed) == 0 {
		changed = []string{"nothing"}
	}
	return changed, restart
}

// CheckAccounts refuses a reload from old to s that adds, removes or
// renames an account: that needs a restart, and the error says so.
func (s Settings) CheckAccounts(old Settings) error {
	if slices.Equal(accountNames(old.Accounts), accountNames(s.Accounts)) {
		return nil
	}
	return fmt.Errorf("the accounts changed from %s to %s: adding, removing or renaming an account needs a restart",
		strings.Join(accountNames(old.Accounts), ", "), strings.Join(accountNames(s.Accounts), ", "))
}

// APIChanged reports whether a reload from old to s must rebuild the API
// clients (they would lose their tokens otherwise kept across runs). A
// change to any account rebuilds every client, so the accounts of a
// rate_group keep sharing one pacer.
func (s Settings) APIChanged(old Settings) bool {
	if len(old.Accounts) != len(s.Accounts) {
		return true
	}
	client := old.Timeout != s.Timeout || old.MaxWait != s.MaxWait || old.MaxBodyBytes != s.MaxBodyBytes ||
		old.AmountScale != s.AmountScale || old.MaxPages != s.MaxPages
	for i := range s.Accounts {
		if client || old.Accounts[i] != s.Accounts[i] {
			return true
		}
	}
	return false
}

// ScheduleChanged reports whether a reload from old to s changes when runs
// are due: the cron spec or its time zone.
func (s Settings) ScheduleChanged(old Settings) bool {
	return old.CronSpec != s.CronSpec || old.Location.String() != s.Location.String()
}

// accountNames lists the names of accounts, in order.
func accountNames(accounts []AccountSettings) []string {
	names := make([]string, len(accounts))
	for i, a := range accounts {
		names[i] = a.Name
	}
	return names
}
