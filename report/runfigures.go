package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
)

// outcomeColor is the palette index of a run outcome.
func outcomeColor(status string) int {
	switch status {
	case load.StatusSucceeded:
		return cSky
	case load.StatusFailed:
		return cVermilion
	case load.StatusInterrupted:
		return cPurple
	case load.StatusAbandoned:
		return cBlack
	}
	return cYellow
}

func outcomeLegend() []legendItem {
	var out []legendItem
	for _, o := range runOutcomes() {
		out = append(out, legendItem{outcomeColor(o), o, false})
	}
	return out
}

// problemColors are the colours of 429 answers, rejected items and held
// removals.
var problemColors = [3]int{cYellow, cPurple, cBlack}

func problemLegend() []legendItem {
	return []legendItem{{problemColors[0], "429 answers", false}, {problemColors[1], "rejected items", false}, {problemColors[2], "held removals", false}}
}

// runOutcomes lists the statuses of runs in the order the charts stack
// and name them.
func runOutcomes() []string {
	return []string{load.StatusSucceeded, load.StatusFailed, load.StatusInterrupted, load.StatusAbandoned, load.StatusRunning}
}

// secondsTick is a tick of milliseconds as seconds, exactly ("1.5").
func secondsTick(ms int64) string {
	return strings.TrimSuffix(strings.TrimRight(strings.TrimSuffix(millis(ms), " s"), "0"), ".")
}

// runFigures draws the runs' charts on the other charts' slots and says
// what a bar stands for: one bar per run (load.FineRun), per bucket
// (load.FineBucket) or per day.
func runFigures(d load.ReportData) ([]figure, string) {
	if f := d.Fine; f != nil && f.Unit == load.FineRun && len(d.RunPoints) > 0 {
		return perRunFigures(d.RunPoints), "One bar per run. A run's duration is as measured, to the millisecond (runs recorded before schema version 14: from their stamps, in whole seconds)."
	}
	if f := d.Fine; f != nil && f.Unit == load.FineBucket {
		t := fineTimeline(f)
		return perSlotFigures(f.RunHours, t), fmt.Sprintf("More than %d runs in the period: one bar per %s, UTC.", load.ReportFineRuns, t.per)
	}
	t := newTimeline(load.ReportData{Days: d.Days})
	var rows []load.RunDay
	for _, r := range d.RunDays {
		if len(d.Days) > 0 {
			r.Slot = int(r.Day.Sub(d.Days[0]) / (24 * time.Hour))
			rows = append(rows, r)
		}
	}
	return perSlotFigures(rows, t), fmt.Sprintf("More than %d runs in the period: one bar per day.", load.ReportFineRuns)
}

// perRunFigures draws each run's duration, by outcome, and its problems.
func perRunFigures(points []load.RunPoint) []figure {
	n := len(points)
	label := func(i int) string { return "#" + count(points[i].ID) }
	dur := &chart{id: "run-duration", title: "Duration of each run, by outcome", unit: "s", slots: n, slotLabel: label, yLabel: secondsTick, zero: true}
	probs := &chart{id: "run-problems", title: "429 answers, rejected items and held removals per run", unit: "count", slots: n, slotLabel: label, yLabel: count, zero: true}
	by := map[string][]int64{}
	prob := [3][]int64{make([]int64, n), make([]int64, n), make([]int64, n)}
	tally := map[string]int{}
	longest := points[0]
	for i, r := range points {
		if by[r.Status] == nil {
			by[r.Status] = make([]int64, n)
		}
		by[r.Status][i] = r.Millis
		prob[0][i], prob[1][i], prob[2][i] = r.RateLimited, r.Rejected, r.RemovalsHeld
		tally[r.Status]++
		if r.Millis > longest.Millis || longest.Unknown && !r.Unknown {
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
	dur.desc = fmt.Sprintf("%s: %s; the longest, run %d, took %s.", english.Count(n, "run"), strings.Join(parts, ", "),
		longest.ID, runSpan(longest.Millis, longest.Exact))
	if longest.Unknown {
		dur.desc = fmt.Sprintf("%s: %s; no duration is known (abandoned without one).", english.Count(n, "run"), strings.Join(parts, ", "))
	}
	probs.desc = problemDesc(prob)
	probs.bars = problemBars(prob)
	legend := outcomeLegend()
	return []figure{
		{Title: dur.title, SVG: dur.svg(), Legend: legend},
		{Title: probs.title, SVG: probs.svg(), Legend: problemLegend()},
	}
}

// perSlotFigures draws the runs per day or hour (rows with their Slot on
// t), by outcome, each slot's longest run and each slot's problems.
func perSlotFigures(rows []load.RunDay, t timeline) []figure {
	outcomes := runOutcomes()
	n := t.slots
	byDay := &chart{id: "run-outcomes", title: "Runs " + t.slotName() + ", by outcome", unit: "runs", slots: n, slotLabel: t.label, yLabel: count, zero: true}
	longest := &chart{id: "run-longest", title: "Longest run of each " + t.noun, unit: "s", slots: n, slotLabel: t.label, yLabel: secondsTick, zero: true}
	probs := &chart{id: "run-problems", title: "429 answers, rejected items and held removals " + t.slotName(), unit: "count", slots: n, slotLabel: t.label, yLabel: count, zero: true}
	vals := map[string][]int64{}
	for _, o := range outcomes {
		vals[o] = make([]int64, n)
	}
	prob := [3][]int64{make([]int64, n), make([]int64, n), make([]int64, n)}
	line := lineSeries{color: cBlue}
	var tot [5]int64
	var maxDay load.RunDay
	for _, r := range rows {
		i := r.Slot
		if i < 0 || i >= n {
			continue
		}
		for k, v := range []int64{r.Succeeded, r.Failed, r.Interrupted, r.Abandoned, r.Running} {
			vals[outcomes[k]][i] = v
			tot[k] += v
		}
		prob[0][i], prob[1][i], prob[2][i] = r.RateLimited, r.Rejected, r.RemovalsHeld
		line.points = append(line.points, slotValue{i, r.MaxMillis})
		if r.MaxMillis > maxDay.MaxMillis || maxDay.Day.IsZero() {
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
	longest.desc = "No run in the period."
	if !maxDay.Day.IsZero() {
		longest.desc = fmt.Sprintf("The longest run took %s, in %s %s.", runSpan(maxDay.MaxMillis, maxDay.MaxExact), t.noun, t.label(maxDay.Slot))
	}
	probs.bars = problemBars(prob)
	probs.desc = problemDesc(prob)
	return []figure{
		{Title: byDay.title, SVG: byDay.svg(), Legend: outcomeLegend()},
		{Title: longest.title, SVG: longest.svg(), Legend: []legendItem{{cBlue, "longest run", true}}},
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
		return []barSeries{{color: problemColors[0], values: make([]int64, len(prob[0]))}}
	}
	return []barSeries{{color: problemColors[0], values: prob[0]}, {color: problemColors[1], values: prob[1]}, {color: problemColors[2], values: prob[2]}}
}

func problemDesc(prob [3][]int64) string {
	var sums [3]int64
	for k, s := range prob {
		for _, v := range s {
			sums[k] += v
		}
	}
	return fmt.Sprintf("Over the period: %s 429 Too Many Requests, %s rejected, %s held by the guard.",
		english.Count(sums[0], "answer"), english.Count(sums[1], "item"), english.Count(sums[2], "removal"))
}
