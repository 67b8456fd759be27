package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Chart geometry, in SVG user units (the SVG scales to its box's width).
// Each chart is drawn twice, wide for a screen and narrow for a phone
// (the page's CSS shows one), so that its 12-unit labels stay at least
// 11 px where it is shown.
const (
	// padLeft is the least room for y labels; longer labels get more.
	padLeft  = 40
	padRight = 12
	// padTop holds the y axis's unit.
	padTop = 22
	padBot = 26
	// fontW is the width of a label's character, a bound for 12-unit
	// system-ui digits.
	fontW = 7.4
	// markersUpTo is the most points a line shows a marker on each of.
	markersUpTo = 60
)

// geometry is one drawing of a chart: its size, how many x labels it
// fits, and its class and id suffix.
type geometry struct {
	w, h    int
	xLabels int
	class   string
	suffix  string
}

var (
	wide   = geometry{w: 480, h: 220, xLabels: 6, class: "wide"}
	narrow = geometry{w: 290, h: 230, xLabels: 4, class: "narrow", suffix: "-n"}
)

// chart is one SVG chart over n slots (days or runs) on the x axis. Lines
// and bands are drawn over slots that have a value; bars stack per slot.
// Values are integers (cents, counts, seconds); only pixel positions are
// floating point.
type chart struct {
	id, title, desc string
	// unit names the y axis's unit ("cards", "s", "amount").
	unit  string
	slots int
	// slotLabel names slot i on the x axis; labels are drawn for about
	// six slots.
	slotLabel func(i int) string
	// yLabel formats a tick value exactly (cents as decimal text).
	yLabel func(v int64) string
	// zero: the y axis includes 0 (bars, counts).
	zero  bool
	lines []lineSeries
	bands []bandSeries
	bars  []barSeries
}

type lineSeries struct {
	color  int
	points []slotValue
}

type slotValue struct {
	slot int
	v    int64
}

type bandSeries struct {
	color  int
	points []slotRange
}

type slotRange struct {
	slot   int
	lo, hi int64
}

// barSeries is one layer of stacked bars: values[i] for slot i.
type barSeries struct {
	color  int
	values []int64
}

// escape makes text safe in HTML and SVG text and attributes, and writes
// "://" with an entity so that no URL text (an error message naming the API)
// reads as a reference in the file.
func escape(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "://", "&#58;//")
}

// yRange returns the range of every value drawn. Stacked bars add up
// without overflow (satAdd).
func (c *chart) yRange() (lo, hi int64, ok bool) {
	first := true
	see := func(v int64) {
		if first {
			lo, hi, first = v, v, false
			return
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	for _, l := range c.lines {
		for _, p := range l.points {
			see(p.v)
		}
	}
	for _, b := range c.bands {
		for _, p := range b.points {
			see(p.lo)
			see(p.hi)
		}
	}
	if len(c.bars) > 0 {
		for i := 0; i < c.slots; i++ {
			var pos, neg int64
			for _, b := range c.bars {
				if v := b.values[i]; v > 0 {
					pos = satAdd(pos, v)
				} else {
					neg = satAdd(neg, v)
				}
			}
			see(pos)
			see(neg)
		}
	}
	if first {
		return 0, 0, false
	}
	if c.zero {
		see(0)
	}
	return lo, hi, true
}

// satAdd is a+b, held at the int64 bounds instead of wrapping.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// maxTicks bounds the ticks of an axis; ticks makes at most about seven,
// the cap only makes the bound plain.
const maxTicks = 12

// ticks returns round tick values covering [lo, hi]: a step of 1, 2 or 5
// times a power of ten, in integers, so labels are exact. It is safe for
// the whole int64 range: the span is taken as a uint64, the step comes from
// a bounded search, and a multiple of the step beyond the int64 range is
// left out (the axis then ends at the data's bound, see newPlot). It
// returns between one and maxTicks values, ascending.
func ticks(lo, hi int64) []int64 {
	if hi < lo {
		lo, hi = hi, lo
	}
	span := uint64(hi) - uint64(lo) // exact, even across zero
	// The least step with 4 steps >= span; ceil(span/4) never overflows.
	need := span/4 + min(span%4, 1)
	// 5e18 is enough for any span: four steps of it exceed 2^64.
	step := uint64(5e18)
search:
	for p := uint64(1); p <= 1e18; p *= 10 {
		for _, m := range [...]uint64{1, 2, 5} {
			if m*p >= need {
				step = m * p
				break search
			}
		}
	}
	st := int64(step)
	qlo, qhi := floorDiv(lo, st), ceilDiv(hi, st)
	if qhi == qlo {
		// lo == hi and a multiple of the step (1): show one step more.
		if qhi < math.MaxInt64 {
			qhi++
		} else {
			qlo--
		}
	}
	var out []int64
	for i := range min(uint64(qhi-qlo)+1, maxTicks) {
		if v, ok := mulExact(qlo+int64(i), st); ok {
			out = append(out, v)
		}
	}
	return out
}

// mulExact returns q*step (step > 0) and whether it is within int64.
func mulExact(q, step int64) (int64, bool) {
	if q > math.MaxInt64/step || q < math.MinInt64/step {
		return 0, false
	}
	return q * step, true
}

// floorDiv is a/b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// ceilDiv is a/b rounded up (b > 0), without negating a (math.MinInt64
// has no negation).
func ceilDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) == (b < 0)) {
		q++
	}
	return q
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// svg renders the chart as two inline SVG elements, wide and narrow
// (the page's CSS shows one), each with role=img, a <title> and a <desc>,
// and data-points: how many values it draws.
func (c *chart) svg() template.HTML {
	return c.draw(wide) + c.draw(narrow)
}

