package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/worker"
)

// TestOneIsSingular renders what the commands print for people (a run's
// summary, status with one account, check's warehouse line, a rescan, a
// restore's refusal, the progress line, the API's give-up error) with
// every count at 1, and finds no "1 <plural>" in it.
func TestOneIsSingular(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	earlier := now.Add(-time.Hour)
	ms := int64(1000)
	ones := load.RunCounts{Pages: 1, CardsSeen: 1, CardsNew: 1, CardsChanged: 1, CardsReturned: 1, CardsUnchanged: 1,
		CardsRemoved: 1, CardsRejected: 1, RemovalsHeld: 1, Requests: 1, Retries: 1, RateLimited: 1, AuthRequests: 1,
		SecretsRedacted: 1, CardNumbersMasked: 1, CodesDropped: 1, TrackDataDropped: 1, FieldsDropped: 1}
	no := false
	sum := load.Summary{Path: "/w.db", Account: "default", SchemaVersion: 1,
		Runs: []load.Run{{ID: 1, Trigger: "backfill", Status: "succeeded", StartedAt: earlier, FinishedAt: &earlier, HeartbeatAt: earlier,
			RunCounts: ones, WalkConsistent: &no, Error: "x", AccountError: "y", DurationMS: &ms}},
		Cards: 1, CurrentCards: 1, RemovedCards: 1, PendingRemovals: 1, CardVersions: 1, Snapshots: 1, LastSnapshotAt: &earlier,
		RejectedCards: 1, LastRunRejected: 1, RemovalsHeld: 1, LastSuccessAt: &earlier, LastSuccessRun: 1, FailuresInARow: 1,
		LastWalkConsistent: &no, LastWalkAt: &earlier,
		RecentWalks: []load.WalkOutcome{{WalkID: 1, FinishedAt: earlier, Outcome: "inconsistent", Reason: "empty_page", Pages: []int{1}}},
	}
	var out strings.Builder
	rep := worker.NewStatusReport(now, []worker.AccountStatus{worker.NewAccountStatus(worker.StatusFacts{Summary: sum}, worker.StatusSettings{}, now)})
	printStatus(&out, rep, true, worker.CommandLine{})
	held := sum
	held.RemovalsHeld = 0
	printStatus(&out, worker.NewStatusReport(now, []worker.AccountStatus{worker.NewAccountStatus(worker.StatusFacts{Summary: held}, worker.StatusSettings{}, now)}), false, worker.CommandLine{})
	out.WriteString(statusOneLine(sum) + "\n")

	res := worker.Result{RunID: 1, Status: "succeeded", Pages: 1, Cards: 1, New: 1, Changed: 1, Returned: 1, Unchanged: 1, Removed: 1,
		PendingRemovals: 1, RemovalsHeld: 1, Rejected: 1}
	printSummary(&out, res, worker.CommandLine{})
	res.RemovalsHeld = 0
	printSummary(&out, res, worker.CommandLine{})

	printRescan(&out, "warehouse", load.RescanResult{Read: map[string]int{"cards": 1}, Changed: map[string]int{"cards": 1}, Secrets: 1, IDs: 1, Version: 1})
	one := sqlite.History{ID: "a", Runs: 1, AccountSnapshots: 1, CardVersions: 1, LastRunID: 1, LastRunStarted: "2026-05-01T11:00:00Z"}
	printRefusal(&out, &dialect.RestoreRefusedError{Warehouse: "/w.db", File: "/b.db", Reasons: []string{"r"},
		Comparison: sqlite.RestoreComparison{Present: true, Current: one, File: one, LostRuns: 1, LostAccountSnapshots: 1, LostCardVersions: 1}}, "cardsync restore -force")

	p := &progressLine{w: &out}
	p.update(worker.Progress{Page: 1, TotalPages: 1, StartPage: 1, Cards: 1, Elapsed: 250 * time.Millisecond}) // a rate of 4 cards/s: a unit, not a count
	out.WriteString("\n")
	out.WriteString((&extract.WaitError{Op: "fetch cards page 1", Attempts: 1, Last: errors.New("503")}).Error() + "\n")

	text := out.String()
	for _, want := range []string{"healthy: 1 account", "1 snapshot, the last", "1 version\n", "1 page, 1 card (", "1 distinct item in",
		"1 live card, none", "1 card missing", "1 value or key", "1 card number, dropped 1 security code or PIN and 1 track or EMV card tag",
		"1 card field ", "1 run, 1 account snapshot and 1 card version", "gave up after 1 attempt in"} {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q:\n%s", want, text)
		}
	}
	if bad := english.Miscounted(text); len(bad) > 0 {
		t.Errorf("a count of 1 with a plural: %q\nin:\n%s", bad, text)
	}
}
