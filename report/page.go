package report

import (
	"context"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/money"
)

// maxStatuses is how many card statuses get a line of their own; the rest
// share one ("other").
const maxStatuses = 6

// maxFieldsShown is how many changed fields a changed card lists.
const maxFieldsShown = 8

// page is what the template shows.
type page struct {
	// Account names the account shown; empty when the settings name none.
	Account          string
	Path, Since, Now string
	Days             int
	LastSuccess      string
	// ChartsFrom says where the charts start when the period begins before
	// the warehouse's history.
	ChartsFrom       string
	Current, Removed int64
	Pending          int64

	Latest   *latestView
	Balances []figure
	Statuses figure
	Changes  figure
	Runs     []figure
	RunsNote string

	LastRuns     []runRow
	ChangedCards []changeView
	ChangedTotal int64
	// ReturnedTotal counts the period's returned versions: cards listed
	// again after being marked removed, which are not content changes.
	ReturnedTotal int64
	Rejected      []load.RejectedItem
	RejectedTotal int64
}

type figure struct {
	Title  string
	SVG    template.HTML
	Legend []legendItem
}

type legendItem struct {
	Color int
	Name  string
}

type latestView struct {
	TakenAt        string
	Amounts        []load.NamedAmount
	Applied, Avail string
	Rounded        bool
}

type runRow struct {
	load.Run
	Started, Duration string
	Consistent        string
}

type changeView struct {
	load.CardChange
	When   string
	Shown  []load.FieldChange
	Hidden int
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func day(t time.Time) string { return t.Format(time.DateOnly) }

func cents(v int64) string { return money.FromMinor(v, 2).String() }

func count(v int64) string { return strconv.FormatInt(v, 10) }

// newPage lays out the page of d. It stops with ctx's error, checked
// before each figure and each amount, when ctx is done.
func newPage(ctx context.Context, d load.ReportData) (page, error) {
	p := page{
		Path: d.Path, Since: stamp(d.Since), Now: stamp(d.Now), Days: len(d.Days),
		Current: d.CurrentCards, Removed: d.RemovedCards, Pending: d.PendingRemovals,
		ChangedTotal: d.ChangedCardsTotal, Rejected: d.Rejected, RejectedTotal: d.RejectedTotal,
		LastSuccess: "never",
	}
	if d.LastSuccessAt != nil {
		p.LastSuccess = fmt.Sprintf("%s (run %d, %s before this report)", stamp(*d.LastSuccessAt), d.LastSuccessRun,
			d.Now.Sub(*d.LastSuccessAt).Truncate(time.Minute))
	}
	if l := d.Latest; l != nil {
		v := &latestView{TakenAt: stamp(l.TakenAt), Amounts: l.Amounts, Rounded: l.Rounded, Applied: "null", Avail: "null"}
		if l.AppliedCards != nil {
			v.Applied = count(*l.AppliedCards)
		}
		if l.AvailableToApply != nil {
			v.Avail = count(*l.AvailableToApply)
		}
		p.Latest = v
	}
	if d, p.ChartsFrom = trimToData(d); p.ChartsFrom != "" {
		p.ChartsFrom = "Charts start on " + p.ChartsFrom + ", the first day with data in the period."
	}
	dayLabel := func(i int) string { return d.Days[i].Format("Jan 2") }
	if len(d.Days) > 0 && d.Days[0].Year() != d.Days[len(d.Days)-1].Year() {
		dayLabel = func(i int) string { return d.Days[i].Format("2006-01-02") }
	}
	dayIndex := func(t time.Time) int { return int(t.Sub(d.Days[0]) / (24 * time.Hour)) }
	var err error
	if p.Balances, err = balanceFigures(ctx, d, dayLabel, dayIndex); err != nil {
		return page{}, err
	}
	if err := ctx.Err(); err != nil {
		return page{}, err
	}
	p.Statuses = statusFigure(d, dayLabel)
	if err := ctx.Err(); err != nil {
		return page{}, err
	}
	p.Changes = changeFigure(d, dayLabel, dayIndex)
	for _, c := range d.CardChanges {
		p.ReturnedTotal += c.Returned
	}
	if err := ctx.Err(); err != nil {
		return page{}, err
	}
	p.Runs, p.RunsNote = runFigures(d, dayLabel, dayIndex)
	if err := ctx.Err(); err != nil {
		return page{}, err
	}
	for _, r := range d.LastRuns {
		row := runRow{Run: r, Started: stamp(r.StartedAt), Consistent: "–"}
		end := r.HeartbeatAt
		if r.FinishedAt != nil {
			end = *r.FinishedAt
		}
		row.Duration = end.Sub(r.StartedAt).Round(time.Second).String()
		if r.WalkConsistent != nil {
			row.Consistent = map[bool]string{true: "yes", false: "no"}[*r.WalkConsistent]
		}
		p.LastRuns = append(p.LastRuns, row)
	}
	for _, c := range d.ChangedCards {
		v := changeView{CardChange: c, When: stamp(c.At), Shown: c.Fields}
		if len(c.Fields) > maxFieldsShown {
			v.Shown, v.Hidden = c.Fields[:maxFieldsShown], len(c.Fields)-maxFieldsShown
		}
		p.ChangedCards = append(p.ChangedCards, v)
	}
	return p, nil
}

func balanceFigures(ctx context.Context, d load.ReportData, dayLabel func(int) string, dayIndex func(time.Time) int) ([]figure, error) {
	var out []figure
	for _, name := range load.AmountNames() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var days []load.BalanceDay
		for _, b := range d.Balances {
			if b.Amount == name {
				days = append(days, b)
			}
		}
		if len(days) == 0 {
			continue
		}
		c := &chart{id: "bal-" + name, title: name + " per day", slots: len(d.Days), slotLabel: dayLabel, yLabel: cents}
		line := lineSeries{color: 1}
		band := bandSeries{color: 1}
		lo, hi := days[0], days[0]
		for _, b := range days {
			i := dayIndex(b.Day)
			line.points = append(line.points, slotValue{i, b.Last})
			band.points = append(band.points, slotRange{i, b.Min, b.Max})
			if b.Min < lo.Min {
				lo = b
			}
			if b.Max > hi.Max {
				hi = b
			}
		}
		c.lines, c.bands = []lineSeries{line}, []bandSeries{band}
		first, last := days[0], days[len(days)-1]
		c.desc = fmt.Sprintf("%s over %d days with snapshots: %s at the start of %s, %s at the end of %s; lowest %s on %s, highest %s on %s. The line is each day's last value, the band its lowest to highest.",
			name, len(days), first.FirstText, day(first.Day), last.LastText, day(last.Day), lo.MinText, day(lo.Day), hi.MaxText, day(hi.Day))
		out = append(out, figure{Title: name, SVG: c.svg(), Legend: []legendItem{{1, "last value of the day"}, {1, "lowest to highest (band)"}}})
	}
	return out, nil
}

