// Package runrule holds the rules of recording a run both warehouses
// follow: which triggers and finish statuses sync_runs accepts
// (CheckTrigger, CheckFinishStatus), when a run left running counts as
// stale and in what order stale runs are closed (StaleCutoff,
// SortStaleRuns), and the query of an account's last walks for its
// summary (RecentWalksQuery). Package load holds the types it speaks in
// (RunResult, StaleRun, Summary, ...); only load/sqlite and load/postgres
// import it.
package runrule

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/cardsync/cardsync/load"
)

// RecentWalksQuery selects the account's ($1 or ?1) last SummaryWalks
// judged walks, newest first: walk_id, finished_at, outcome, reason, pages.
// SQLite and PostgreSQL run it as it is but for the parameter's spelling.
const RecentWalksQuery = `SELECT walk_id, finished_at, outcome, coalesce(inconsistent_reason, ''), coalesce(inconsistent_pages, '')
	FROM sync_walks WHERE account = ?1 AND outcome IN ('complete', 'inconsistent') ORDER BY walk_id DESC LIMIT 2`

// CheckFinishStatus is the rule of FinishRun in both dialects: a run
// finishes succeeded, failed, interrupted or abandoned, never running.
func CheckFinishStatus(status string) error {
	if !slices.Contains([]string{load.StatusSucceeded, load.StatusFailed, load.StatusInterrupted, load.StatusAbandoned}, status) {
		return fmt.Errorf("status %q: want succeeded, failed, interrupted or abandoned", status)
	}
	return nil
}

// CheckTrigger is the rule of StartRun in both dialects: a run is started
// by the schedule, a backfill or the demo.
func CheckTrigger(trigger string) error {
	if !slices.Contains([]string{load.TriggerSchedule, load.TriggerBackfill, load.TriggerDemo}, trigger) {
		return fmt.Errorf("trigger %q: want schedule, backfill or demo", trigger)
	}
	return nil
}

// StaleCutoff is the rule of AbandonStaleRuns in both dialects: a running
// run whose heartbeat is at or before the cutoff is dead. staleAfter 0
// means the caller holds the account's run lock or lease, so every running
// run is dead whatever its heartbeat says (even after the clock stepped
// back): the cutoff is the end of time.
func StaleCutoff(now time.Time, staleAfter time.Duration) time.Time {
	if staleAfter > 0 {
		return now.UTC().Add(-staleAfter)
	}
	return time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
}

// SortStaleRuns puts the runs AbandonStaleRuns marked in run id order.
func SortStaleRuns(runs []load.StaleRun) {
	slices.SortFunc(runs, func(a, b load.StaleRun) int { return cmp.Compare(a.ID, b.ID) })
}

// DurationMS is r.Duration in whole milliseconds for sync_runs.duration_ms,
// nil when unknown (0 or less).
func DurationMS(r load.RunResult) *int64 {
	if r.Duration <= 0 {
		return nil
	}
	ms := r.Duration.Milliseconds()
	return &ms
}
