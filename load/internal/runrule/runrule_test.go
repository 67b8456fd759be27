package runrule

import (
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

func TestRunRules(t *testing.T) {
	for _, tr := range []string{load.TriggerSchedule, load.TriggerBackfill, load.TriggerDemo} {
		if err := CheckTrigger(tr); err != nil {
			t.Errorf("CheckTrigger(%q) = %v", tr, err)
		}
	}
	if err := CheckTrigger("cron"); err == nil {
		t.Error("CheckTrigger accepted cron")
	}
	if err := CheckFinishStatus(load.StatusRunning); err == nil {
		t.Error("CheckFinishStatus accepted running")
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.FixedZone("x", 3600))
	if got, want := StaleCutoff(now, time.Minute), now.UTC().Add(-time.Minute); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("StaleCutoff(1m) = %v, want %v in UTC", got, want)
	}
	if got := StaleCutoff(now, 0); got.Year() != 9999 {
		t.Errorf("StaleCutoff(0) = %v: want the end of time (every running run is dead)", got)
	}
	runs := []load.StaleRun{{ID: 3}, {ID: 1}, {ID: 2}}
	SortStaleRuns(runs)
	if runs[0].ID != 1 || runs[2].ID != 3 {
		t.Errorf("SortStaleRuns: %v", runs)
	}
}