func statusFigure(d load.ReportData, dayLabel func(int) string) figure {
	c := &chart{id: "statuses", title: "Current cards by status, at the end of each day", slots: len(d.Days),
		slotLabel: dayLabel, yLabel: count, zero: true}
	var legend []legendItem
	var desc []string
	var other []int64
	for i, st := range d.Statuses {
		counts := d.StatusCounts[i]
		if i >= maxStatuses-1 && len(d.Statuses) > maxStatuses {
			if other == nil {
				other = make([]int64, len(counts))
			}
			for j, n := range counts {
				other[j] += n
			}
			continue
		}
		c.lines = append(c.lines, countLine(i+1, counts))
		legend = append(legend, legendItem{i + 1, st})
		desc = append(desc, fmt.Sprintf("%s %d", st, counts[len(counts)-1]))
	}
	if other != nil {
		c.lines = append(c.lines, countLine(maxStatuses, other))
		legend = append(legend, legendItem{maxStatuses, "other statuses"})
		desc = append(desc, fmt.Sprintf("other %d", other[len(other)-1]))
	}
	c.desc = "Cards listed at the end of the last day, by status: " + strings.Join(desc, ", ") + "."
	if len(desc) == 0 {
		c.desc = "No card in this period."
	}
	return figure{Title: c.title, SVG: c.svg(), Legend: legend}
}

func countLine(color int, counts []int64) lineSeries {
	s := lineSeries{color: color}
	for i, n := range counts {
		s.points = append(s.points, slotValue{i, n})
	}
	return s
}

