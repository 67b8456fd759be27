package report

import (
	"time"

	"github.com/cardsync/cardsync/load"
)

// timeline is the x axis of the balance and card charts, with their data
// on it: one slot per day, or, for a short period (load.FineData), one per
// run or per hour.
type timeline struct {
	// per names a slot: "day", "hour" or "run".
	per   string
	slots int
	label func(i int) string
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
	t := timeline{per: "day", slots: len(d.Days), statuses: d.Statuses, counts: d.StatusCounts,
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
	t := timeline{per: f.Unit, slots: len(f.Starts), balances: f.Balances, statuses: f.Statuses, counts: f.StatusCounts,
		changes: f.CardChanges}
	switch f.Unit {
	case load.FineRun:
		t.label = func(i int) string { return "#" + count(f.Runs[i]) }
		t.note = "Less than 3 days of data: charts show one point per run (the account's last value by the run's end, and its lowest to highest as a band); the table above is exact."
	default:
		t.label = func(i int) string {
			h := f.Starts[i]
			if i == 0 || h.Hour() == 0 {
				return h.Format("Jan 2 15h")
			}
			return h.Format("15h")
		}
		t.note = "Less than 3 days of data: charts show one point per UTC hour (the hour's last value, and its lowest to highest as a band); the table above is exact."
	}
	return t
}

// slotName says what a slot is in a chart's title: "per day", "per run".
func (t timeline) slotName() string { return "per " + t.per }

// endName says when a slot ends, for the status chart's title.
func (t timeline) endName() string {
	if t.per == load.FineRun {
		return "after each run"
	}
	return "at the end of each " + t.per
}
