package config

import (
	"fmt"
	"slices"
	"strings"
)

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