func changeFigure(d load.ReportData, dayLabel func(int) string, dayIndex func(time.Time) int) figure {
	n := len(d.Days)
	series := [4][]int64{make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)}
	var tot [4]int64
	for _, ch := range d.CardChanges {
		i := dayIndex(ch.Day)
		if i < 0 || i >= n {
			continue
		}
		for k, v := range []int64{ch.New, ch.Changed, ch.Removed, ch.Returned} {
			series[k][i] += v
			tot[k] += v
		}
	}
	c := &chart{id: "changes", title: "Cards new, changed, removed and returned per day", slots: n, slotLabel: dayLabel, yLabel: count, zero: true}
	names := []string{"new", "changed", "removed", "returned"}
	colors := []int{3, 1, 4, 5}
	var legend []legendItem
	for k := range series {
		c.bars = append(c.bars, barSeries{color: colors[k], values: series[k]})
		legend = append(legend, legendItem{colors[k], names[k]})
	}
	c.desc = fmt.Sprintf("Over the period: %d new, %d changed, %d removed, %d returned.", tot[0], tot[1], tot[2], tot[3])
	if tot == [4]int64{} {
		c.bars = nil
	}
	return figure{Title: c.title, SVG: c.svg(), Legend: legend}
}

// outcomeColor is the palette index of a run outcome.
func outcomeColor(status string) int {
	switch status {
	case load.StatusSucceeded:
		return 3
	case load.StatusFailed:
		return 4
	case load.StatusInterrupted:
		return 2
	case load.StatusAbandoned:
		return 5
	}
	return 6
}

func outcomeLegend() []legendItem {
	return []legendItem{{3, "succeeded"}, {4, "failed"}, {2, "interrupted"}, {5, "abandoned"}, {6, "running"}}
}

func problemLegend() []legendItem {
	return []legendItem{{2, "429 answers"}, {5, "rejected items"}, {4, "held removals"}}
}

// runOutcomes lists the statuses of runs in the order the charts stack
// and name them.
func runOutcomes() []string {
	return []string{load.StatusSucceeded, load.StatusFailed, load.StatusInterrupted, load.StatusAbandoned, load.StatusRunning}
}

// runFigures draws the runs' charts and says what a bar stands for: one
// bar per run when the period's runs are few enough to list, else one per
// day.
func runFigures(d load.ReportData, dayLabel func(int) string, dayIndex func(time.Time) int) ([]figure, string) {
	if d.RunPoints != nil {
		return perRunFigures(d.RunPoints), "One bar per run."
	}
	return perDayFigures(d, dayLabel, dayIndex), fmt.Sprintf("More than %d runs in the period: one bar per day.", load.ReportRunPoints)
}

// perRunFigures draws each run's duration, by outcome, and its problems.
func perRunFigures(points []load.RunPoint) []figure {
	n := len(points)
	label := func(i int) string { return "#" + count(points[i].ID) }
	dur := &chart{id: "run-duration", title: "Duration of each run, by outcome (seconds)", slots: n, slotLabel: label, yLabel: count, zero: true}
	probs := &chart{id: "run-problems", title: "429 answers, rejected items and held removals per run", slots: n, slotLabel: label, yLabel: count, zero: true}
	by := map[string][]int64{}
	prob := [3][]int64{make([]int64, n), make([]int64, n), make([]int64, n)}
	tally := map[string]int{}
	var longest load.RunPoint
	for i, r := range points {
		if by[r.Status] == nil {
			by[r.Status] = make([]int64, n)
		}
		by[r.Status][i] = max(r.Seconds, 1)
		prob[0][i], prob[1][i], prob[2][i] = r.RateLimited, r.Rejected, r.RemovalsHeld
		tally[r.Status]++
		if r.Seconds > longest.Seconds {
			longest = r
		}
	}
	var parts []string
	for _, o := range runOutcomes() {
		if by[o] != nil {
			dur.bars = append(dur.bars, barSeries{color: outcomeColor(o), values: by[o]})
			parts = append(parts, fmt.Sprintf("%d %s", tally[o], o))
		}
	}
	dur.desc = fmt.Sprintf("%d runs: %s; the longest, run %d, took %d s.", n, strings.Join(parts, ", "), longest.ID, longest.Seconds)
	probs.desc = problemDesc(prob)
	probs.bars = problemBars(prob)
	return []figure{
		{Title: dur.title, SVG: dur.svg(), Legend: outcomeLegend()},
		{Title: probs.title, SVG: probs.svg(), Legend: problemLegend()},
	}
}

