package sqlshare

// LowerRulesVersionSQL is the statement a run's start executes, with its
// one parameter (written param: "?" or "$1") the run's redact.RulesVersion:
// the warehouse is at the run's rules version at most.
func LowerRulesVersionSQL(param string) string {
	return `UPDATE rules_state SET rules_version = ` + param + ` WHERE rules_version > ` + param
}

// NewWarehouseRulesSQL is the statement of the migration that creates
// rules_state, run after its SQL with its one parameter (param)
// redact.RulesVersion: a warehouse holding no run and no card was written
// by no rules, so it starts at the current version.
func NewWarehouseRulesSQL(param string) string {
	return `UPDATE rules_state SET rules_version = ` + param + `
		WHERE NOT EXISTS (SELECT 1 FROM sync_runs) AND NOT EXISTS (SELECT 1 FROM card_state)`
}
