package report

import (
	"context"
	"fmt"
	"strings"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
)

// Palette indices (the page's --c1 … --c8: the Okabe–Ito colours, which
// colour-blind readers tell apart, their lightness moved apart, for light
// and dark mode). Within a chart each series has its own, and their CIE
// L* differ by 9 or more in either mode (TestPaletteLightness), so the
// charts read in greyscale too; lines also differ by dash pattern.
const (
	cBlue      = 1
	cOrange    = 2
	cGreen     = 3
	cVermilion = 4
	cPurple    = 5
	cSky       = 6
	cBlack     = 7 // black (dark grey in dark mode)
	cYellow    = 8
)

// amountText is a tick of an amount in cents.
func amountText(v int64) string { return cents(v) }

// unchangedAmount is an amount that held one value over every snapshot
// of the period: a line of text, not a flat chart.
type unchangedAmount struct {
	Name, Value string
	Snapshots   int64
}

// Note says over what it held: "unchanged over 4 snapshots", or "1
// snapshot".
func (u unchangedAmount) Note() string {
	if u.Snapshots == 1 {
		return "1 snapshot"
	}
	return fmt.Sprintf("unchanged over %d snapshots", u.Snapshots)
}

// balanceFigures draws a chart of each amount that moved in the period
// and lists those that did not (unchanged), in AmountNames' order.
func balanceFigures(ctx context.Context, t timeline) ([]figure, []unchangedAmount, error) {
	var out []figure
	var flat []unchangedAmount
	for _, name := range load.AmountNames() {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		var rows []load.BalanceDay
		for _, b := range t.balances {
			if b.Amount == name && b.Slot >= 0 && b.Slot < t.slots {
				rows = append(rows, b)
			}
		}
		if len(rows) == 0 {
			continue
		}
		if u, ok := unchanged(name, rows); ok {
			flat = append(flat, u)
			continue
		}
		out = append(out, balanceFigure(t, name, rows))
	}
	return out, flat, nil
}

// unchanged reports whether rows (one amount's slots) hold one value
// throughout, and that value with the number of snapshots.
func unchanged(name string, rows []load.BalanceDay) (unchangedAmount, bool) {
	u := unchangedAmount{Name: name, Value: rows[0].FirstText}
	for _, b := range rows {
		if b.Min != rows[0].Min || b.Max != rows[0].Min {
			return unchangedAmount{}, false
		}
		u.Snapshots += max(b.Snapshots, 1) // a slot with a value has a snapshot
	}
	return u, true
}

func balanceFigure(t timeline, name string, rows []load.BalanceDay) figure {
	c := &chart{id: "bal-" + name, title: name + " " + t.slotName(), unit: "amount", slots: t.slots, slotLabel: t.label, yLabel: amountText}
	line := lineSeries{color: cBlue}
	band := bandSeries{color: cOrange}
	lo, hi := rows[0], rows[0]
	for _, b := range rows {
		line.points = append(line.points, slotValue{b.Slot, b.Last})
		band.points = append(band.points, slotRange{b.Slot, b.Min, b.Max})
		if b.Min < lo.Min {
			lo = b
		}
		if b.Max > hi.Max {
			hi = b
		}
	}
	c.lines, c.bands = []lineSeries{line}, []bandSeries{band}
	first, last := rows[0], rows[len(rows)-1]
	at := func(b load.BalanceDay) string { return t.noun + " " + t.label(b.Slot) }
	c.desc = fmt.Sprintf("%s over %s with snapshots: %s at the start of %s, %s at the end of %s; lowest %s in %s, highest %s in %s. The line is each %s's last value",
		name, english.Count(len(rows), t.noun), first.FirstText, at(first), last.LastText, at(last), lo.MinText, at(lo), hi.MaxText, at(hi), t.noun)
	legend := []legendItem{{cBlue, "last value of the " + t.noun, true}}
	if band.hasWidth() {
		legend = append(legend, legendItem{cOrange, "lowest to highest (band)", false})
		c.desc += ", the band its lowest to highest."
	} else {
		c.desc += "; it never moved " + t.within() + "."
	}
	return figure{Title: c.title, SVG: c.svg(), Legend: legend}
}

// statusColors are the status lines' colours, the last for "other".
var statusColors = [maxStatuses]int{cBlue, cOrange, cGreen, cVermilion, cPurple, cBlack}

func statusFigure(t timeline) figure {
	c := &chart{id: "statuses", title: "Current cards by status, " + t.endName(), unit: "cards", slots: t.slots,
		slotLabel: t.label, yLabel: count, zero: true}
	var legend []legendItem
	var desc []string
	var other []int64
	for i, st := range t.statuses {
		counts := t.counts[i]
		if i >= maxStatuses-1 && len(t.statuses) > maxStatuses {
			if other == nil {
				other = make([]int64, len(counts))
			}
			for j, n := range counts {
				other[j] += n
			}
			continue
		}
		c.lines = append(c.lines, countLine(statusColors[i], counts))
		legend = append(legend, legendItem{statusColors[i], st, true})
		desc = append(desc, fmt.Sprintf("%s %d", st, counts[len(counts)-1]))
	}
	if other != nil {
		c.lines = append(c.lines, countLine(statusColors[maxStatuses-1], other))
		legend = append(legend, legendItem{statusColors[maxStatuses-1], "other statuses", true})
		desc = append(desc, fmt.Sprintf("other %d", other[len(other)-1]))
	}
	c.desc = "Cards listed at the end, by status: " + strings.Join(desc, ", ") + "."
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

// changeFigure draws the card versions per slot; with runs in the period
// (hasRuns), a period without any change draws zeros, not "no data".
func changeFigure(t timeline, hasRuns bool) figure {
	n := t.slots
	series := [4][]int64{make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)}
	var tot [4]int64
	for _, ch := range t.changes {
		i := ch.Slot
		if i < 0 || i >= n {
			continue
		}
		for k, v := range []int64{ch.New, ch.Changed, ch.Removed, ch.Returned} {
			series[k][i] += v
			tot[k] += v
		}
	}
	c := &chart{id: "changes", title: "Cards new, changed, removed and returned " + t.slotName(), unit: "cards", slots: n,
		slotLabel: t.label, yLabel: count, zero: true}
	names := []string{"new", "changed", "removed", "returned"}
	colors := []int{cSky, cBlack, cVermilion, cYellow}
	var legend []legendItem
	for k := range series {
		c.bars = append(c.bars, barSeries{color: colors[k], values: series[k]})
		legend = append(legend, legendItem{colors[k], names[k], false})
	}
	c.desc = fmt.Sprintf("Over the period: %d new, %d changed, %d removed, %d returned.", tot[0], tot[1], tot[2], tot[3])
	if tot == [4]int64{} && !hasRuns {
		c.bars = nil
	}
	return figure{Title: c.title, SVG: c.svg(), Legend: legend}
}