// perDayFigures draws the runs per day, by outcome, each day's longest run
// and each day's problems.
func perDayFigures(d load.ReportData, dayLabel func(int) string, dayIndex func(time.Time) int) []figure {
	outcomes := runOutcomes()
	n := len(d.Days)
	byDay := &chart{id: "run-outcomes", title: "Runs per day, by outcome", slots: n, slotLabel: dayLabel, yLabel: count, zero: true}
	longest := &chart{id: "run-longest", title: "Longest run of each day (seconds)", slots: n, slotLabel: dayLabel, yLabel: count, zero: true}
	probs := &chart{id: "run-problems", title: "429 answers, rejected items and held removals per day", slots: n, slotLabel: dayLabel, yLabel: count, zero: true}
	vals := map[string][]int64{}
	for _, o := range outcomes {
		vals[o] = make([]int64, n)
	}
	prob := [3][]int64{make([]int64, n), make([]int64, n), make([]int64, n)}
	line := lineSeries{color: 1}
	var tot [5]int64
	var maxDay load.RunDay
	for _, r := range d.RunDays {
		i := dayIndex(r.Day)
		if i < 0 || i >= n {
			continue
		}
		for k, v := range []int64{r.Succeeded, r.Failed, r.Interrupted, r.Abandoned, r.Running} {
			vals[outcomes[k]][i] = v
			tot[k] += v
		}
		prob[0][i], prob[1][i], prob[2][i] = r.RateLimited, r.Rejected, r.RemovalsHeld
		line.points = append(line.points, slotValue{i, r.MaxSeconds})
		if r.MaxSeconds > maxDay.MaxSeconds {
			maxDay = r
		}
	}
	for _, o := range outcomes {
		byDay.bars = append(byDay.bars, barSeries{color: outcomeColor(o), values: vals[o]})
	}
	if tot == [5]int64{} {
		byDay.bars = nil
	}
	byDay.desc = fmt.Sprintf("Runs in the period: %d succeeded, %d failed, %d interrupted, %d abandoned, %d running.", tot[0], tot[1], tot[2], tot[3], tot[4])
	longest.lines = []lineSeries{line}
	longest.desc = fmt.Sprintf("The longest run took %d s, on %s.", maxDay.MaxSeconds, day(maxDay.Day))
	probs.bars = problemBars(prob)
	probs.desc = problemDesc(prob)
	return []figure{
		{Title: byDay.title, SVG: byDay.svg(), Legend: outcomeLegend()},
		{Title: longest.title, SVG: longest.svg(), Legend: []legendItem{{1, "longest run"}}},
		{Title: probs.title, SVG: probs.svg(), Legend: problemLegend()},
	}
}

func problemBars(prob [3][]int64) []barSeries {
	var some bool
	for _, s := range prob {
		for _, v := range s {
			some = some || v != 0
		}
	}
	if !some {
		// An empty chart says "no data"; zeros are data here.
		return []barSeries{{color: 2, values: make([]int64, len(prob[0]))}}
	}
	return []barSeries{{color: 2, values: prob[0]}, {color: 5, values: prob[1]}, {color: 4, values: prob[2]}}
}

func problemDesc(prob [3][]int64) string {
	var sums [3]int64
	for k, s := range prob {
		for _, v := range s {
			sums[k] += v
		}
	}
	return fmt.Sprintf("Over the period: %d answers 429 Too Many Requests, %d items rejected, %d removals held by the guard.", sums[0], sums[1], sums[2])
}

// trimToData drops the days of the period before the first one with any
// data (a snapshot, a card version, a run or a listed card), so that a
// young warehouse does not draw its history squeezed against the right
// edge. It returns the first day kept when it dropped any.
func trimToData(d load.ReportData) (load.ReportData, string) {
	if len(d.Days) == 0 {
		return d, ""
	}
	k := len(d.Days)
	see := func(t time.Time) { k = min(k, int(t.Sub(d.Days[0])/(24*time.Hour))) }
	for _, b := range d.Balances {
		see(b.Day)
	}
	for _, c := range d.CardChanges {
		see(c.Day)
	}
	for _, r := range d.RunDays {
		see(r.Day)
	}
	for _, counts := range d.StatusCounts {
		for i, n := range counts[:k] {
			if n != 0 {
				k = i
				break
			}
		}
	}
	if k <= 0 || k >= len(d.Days) {
		return d, ""
	}
	d.Days = d.Days[k:]
	trimmed := make([][]int64, len(d.StatusCounts))
	for i, counts := range d.StatusCounts {
		trimmed[i] = counts[k:]
	}
	d.StatusCounts = trimmed
	return d, day(d.Days[0])
}
