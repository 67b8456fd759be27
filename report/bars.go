package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// A bar chart's y axis is cut when a few bars tower over the rest: a
// backfill's hundreds of new cards beside the few changes of each later
// run would otherwise leave every later bar a sliver. The axis then ends
// at the tallest bar left whole, and the bars above it (at most half of
// the bars with a value) are drawn broken: up past the axis's top, with a
// break mark across them and their exact value written above.
const (
	// cutRatio: the axis is cut when a bar would be drawn under
	// 1/cutRatio of the height of the bars above it. Without a cut the
	// second-tallest bar is at least 1/cutRatio of the tallest.
	cutRatio = 4
	// cutRoom is the room added above the plot for the broken bars' tops
	// and their values.
	cutRoom = 20
	// cutOver is how far a broken bar goes past the axis's top.
	cutOver = 16
)

// barCut says where a bar chart's axis is cut: top is the axis's value at
// its top, broken marks the slots whose bars go past it (nil: no cut).
type barCut struct {
	top    int64
	broken []bool
	totals []int64
}

func (c barCut) on() bool { return c.broken != nil }

// barCut returns the chart's cut: for a chart of bars alone, none
// negative, the fewest tallest bars (k, at most half of the bars with a
// value) such that the tallest of the others is under 1/cutRatio of the
// shortest of them; no cut when there are none.
func (c *chart) barCut() barCut {
	if len(c.bars) == 0 || len(c.lines) > 0 || len(c.bands) > 0 || c.slots == 0 {
		return barCut{}
	}
	totals := make([]int64, c.slots)
	for _, s := range c.bars {
		for i, v := range s.values {
			if v < 0 {
				return barCut{}
			}
			totals[i] = satAdd(totals[i], v)
		}
	}
	var sorted []int64
	for _, v := range totals {
		if v > 0 {
			sorted = append(sorted, v)
		}
	}
	slices.SortFunc(sorted, func(a, b int64) int { return cmp.Compare(b, a) })
	for k := 1; 2*k <= len(sorted); k++ {
		// sorted[k] < sorted[k-1]/cutRatio, in integers, without overflow.
		if sorted[k] < ceilDiv(sorted[k-1], cutRatio) {
			cut := barCut{top: sorted[k], broken: make([]bool, c.slots), totals: totals}
			for i, v := range totals {
				cut.broken[i] = v > cut.top
			}
			return cut
		}
	}
	return barCut{}
}

// cutDesc says what the cut does, for the chart's description.
func (c *chart) cutDesc(cut barCut) string {
	var bars []string
	for i, b := range cut.broken {
		if b {
			bars = append(bars, fmt.Sprintf("%s (%s)", c.slotLabel(i), c.yLabel(cut.totals[i])))
		}
	}
	n := len(bars)
	if n > 3 {
		bars = append(bars[:3], fmt.Sprintf("%d more", n-3))
	}
	what := "the bar of " + bars[0] + " is"
	if n > 1 {
		what = "the bars of " + strings.Join(bars, ", ") + " are"
	}
	return fmt.Sprintf(" The axis stops at %s so that the other bars stay readable: %s drawn broken past it, with %s value above.",
		c.yLabel(cut.top), what, map[bool]string{true: "their", false: "its"}[n > 1])
}

// drawBars draws the bar series stacked per slot, positive values up from
// 0 and negative ones down; a broken bar (cut) is drawn up to cutOver
// past the axis's top, its parts above that not at all.
func (c *chart) drawBars(b *strings.Builder, p plot, cut barCut) {
	if len(c.bars) == 0 {
		return
	}
	base := p.y(0)
	pos := make([]int64, c.slots)
	neg := make([]int64, c.slots)
	w := max(p.slotW*0.8, 0.6)
	y := func(i int, v int64) float64 {
		if cut.on() && cut.broken[i] && v > p.hi {
			return float64(p.top - cutOver)
		}
		return p.y(v)
	}
	for _, s := range c.bars {
		var d strings.Builder
		for i, v := range s.values {
			if v == 0 {
				continue
			}
			var from, to int64
			if v > 0 {
				from, to = pos[i], satAdd(pos[i], v)
				pos[i] = to
			} else {
				from, to = neg[i], satAdd(neg[i], v)
				neg[i] = to
			}
			y0, y1 := y(i, from), y(i, to)
			if from == 0 {
				y0 = base
			}
			if y0 == y1 && from != to && cut.on() && cut.broken[i] {
				continue // all of it past the broken bar's top
			}
			fmt.Fprintf(&d, "M%s %sV%sh%sV%sz", num(p.x(i)-w/2), num(y0), num(y1), num(w), num(y0))
		}
		if d.Len() > 0 {
			fmt.Fprintf(b, `<path class="f%d" d="%s"/>`, s.color, d.String())
		}
	}
}

// drawCuts draws the break mark across each broken bar, between the
// axis's top and the bar's, and the bar's value above it (when it fits the
// slot; the title and the chart's description always say it).
func (c *chart) drawCuts(b *strings.Builder, p plot, cut barCut) {
	if !cut.on() {
		return
	}
	w := max(p.slotW*0.8, 0.6)
	mid := float64(p.top) - float64(cutOver)/2
	for i, broken := range cut.broken {
		if !broken {
			continue
		}
		x0, x1 := p.x(i)-w/2-1, p.x(i)+w/2+1
		value := c.yLabel(cut.totals[i])
		fmt.Fprintf(b, `<g class="cut"><title>%s: %s</title><path d="M%s %sL%s %sV%sL%s %sz"/>`, escape(c.slotLabel(i)), escape(value),
			num(x0), num(mid+3), num(x1), num(mid-1), num(mid-4), num(x0), num(mid))
		if fontW*float64(len(value)) <= p.slotW {
			fmt.Fprintf(b, `<text x="%s" y="%d">%s</text>`, num(p.x(i)), p.top-cutOver-4, escape(value))
		}
		b.WriteString(`</g>`)
	}
}
