package report

import (
	"fmt"
	"time"

	"github.com/cardsync/cardsync/load"
)

// timeline is the x axis of the balance and card charts, with their data
// on it: one slot per day, or (load.FineData) one per run or per bucket.
type timeline struct {
	// per names a slot after "per": "day", "run", "5 min"; noun as a
	// noun: "day", "run", "5-min slot".
	per, noun string
	slots     int
	label     func(i int) string
	// balances and changes carry their slot (Slot).
	balances []load.BalanceDay
	statuses []string
	counts   [][]int64
	changes  []load.ChangeDay
	// note says what a point stands for, under the balance charts.
	note string
}

// newTimeline is d's axis: its finer slots when it has them, else its
// days from the first with data (trimToData).
func newTimeline(d load.ReportData) timeline {
	if f := d.Fine; f != nil && len(f.Starts) > 0 {
		return fineTimeline(f)
	}
	t := timeline{per: "day", noun: "day", slots: len(d.Days), statuses: d.Statuses, counts: d.StatusCounts,
		note: "Charts show one point per UTC day (the day's last value, and its lowest to highest as a band); the table above is exact."}
	t.label = func(i int) string { return d.Days[i].Format("Jan 2") }
	if len(d.Days) > 0 && d.Days[0].Year() != d.Days[len(d.Days)-1].Year() {
		t.label = func(i int) string { return d.Days[i].Format("2006-01-02") }
	}
	index := func(at time.Time) int {
		if len(d.Days) == 0 {
			return -1
		}
		return int(at.Sub(d.Days[0]) / (24 * time.Hour))
	}
	for _, b := range d.Balances {
		b.Slot = index(b.Day)
		t.balances = append(t.balances, b)
	}
	for _, c := range d.CardChanges {
		c.Slot = index(c.Day)
		t.changes = append(t.changes, c)
	}
	return t
}

func fineTimeline(f *load.FineData) timeline {
	t := timeline{per: f.Unit, noun: f.Unit, slots: len(f.Starts), balances: f.Balances, statuses: f.Statuses, counts: f.StatusCounts,
		changes: f.CardChanges}
	if f.Unit == load.FineRun {
		t.label = func(i int) string { return "#" + count(f.Runs[i]) }
		t.note = fmt.Sprintf("With at most %d runs in the period, charts show one point per run (the account's last value by the run's end, and its lowest to highest as a band); the table above is exact.", load.ReportFineRuns)
		return t
	}
	t.per, t.noun = bucketNames(f.Bucket)
	t.label = bucketLabel(f)
	t.note = fmt.Sprintf("Charts show one point per %s, UTC, from the first run's (its last value, and its lowest to highest as a band); the table above is exact.", t.per)
	return t
}

// bucketNames name a bucket of b: after "per" ("5 min", "hour") and as a
// noun ("5-min slot", "hour").
func bucketNames(b time.Duration) (per, noun string) {
	switch b {
	case time.Second:
		return "second", "second"
	case time.Minute:
		return "minute", "minute"
	case time.Hour:
		return "hour", "hour"
	case 24 * time.Hour:
		return "day", "day"
	}
	if b < time.Minute {
		n := int64(b / time.Second)
		return count(n) + " s", count(n) + "-s slot"
	}
	if b < time.Hour {
		n := int64(b / time.Minute)
		return count(n) + " min", count(n) + "-min slot"
	}
	n := int64(b / time.Hour)
	return count(n) + " h", count(n) + "-h slot"
}

// bucketLabel labels f's buckets: days as "Jan 2", times of day as
// "15:04" (with seconds under a minute), the first and each at midnight
// with their day.
func bucketLabel(f *load.FineData) func(i int) string {
	return func(i int) string {
		h := f.Starts[i]
		switch {
		case f.Bucket >= 24*time.Hour:
			return h.Format("Jan 2")
		case f.Bucket < time.Minute:
			if i == 0 || h.Hour()+h.Minute()+h.Second() == 0 {
				return h.Format("Jan 2 15:04:05")
			}
			return h.Format("15:04:05")
		case i == 0 || h.Hour()+h.Minute() == 0:
			return h.Format("Jan 2 15:04")
		}
		return h.Format("15:04")
	}
}

// slotName says what a slot is in a chart's title: "per day", "per run",
// "per 5 min".
func (t timeline) slotName() string { return "per " + t.per }

// endName says when a slot ends, for the status chart's title.
func (t timeline) endName() string {
	if t.per == load.FineRun {
		return "after each run"
	}
	return "at the end of each " + t.noun
}

// within is "within a day", "within an hour".
func (t timeline) within() string {
	if t.noun == "hour" {
		return "within an hour"
	}
	return "within a " + t.noun
}
