package worker

import (
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/cardsync/cardsync/load"
)

// every is a fixed-interval schedule.
type every time.Duration

func (e every) Next(t time.Time) time.Time {
	return t.Truncate(time.Duration(e)).Add(time.Duration(e))
}

func TestAssess(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return now.Add(-d) }
	ptr := func(t time.Time) *time.Time { return &t }
	run := func(id int64, status string, started time.Duration, errText string) load.Run {
		r := load.Run{ID: id, Status: status, StartedAt: at(started), HeartbeatAt: at(started - time.Minute), Error: errText}
		if status != load.StatusRunning {
			r.FinishedAt = ptr(at(started - 2*time.Minute))
		}
		return r
	}
	yes, no := true, false
	tests := []struct {
		name       string
		sum        load.Summary
		lockHolder int
		healthy    bool
		problem    string // in the first problem
		warning    string // in some warning
		overdue    bool
		deadRuns   int
		noSchedule bool
	}{
		{name: "fresh success", sum: load.Summary{Runs: []load.Run{run(3, "succeeded", 10*time.Minute, "")}, LastSuccessAt: ptr(at(8 * time.Minute)), LastSuccessRun: 3},
			healthy: true},
		{name: "never succeeded", sum: load.Summary{}, problem: "no successful run yet"},
		{name: "last run failed, cause in full", sum: load.Summary{
			Runs:          []load.Run{run(4, "failed", 5*time.Minute, "walk cards: fetch cards page 7: gave up after 3 attempts in 5m0s: service unavailable: status 503: Service Unavailable"), run(3, "succeeded", 20*time.Minute, "")},
			LastSuccessAt: ptr(at(18 * time.Minute)), LastSuccessRun: 3},
			problem: "the last run (4) failed 3m0s ago: walk cards: fetch cards page 7: gave up after 3 attempts in 5m0s: service unavailable: status 503: Service Unavailable"},
		{name: "an interrupted run is not a failure", sum: load.Summary{
			Runs:          []load.Run{run(4, "interrupted", 5*time.Minute, "interrupted: received terminated"), run(3, "succeeded", 20*time.Minute, "")},
			LastSuccessAt: ptr(at(18 * time.Minute)), LastSuccessRun: 3},
			healthy: true},
		{name: "stale success", sum: load.Summary{Runs: []load.Run{run(3, "succeeded", 70*time.Minute, "")}, LastSuccessAt: ptr(at(68 * time.Minute)), LastSuccessRun: 3},
			problem: "more than three scheduled runs ago", overdue: true},
		{name: "one slot missed is not yet overdue", sum: load.Summary{Runs: []load.Run{run(3, "succeeded", 32*time.Minute, "")}, LastSuccessAt: ptr(at(30 * time.Minute)), LastSuccessRun: 3},
			healthy: true},
		// The daemon counts from a run's end (NextRun): the run ended at
		// 11:14, its slots 11:15, 11:30 and 11:45 went by, so the success
		// is stale as well (and said first).
		{name: "overdue: two slots missed, runs fail before they are recorded", sum: load.Summary{Runs: []load.Run{run(3, "succeeded", 48*time.Minute, "")}, LastSuccessAt: ptr(at(46 * time.Minute)), LastSuccessRun: 3},
			problem: "more than three scheduled runs ago", overdue: true},
		{name: "two slots after the end of the last run, not yet overdue", sum: load.Summary{Runs: []load.Run{run(3, "succeeded", 47*time.Minute, "")}, LastSuccessAt: ptr(at(45 * time.Minute)), LastSuccessRun: 3},
			healthy: true},
		{name: "a long run in progress is not overdue", sum: load.Summary{Runs: []load.Run{run(4, "running", 50*time.Minute, ""), run(3, "succeeded", 65*time.Minute, "")}, LastSuccessAt: ptr(at(40 * time.Minute)), LastSuccessRun: 3},
			lockHolder: 4242, healthy: true},
		{name: "running with a live writer", sum: load.Summary{Runs: []load.Run{run(5, "running", 2*time.Minute, ""), run(4, "succeeded", 15*time.Minute, "")}, LastSuccessAt: ptr(at(13 * time.Minute)), LastSuccessRun: 4},
			lockHolder: 4242, healthy: true},
		{name: "running but the process died", sum: load.Summary{Runs: []load.Run{run(5, "running", 2*time.Minute, ""), run(4, "succeeded", 15*time.Minute, "")}, LastSuccessAt: ptr(at(13 * time.Minute)), LastSuccessRun: 4},
			problem: "run 5 is marked running but no cardsync process holds the warehouse", deadRuns: 1},
		{name: "running and stuck past the run timeout", sum: load.Summary{Runs: []load.Run{run(5, "running", 3*time.Hour, ""), run(4, "succeeded", 15*time.Minute, "")}, LastSuccessAt: ptr(at(13 * time.Minute)), LastSuccessRun: 4},
			lockHolder: 4242, problem: "stuck", deadRuns: 1},
		{name: "warnings do not make it unhealthy", sum: load.Summary{Runs: []load.Run{{ID: 3, Status: "succeeded", StartedAt: at(10 * time.Minute), HeartbeatAt: at(9 * time.Minute), FinishedAt: ptr(at(8 * time.Minute)), AccountError: "read account: status 500"}},
			LastSuccessAt: ptr(at(8 * time.Minute)), LastSuccessRun: 3, RemovalsHeld: 90, LastRunRejected: 2, LastWalkConsistent: &no},
			healthy: true, warning: "mass removal held"},
		{name: "one inconsistent walk is a warning naming its reason and pages", sum: load.Summary{Runs: []load.Run{run(3, "succeeded", 10*time.Minute, "")}, LastSuccessAt: ptr(at(8 * time.Minute)), LastSuccessRun: 3,
			LastWalkConsistent: &no, RecentWalks: []load.WalkOutcome{{WalkID: 7, Outcome: "inconsistent", Reason: "empty_page", Pages: []int{2}}, {WalkID: 6, Outcome: "complete"}}},
			healthy: true, warning: "the last walk was inconsistent (walk 7: empty_page on page 2)"},
		{name: "two inconsistent walks in a row are a problem naming reasons and pages", sum: load.Summary{Runs: []load.Run{run(3, "succeeded", 10*time.Minute, "")}, LastSuccessAt: ptr(at(8 * time.Minute)), LastSuccessRun: 3,
			LastWalkConsistent: &no, RecentWalks: []load.WalkOutcome{{WalkID: 8, Outcome: "inconsistent", Reason: "empty_page", Pages: []int{2}}, {WalkID: 7, Outcome: "inconsistent", Reason: "short_page", Pages: []int{2, 3}}}},
			problem: "the last two walks were inconsistent (walk 8: empty_page on page 2; walk 7: short_page on pages 2, 3)"},
		{name: "a counts reason has no pages", sum: load.Summary{Runs: []load.Run{run(3, "succeeded", 10*time.Minute, "")}, LastSuccessAt: ptr(at(8 * time.Minute)), LastSuccessRun: 3,
			LastWalkConsistent: &no, RecentWalks: []load.WalkOutcome{{WalkID: 8, Outcome: "inconsistent", Reason: "total_changed"}, {WalkID: 7, Outcome: "inconsistent", Reason: "count_mismatch"}}},
			problem: "(walk 8: total_changed; walk 7: count_mismatch)"},
		{name: "no schedule known", sum: load.Summary{Runs: []load.Run{run(3, "succeeded", 70*time.Hour, "")}, LastSuccessAt: ptr(at(70 * time.Hour)), LastSuccessRun: 3, LastWalkConsistent: &yes},
			healthy: true, noSchedule: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sched Schedule = every(15 * time.Minute)
			if tt.noSchedule {
				sched = nil
			}
			h := Assess(tt.sum, sched, now, tt.lockHolder, 2*time.Hour, CommandLine{})
			if h.Healthy != tt.healthy {
				t.Errorf("healthy = %v, want %v (problems %q)", h.Healthy, tt.healthy, h.Problems)
			}
			if tt.problem != "" && (len(h.Problems) == 0 || !strings.Contains(h.Problems[0], tt.problem)) {
				t.Errorf("problems %q, want the first to contain %q", h.Problems, tt.problem)
			}
			if tt.warning != "" && !strings.Contains(strings.Join(h.Warnings, "\n"), tt.warning) {
				t.Errorf("warnings %q, want one containing %q", h.Warnings, tt.warning)
			}
			if h.Overdue != tt.overdue || len(h.DeadRuns) != tt.deadRuns {
				t.Errorf("overdue %v dead runs %v; want %v and %d", h.Overdue, h.DeadRuns, tt.overdue, tt.deadRuns)
			}
		})
	}
}

