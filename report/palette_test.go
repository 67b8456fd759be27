package report

import (
	"context"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
)

// palettes reads the page's colours --c1 … --c8 from its CSS: the light
// ones (the first :root) and the dark ones (prefers-color-scheme: dark).
func palettes(t *testing.T) (light, dark map[int]string) {
	t.Helper()
	re := regexp.MustCompile(`--c(\d):(#[0-9a-f]{6})`)
	read := func(css string) map[int]string {
		out := map[int]string{}
		for _, m := range re.FindAllStringSubmatch(css, -1) {
			n, _ := strconv.Atoi(m[1])
			out[n] = m[2]
		}
		if len(out) != 8 {
			t.Fatalf("%d colours in %q", len(out), css)
		}
		return out
	}
	i := strings.Index(pageTemplate, "@media (prefers-color-scheme:dark)")
	j := strings.Index(pageTemplate[i:], "}}")
	if i < 0 || j < 0 {
		t.Fatal("no dark mode colours")
	}
	return read(pageTemplate[:i]), read(pageTemplate[i : i+j])
}

// lightness is the CIE L* (D65) of an sRGB colour "#rrggbb".
func lightness(hex string) float64 {
	var y float64
	for k, w := range []float64{0.2126, 0.7152, 0.0722} {
		v, _ := strconv.ParseUint(hex[1+2*k:3+2*k], 16, 8)
		c := float64(v) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		y += w * c
	}
	if y > 216.0/24389 {
		return 116*math.Cbrt(y) - 16
	}
	return y * 24389 / 27
}

// TestPaletteLightness: in light and in dark mode, the entries of each
// chart's legend differ in CIE L* by 9 or more, so no two read the same in
// greyscale (and none is the background's).
func TestPaletteLightness(t *testing.T) {
	light, dark := palettes(t)
	if l := lightness("#f0e442"); math.Abs(l-89.1) > 0.2 {
		t.Fatalf("L* of #f0e442 is %.1f, want 89.1", l)
	}
	now := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	d := youngData(t)
	d.Fine.Statuses = []string{"a", "b", "c", "d", "e", "f", "g"}
	d.Fine.StatusCounts = make([][]int64, 7)
	for i := range d.Fine.StatusCounts {
		d.Fine.StatusCounts[i] = []int64{1, 2, 3}
	}
	d.Fine.SetBalances([]load.BalanceDay{load.NewBalanceDay("balance", now, 1, 1, 1, 5, 5)})
	d.RunPoints[0].Status, d.RunPoints[1].Status = load.StatusFailed, load.StatusAbandoned
	p, err := newPage(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	figs := append(append([]figure{p.Statuses, p.Changes}, p.Runs...), p.Balances...)
	legends := [][]legendItem{outcomeLegend(), problemLegend()}
	for _, f := range figs {
		legends = append(legends, f.Legend)
	}
	for mode, pal := range map[string]map[int]string{"light": light, "dark": dark} {
		for _, lg := range legends {
			for i, a := range lg {
				for _, b := range lg[i+1:] {
					la, lb := lightness(pal[a.Color]), lightness(pal[b.Color])
					if math.Abs(la-lb) < 9 {
						t.Errorf("%s: %q %s (L* %.1f) and %q %s (L* %.1f) are too close in greyscale", mode, a.Name, pal[a.Color], la, b.Name, pal[b.Color], lb)
					}
				}
			}
		}
	}
	for _, lg := range legends {
		if len(lg) > 5 {
			return
		}
	}
	t.Error("no legend of 6 entries (the statuses) was checked")
}