// points counts the values the chart draws: a line's points (the longest
// line's), a band's slots, and every slot of bars (zero is a value).
func (c *chart) points() int {
	n := 0
	for _, l := range c.lines {
		n = max(n, len(l.points))
	}
	for _, b := range c.bands {
		n = max(n, len(b.points))
	}
	if len(c.bars) > 0 {
		n = max(n, c.slots)
	}
	return n
}

func (c *chart) draw(g geometry) template.HTML {
	var b strings.Builder
	id := c.id + g.suffix
	fmt.Fprintf(&b, `<svg class="chart %s" viewBox="0 0 %d %d" role="img" aria-labelledby="%s-t %s-d" data-points="%d">`, g.class, g.w, g.h, id, id, c.points())
	cut := c.barCut()
	desc := c.desc
	if cut.on() {
		desc += c.cutDesc(cut)
	}
	fmt.Fprintf(&b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, id, escape(c.title), id, escape(desc))
	lo, hi, ok := c.yRange()
	if !ok || c.slots == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="empty">no data in this period</text></svg>`, g.w/2, g.h/2)
		return template.HTML(b.String())
	}
	if lo == hi && !c.zero {
		// A flat line in the middle; held at the int64 bounds.
		lo, hi = satAdd(lo, -1), satAdd(hi, 1)
	}
	if cut.on() {
		hi = cut.top // the bars above are drawn broken (drawCuts)
	}
	ts := ticks(lo, hi)
	if len(ts) == 0 {
		ts = []int64{lo} // never: ticks returns at least one value
	}
	labels := make([]string, len(ts))
	left := padLeft
	for i, t := range ts {
		labels[i] = c.yLabel(t)
		left = max(left, int(fontW*float64(len(labels[i])))+12)
	}
	top := padTop
	if cut.on() {
		top += cutRoom
	}
	p := newPlot(g, left, top, min(ts[0], lo), max(ts[len(ts)-1], hi), c.slots)
	c.drawScales(&b, p, ts, labels)
	c.drawBars(&b, p, cut)
	c.drawCuts(&b, p, cut)
	c.drawBands(&b, p)
	c.drawLines(&b, p)
	axis := p.lo
	if p.lo <= 0 && p.hi >= 0 {
		axis = 0
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%d" x2="%d" y1="%s" y2="%s"/>`, left, g.w-padRight, num(p.y(axis)), num(p.y(axis)))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// plot places values and slots in the chart's plot area: left is the room
// for the y labels, top the room above (the unit; a cut's broken bars),
// [lo, hi] the range of the y axis. Geometry alone is
// floating point: values stay integers, and their offsets from lo are
// taken exactly (as uint64) before they become pixels, so a span of a few
// cents at 9e18 still draws apart and no difference overflows.
type plot struct {
	g            geometry
	left, top    int
	lo, hi       int64
	span         float64
	plotH, slotW float64
}

