package worker

import (
	"fmt"
	"slices"
	"time"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
)

// Schedule is when runs are due (robfig/cron's Schedule is one).
type Schedule interface {
	Next(time.Time) time.Time
}

// NextRun is when the daemon starts its next scheduled run after from: the
// end of its previous run, or its start when it has run nothing yet. It
// counts from a run's end, not its start, so a run longer than an @every
// interval (or a cron slot) is never followed at once by another. Status
// and the start-up log line use it too, to say what the daemon will do.
func NextRun(sched Schedule, from time.Time) time.Time { return sched.Next(from) }

// lastRunEnd is what NextRun counts from for a warehouse whose newest run
// is runs[0]: its end; now while it runs (the next run comes after it
// ends); the last sign of life of a dead run (in dead); now when there is
// no run.
func lastRunEnd(runs []load.Run, dead []int64, now time.Time) time.Time {
	if len(runs) == 0 {
		return now
	}
	r := runs[0]
	switch {
	case r.FinishedAt != nil:
		return *r.FinishedAt
	case r.Status == load.StatusRunning && !slices.Contains(dead, r.ID):
		return now
	}
	if r.HeartbeatAt.After(r.StartedAt) {
		return r.HeartbeatAt
	}
	return r.StartedAt
}

// Health is the judgement of one warehouse's state, as `cardsync status`
// and the daemon's health endpoint report it.
type Health struct {
	// Healthy: the last run that ended succeeded (an interrupted run does
	// not count), no run is marked running by a dead process, and the last
	// success is younger than three scheduled runs.
	Healthy bool
	// Problems say why not, most important first; Warnings are worth a look
	// but do not make the warehouse unhealthy.
	Problems, Warnings []string
	// NextDue is when the daemon starts the next run (NextRun after the
	// newest run's end; after now when there is none or it is still
	// running); Overdue says that two more scheduled slots went by with no
	// run started and no sync holding the warehouse: the daemon is stopped,
	// or failing before it can record a run.
	NextDue time.Time
	Overdue bool
	// StaleAfter is when the last success becomes too old (three scheduled
	// runs after it); zero when there is no success.
	StaleAfter time.Time
	// DeadRuns are runs marked running whose process is gone (no process
	// holds the warehouse lock) or stuck past the run timeout.
	DeadRuns []int64
}

// Assess judges a warehouse summary at now. sched may be nil (no schedule
// known: freshness and overdue are not judged). lockHolder is the PID
// holding the writer lock (0: none); runTimeout bounds a live run (0: no
// bound). The commands it names are cl's (CommandLine), complete with the
// config and account they act on.
func Assess(s load.Summary, sched Schedule, now time.Time, lockHolder int, runTimeout time.Duration, cl CommandLine) Health {
	var h Health
	ago := func(t time.Time) string { return now.Sub(t).Round(time.Second).String() + " ago" }
	var lastEnded *load.Run
	for i := range s.Runs {
		r := &s.Runs[i]
		if r.Status == load.StatusRunning {
			switch {
			case lockHolder == 0:
				h.DeadRuns = append(h.DeadRuns, r.ID)
				h.Problems = append(h.Problems, fmt.Sprintf("run %d is marked running but no cardsync process holds the warehouse: it died (killed, out of memory, power loss); the next run marks it abandoned and resumes its walk", r.ID))
			case runTimeout > 0 && now.Sub(r.HeartbeatAt) > runTimeout:
				h.DeadRuns = append(h.DeadRuns, r.ID)
				h.Problems = append(h.Problems, fmt.Sprintf("run %d of process %d has made no progress since %s (more than run_timeout %s): stuck", r.ID, lockHolder, r.HeartbeatAt.UTC().Format(time.RFC3339), runTimeout))
			}
			continue
		}
		if r.Status == load.StatusInterrupted {
			continue
		}
		if lastEnded == nil {
			lastEnded = r
		}
	}
	if lastEnded != nil && lastEnded.Status != load.StatusSucceeded {
		end := lastEnded.StartedAt
		if lastEnded.FinishedAt != nil {
			end = *lastEnded.FinishedAt
		}
		h.Problems = append(h.Problems, fmt.Sprintf("the last run (%d) %s %s: %s", lastEnded.ID, lastEnded.Status, ago(end), lastEnded.Error))
	}
	if s.LastSuccessAt == nil {
		h.Problems = append(h.Problems, "no successful run yet")
	} else if sched != nil {
		t := *s.LastSuccessAt
		for range 3 {
			t = sched.Next(t)
		}
		h.StaleAfter = t
		if now.After(t) {
			h.Problems = append(h.Problems, fmt.Sprintf("the last success (run %d) was %s, more than three scheduled runs ago", s.LastSuccessRun, ago(*s.LastSuccessAt)))
		}
	}
	if sched != nil {
		from := lastRunEnd(s.Runs, h.DeadRuns, now)
		h.NextDue = NextRun(sched, from)
		if after := sched.Next(sched.Next(h.NextDue)); now.After(after) && lockHolder == 0 {
			h.Overdue = true
			h.Problems = append(h.Problems, fmt.Sprintf("overdue: the schedule expected a run at %s and none has started since %s; is `%s` running? (its log says why a run could not start)",
				h.NextDue.UTC().Format(time.RFC3339), from.UTC().Format(time.RFC3339), cl.Command("serve")))
		}
	}
	if s.RemovalsHeld > 0 {
		h.Warnings = append(h.Warnings, fmt.Sprintf("mass removal held: the last walk missed %s and marked none removed; if %s gone: %s",
			english.Count(s.RemovalsHeld, "live card"), english.TheyAre(s.RemovalsHeld), cl.AccountCommand("backfill", "-confirm-removals")))
	}
	if s.LastRunRejected > 0 {
		h.Warnings = append(h.Warnings, fmt.Sprintf("the last run set %s aside in rejected_cards", english.Count(s.LastRunRejected, "item")))
	}
	if len(s.Runs) > 0 && s.Runs[0].AccountError != "" {
		h.Warnings = append(h.Warnings, "the last run took no account snapshot: "+s.Runs[0].AccountError)
	}
	switch w := s.RecentWalks; {
	case len(w) >= 2 && !w[0].Consistent() && !w[1].Consistent():
		h.Problems = append(h.Problems, fmt.Sprintf("the last two walks were inconsistent (%s; %s): no removals are marked and the cards on those pages may be stale; see the runbook: docs/monitoring.md#cardsyncwalksinconsistent",
			WalkText(w[0]), WalkText(w[1])))
	case len(w) >= 1 && !w[0].Consistent():
		h.Warnings = append(h.Warnings, fmt.Sprintf("the last walk was inconsistent (%s): no removals were marked; another one in a row makes the account unhealthy", WalkText(w[0])))
	case len(w) == 0 && s.LastWalkConsistent != nil && !*s.LastWalkConsistent:
		h.Warnings = append(h.Warnings, "the last walk was inconsistent: no removals were marked")
	}
	h.Healthy = len(h.Problems) == 0
	return h
}

// WalkText names an inconsistent walk's reason and pages for people:
// "walk 7: empty_page on page 2", "walk 8: count_mismatch".
func WalkText(o load.WalkOutcome) string {
	reason := o.Reason
	if reason == "" {
		reason = "reason not recorded"
	}
	if len(o.Pages) == 0 {
		return fmt.Sprintf("walk %d: %s", o.WalkID, reason)
	}
	return fmt.Sprintf("walk %d: %s on %s", o.WalkID, reason, PagesText(o.Pages))
}
