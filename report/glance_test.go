package report

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cardsync/cardsync/load"
)

// barPath is one bar's part as drawBars writes it: M x y0 V y1 h w V y0 z.
var barPath = regexp.MustCompile(`M(-?[\d.]+) (-?[\d.]+)V(-?[\d.]+)h(-?[\d.]+)V(-?[\d.]+)z`)

// barHeights returns the drawn height of each slot's stacked bar in svg
// (one drawing), by the x of its left edge.
func barHeights(t *testing.T, svg string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range barPath.FindAllStringSubmatch(svg, -1) {
		y0, err0 := strconv.ParseFloat(m[2], 64)
		y1, err1 := strconv.ParseFloat(m[3], 64)
		if err0 != nil || err1 != nil {
			t.Fatalf("bar %q", m[0])
		}
		out[m[1]] += y0 - y1
	}
	return out
}

// barChart is a chart of stacked bars with these series over len(series[0])
// runs.
func barChart(series ...[]int64) *chart {
	c := &chart{id: "c", title: "t", desc: "d.", unit: "cards", slots: len(series[0]), yLabel: count, zero: true,
		slotLabel: func(i int) string { return "#" + strconv.Itoa(i+1) }}
	for k, s := range series {
		c.bars = append(c.bars, barSeries{color: k + 1, values: s})
	}
	return c
}

// TestBarCut: a backfill's bar beside a few changes a run is drawn
// broken, with its value, and the axis stops at the tallest of the others;
// bars of like heights, a chart with lines or a negative bar are not cut;
// at most half of the bars with a value are broken.
func TestBarCut(t *testing.T) {
	for _, tt := range []struct {
		name   string
		c      *chart
		broken []bool // nil: no cut
		top    int64
	}{
		{"demo's changes", barChart([]int64{300, 1, 0, 0}, []int64{0, 1, 0, 1}, []int64{0, 0, 2, 0}, []int64{0, 0, 0, 1}),
			[]bool{true, false, false, false}, 2},
		{"like heights", barChart([]int64{8, 2, 5, 3}), nil, 0},
		{"exactly cutRatio times", barChart([]int64{8, 2}), nil, 0},
		{"just over", barChart([]int64{9, 2}), []bool{true, false}, 2},
		{"two backfills", barChart([]int64{300, 3, 280, 2}), []bool{true, false, true, false}, 3},
		{"most bars tall", barChart([]int64{300, 300, 300, 2}), nil, 0},
		{"one bar", barChart([]int64{0, 300, 0}), nil, 0},
		{"a negative bar", barChart([]int64{300, -1, 2}), nil, 0},
		{"zeros", barChart([]int64{0, 0}), nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cut := tt.c.barCut()
			if !slices.Equal(cut.broken, tt.broken) || cut.top != tt.top {
				t.Errorf("cut %v at %d, want %v at %d", cut.broken, cut.top, tt.broken, tt.top)
			}
			svg := string(tt.c.draw(wide))
			if got := strings.Contains(svg, `class="cut"`); got != (tt.broken != nil) {
				t.Errorf("break marks drawn: %v, want %v\n%s", got, tt.broken != nil, svg)
			}
		})
	}
	c := barChart([]int64{300, 1, 0, 0}, []int64{0, 1, 2, 1})
	c.lines = []lineSeries{{color: 5, points: []slotValue{{0, 1}}}}
	if c.barCut().on() {
		t.Error("a chart with a line is cut")
	}
	svg := string(barChart([]int64{300, 1, 2, 2}).draw(wide))
	for _, want := range []string{`<title>#1: 300</title>`, `>300</text>`, "The axis stops at 2 so that the other bars stay readable: the bar of #1 (300) is drawn broken past it, with its value above."} {
		if !strings.Contains(svg, want) {
			t.Errorf("the broken bar's chart lacks %q:\n%s", want, svg)
		}
	}
}