// newPlot returns the plot of the range [lo, hi] over slots slots.
func newPlot(g geometry, left, top int, lo, hi int64, slots int) plot {
	span := float64(uint64(hi) - uint64(lo))
	if hi <= lo {
		span = 1
	}
	return plot{g: g, left: left, top: top, lo: lo, hi: hi, span: span,
		plotH: float64(g.h - top - padBot), slotW: float64(g.w-left-padRight) / float64(max(slots, 1))}
}

// offset is v-lo as a float, exact up to the float's rounding whatever
// the two values.
func (p plot) offset(v int64) float64 {
	if v >= p.lo {
		return float64(uint64(v) - uint64(p.lo))
	}
	return -float64(uint64(p.lo) - uint64(v))
}

// y is the pixel height of value v.
func (p plot) y(v int64) float64 {
	return float64(p.top) + p.plotH*(1-p.offset(v)/p.span)
}

// x is the pixel middle of slot i.
func (p plot) x(i int) float64 { return float64(p.left) + p.slotW*(float64(i)+0.5) }

// drawScales draws the grid lines and the labels of both axes.
func (c *chart) drawScales(b *strings.Builder, p plot, ts []int64, labels []string) {
	b.WriteString(`<g class="grid">`)
	for _, t := range ts {
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%s" y2="%s"/>`, p.left, p.g.w-padRight, num(p.y(t)), num(p.y(t)))
	}
	b.WriteString(`</g><g class="ylab">`)
	for i, t := range ts {
		fmt.Fprintf(b, `<text x="%d" y="%s">%s</text>`, p.left-6, num(p.y(t)+4), escape(labels[i]))
	}
	if c.unit != "" {
		fmt.Fprintf(b, `<text class="unit" x="4" y="13">%s</text>`, escape(c.unit))
	}
	b.WriteString(`</g><g class="xlab">`)
	// A label's room: the plot's width over the labels it fits.
	fits := p.g.xLabels
	if c.slots > 0 {
		if n := len(c.slotLabel(0)); n > 0 {
			fits = min(fits, max(1, int(float64(p.g.w-p.left-padRight)/(fontW*float64(n+2)))))
		}
	}
	every := max(1, (c.slots+fits-1)/fits)
	for i := 0; i < c.slots; i += every {
		fmt.Fprintf(b, `<text x="%s" y="%d">%s</text>`, num(p.x(i)), p.g.h-8, escape(c.slotLabel(i)))
	}
	b.WriteString(`</g>`)
}

// drawBands draws each band as one closed path; a band of no width
// (every low equal to its high) or of one slot is not drawn.
func (c *chart) drawBands(b *strings.Builder, p plot) {
	for _, s := range c.bands {
		if !s.hasWidth() {
			continue
		}
		// Along the top from the left, back along the bottom.
		n := len(s.points)
		d := polyline(2*n, func(i int) (float64, float64) {
			if i < n {
				return p.x(s.points[i].slot), p.y(s.points[i].hi)
			}
			pt := s.points[2*n-1-i]
			return p.x(pt.slot), p.y(pt.lo)
		})
		if n > 0 {
			fmt.Fprintf(b, `<path class="band f%d" d="%sz"/>`, s.color, d)
		}
	}
}

// drawLines draws each line series, with a marker on each point when
// they are few (a line of one point is a dot).
func (c *chart) drawLines(b *strings.Builder, p plot) {
	for _, s := range c.lines {
		if len(s.points) == 0 {
			continue
		}
		d := polyline(len(s.points), func(i int) (float64, float64) { return p.x(s.points[i].slot), p.y(s.points[i].v) })
		fmt.Fprintf(b, `<path class="line s%d" d="%s"/>`, s.color, d)
		if len(s.points) > markersUpTo {
			continue
		}
		fmt.Fprintf(b, `<g class="f%d">`, s.color)
		for _, pt := range s.points {
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="2.8"/>`, num(p.x(pt.slot)), num(p.y(pt.v)))
		}
		b.WriteString(`</g>`)
	}
}

// hasWidth says whether the band covers more than one slot and is wider
// than a line somewhere.
func (s bandSeries) hasWidth() bool {
	if len(s.points) < 2 {
		return false
	}
	for _, pt := range s.points {
		if pt.lo != pt.hi {
			return true
		}
	}
	return false
}

// polyline returns the path commands through n points: a move to the first,
// lines to the others.
func polyline(n int, at func(i int) (x, y float64)) string {
	var d strings.Builder
	for i := range n {
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		px, py := at(i)
		fmt.Fprintf(&d, "%s%s %s", cmd, num(px), num(py))
	}
	return d.String()
}