// TestNextDueIsTheDaemons: status's next run is the daemon's, counted from
// the newest run's end (NextRun), for @every and cron specs alike: with
// runs of 25 s, @every 40s is due 40 s after the end, and @every 10s is
// not shown as a time already past; a cron slot is the same whichever of
// start or end it counts from; a run in progress pushes it past now.
func TestNextDueIsTheDaemons(t *testing.T) {
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	end := start.Add(25 * time.Second)
	now := start.Add(30 * time.Second)
	cronSpec, err := cron.ParseStandard("*/5 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	done := load.Summary{Runs: []load.Run{{ID: 2, Status: load.StatusSucceeded, StartedAt: start, HeartbeatAt: end, FinishedAt: &end}},
		LastSuccessAt: &end, LastSuccessRun: 2}
	running := load.Summary{Runs: []load.Run{{ID: 3, Status: load.StatusRunning, StartedAt: start, HeartbeatAt: end}, done.Runs[0]},
		LastSuccessAt: &end, LastSuccessRun: 2}
	for _, tt := range []struct {
		name       string
		sched      Schedule
		sum        load.Summary
		lockHolder int
		want       time.Time
	}{
		{"@every 40s after a 25 s run", cron.Every(40 * time.Second), done, 0, end.Add(40 * time.Second)},
		{"@every 10s after a 25 s run", cron.Every(10 * time.Second), done, 0, end.Add(10 * time.Second)},
		{"cron */5 after a 25 s run", cronSpec, done, 0, start.Add(5 * time.Minute)},
		{"@every 40s while a run is in progress", cron.Every(40 * time.Second), running, 4242, now.Add(40 * time.Second)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := Assess(tt.sum, tt.sched, now, tt.lockHolder, time.Hour, CommandLine{})
			if !h.NextDue.Equal(tt.want) {
				t.Errorf("NextDue = %s, want %s", h.NextDue.Format(time.TimeOnly), tt.want.Format(time.TimeOnly))
			}
			if !h.NextDue.After(now) || h.Overdue || !h.Healthy {
				t.Errorf("next due %s at %s, overdue %v, problems %q: want a time to come, healthy", h.NextDue.Format(time.TimeOnly), now.Format(time.TimeOnly), h.Overdue, h.Problems)
			}
			if got := NextRun(tt.sched, lastRunEnd(tt.sum.Runs, nil, now)); !got.Equal(h.NextDue) {
				t.Errorf("NextRun = %s, Assess says %s", got, h.NextDue)
			}
		})
	}
}