// TestBarCutKeepsBarsVisible, on generated charts (1 to 72 runs, 1 to 4
// series, counts from 0 to a few with now and then a backfill's
// thousands): the second-tallest bar as drawn is at least 1/cutRatio of
// the tallest, in both drawings, and the broken bars are the tallest,
// at most half of those with a value.
func TestBarCutKeepsBarsVisible(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 1))
	cases := 3000
	if testing.Short() {
		cases = 300 // pure arithmetic: the race tier (-short) learns nothing more from more
	}
	for n := range cases {
		slots, nseries := 1+r.IntN(72), 1+r.IntN(4)
		series := make([][]int64, nseries)
		for k := range series {
			series[k] = make([]int64, slots)
			for i := range series[k] {
				switch x := r.IntN(20); {
				case x == 0:
					series[k][i] = int64(r.IntN(100_000))
				case x < 8:
					series[k][i] = 0
				default:
					series[k][i] = int64(r.IntN(12))
				}
			}
		}
		c := barChart(series...)
		cut := c.barCut()
		if cut.on() {
			var broken, some int
			least := int64(-1)
			for i, b := range cut.broken {
				if cut.totals[i] > 0 {
					some++
				}
				if b {
					broken++
					if least < 0 || cut.totals[i] < least {
						least = cut.totals[i]
					}
				}
			}
			for i, b := range cut.broken {
				if !b && cut.totals[i] >= least {
					t.Fatalf("case %d: bar %d (%d) is whole, a shorter one (%d) broken: %v", n, i, cut.totals[i], least, cut.totals)
				}
			}
			if 2*broken > some {
				t.Fatalf("case %d: %d of %d bars broken: %v", n, broken, some, cut.totals)
			}
		}
		for _, g := range []geometry{wide, narrow} {
			var hs []float64
			for _, h := range barHeights(t, string(c.draw(g))) {
				hs = append(hs, h)
			}
			if len(hs) < 2 {
				continue
			}
			slices.SortFunc(hs, func(a, b float64) int { return cmp.Compare(b, a) })
			if hs[1] < hs[0]/cutRatio-0.2 {
				t.Fatalf("case %d (%s): drawn heights %v: the second-tallest under 1/%d of the tallest; series %v",
					n, g.class, hs[:2], cutRatio, series)
			}
		}
	}
}

// TestUnchangedAmounts: an amount that held one value over every slot is
// a line with its snapshots; a slot whose lowest and highest differ, or
// two slots apart, are a change.
func TestUnchangedAmounts(t *testing.T) {
	at := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	b := func(snapshots, lo, hi int64) load.BalanceDay {
		return load.NewBalanceDay("available_recharge_balance", at, snapshots, lo, lo, hi, hi)
	}
	for _, tt := range []struct {
		name string
		rows []load.BalanceDay
		want string // "": a change
	}{
		{"three runs", []load.BalanceDay{b(1, 9876540, 9876540), b(2, 9876540, 9876540), b(1, 9876540, 9876540)},
			"available_recharge_balance: 98765.40 (unchanged over 4 snapshots)"},
		{"one snapshot", []load.BalanceDay{b(1, -5, -5)}, "available_recharge_balance: -0.05 (1 snapshot)"},
		{"moved within a day", []load.BalanceDay{b(3, 100, 101)}, ""},
		{"moved between days", []load.BalanceDay{b(1, 100, 100), b(1, 101, 101)}, ""},
		{"moved and back", []load.BalanceDay{b(1, 100, 100), b(2, 100, 200), b(1, 100, 100)}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, ok := unchanged("available_recharge_balance", tt.rows)
			got := ""
			if ok {
				got = fmt.Sprintf("%s: %s (%s)", u.Name, u.Value, u.Note())
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLongIDs: an id up to maxIDRunes characters is shown whole; a longer
// one is cut with an ellipsis, whole in its title; both escaped, on one
// line (class id).
func TestLongIDs(t *testing.T) {
	uuid := "6f1c2f5e-8a47-4f0b-9a43-2b8c6d1e0f11"
	long := strings.Repeat("card-0123456789-", 13)[:200]
	for _, tt := range []struct {
		id, want string
	}{
		{"1042", `<span class="id">1042</span>`},
		{uuid, `<span class="id">` + uuid + `</span>`},
		{long, `<span class="id" title="` + long + `">` + long[:maxIDRunes-1] + `…</span>`},
		{`<b>"x"</b>` + strings.Repeat("é", 40), `<span class="id" title="&lt;b&gt;&#34;x&#34;&lt;/b&gt;` + strings.Repeat("é", 40) + `">&lt;b&gt;&#34;x&#34;&lt;/b&gt;` +
			strings.Repeat("é", maxIDRunes-1-len(`<b>"x"</b>`)) + `…</span>`},
	} {
		got := string(idHTML(tt.id))
		if got != tt.want {
			t.Errorf("idHTML(%q) =\n%s\nwant\n%s", tt.id, got, tt.want)
		}
	}
	// Generated: the text shown is never over maxIDRunes characters, and
	// is the id's start.
	r := rand.New(rand.NewPCG(35, 2))
	for range 500 {
		var sb strings.Builder
		for range r.IntN(120) {
			sb.WriteRune([]rune("ab9-_ é✓")[r.IntN(8)])
		}
		id := sb.String()
		shown := regexp.MustCompile(`>([^<]*)</span>$`).FindStringSubmatch(string(idHTML(id)))[1]
		plain := strings.TrimSuffix(shown, "…")
		if n := utf8.RuneCountInString(shown); n > maxIDRunes || !strings.HasPrefix(id, plain) || (shown != plain) != (utf8.RuneCountInString(id) > maxIDRunes) {
			t.Fatalf("id %q shown as %q", id, shown)
		}
	}
}
