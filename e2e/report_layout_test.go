//go:build e2e

package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cardsync/cardsync/sim"
)

// layoutJS measures the page as shown at the viewport's width: what
// sticks out of the viewport (a table's scroll box counts, not the table
// inside it), the points of each chart shown, text drawn under 11 px (an
// SVG label's size times its chart's scale), the colours of each legend,
// whether the latest balances table fits its box (no value cut), the
// table rows taller than 300 px (text squeezed into a narrow column), the
// balance charts that draw one flat line (an amount that never moved),
// the lines of the amounts said unchanged instead, the bars of each bar
// chart as drawn (each slot's height, tallest first) and each card id
// shown (its text, its title and the lines it takes).
const layoutJS = `(() => {
  const vw = document.documentElement.clientWidth;
  const out = {vw, scrollW: document.documentElement.scrollWidth, wide: [], charts: [], small: [], legends: [], cut: [], tall: [],
    flat: [], unchanged: [], bars: [], ids: []};
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' "' + (el.textContent || '').trim().slice(0, 40) + '"';
  for (const tr of document.querySelectorAll('tbody tr')) {
    const h = tr.getBoundingClientRect().height;
    if (h > 300) out.tall.push(name(tr) + ' ' + Math.round(h) + 'px');
  }
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (el.closest('div.scroll') && !el.matches('div.scroll')) continue;
    if (r.left < -0.5 || r.right > vw + 0.5) out.wide.push(name(el) + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
  }
  for (const svg of document.querySelectorAll('svg.chart')) {
    if (svg.getBoundingClientRect().width === 0) continue;
    out.charts.push({id: svg.getAttribute('aria-labelledby'), points: Number(svg.dataset.points)});
  }
  for (const el of document.querySelectorAll('svg.chart text, ul.legend li, td, th, caption, figcaption, p, dt, dd, h1, h2')) {
    if (el.getBoundingClientRect().width === 0) continue;
    let px = parseFloat(getComputedStyle(el).fontSize);
    if (el.ownerSVGElement) px *= el.ownerSVGElement.getScreenCTM().a;
    if (px < 11) out.small.push(name(el) + ' ' + px.toFixed(1) + 'px');
  }
  for (const ul of document.querySelectorAll('ul.legend')) {
    if (ul.getBoundingClientRect().width === 0) continue;
    out.legends.push([...ul.querySelectorAll('li')].map(li => getComputedStyle(li).getPropertyValue('--k').trim()));
  }
  const box = document.querySelector('#h-balances ~ div.scroll');
  if (box && box.scrollWidth > box.clientWidth) out.cut.push('latest balances ' + box.scrollWidth + ' > ' + box.clientWidth);
  for (const el of document.querySelectorAll('figcaption, h1, h2, dd')) {
    if (el.scrollWidth > el.clientWidth + 1) out.cut.push(name(el));
  }
  for (const svg of document.querySelectorAll('svg.chart')) {
    if (svg.getBoundingClientRect().width === 0) continue;
    const id = svg.getAttribute('aria-labelledby') || '';
    const ys = [...svg.querySelectorAll('circle')].map(c => c.getAttribute('cy'));
    if (id.startsWith('bal-') && ys.length > 1 && new Set(ys).size === 1 && !svg.querySelector('path.band')) out.flat.push(id);
    const h = {};
    for (const p of svg.querySelectorAll(':scope > path[class^=f]')) {
      for (const m of p.getAttribute('d').matchAll(/M(-?[\d.]+) (-?[\d.]+)V(-?[\d.]+)h/g)) h[m[1]] = (h[m[1]] || 0) + Number(m[2]) - Number(m[3]);
    }
    const hs = Object.values(h).sort((a, b) => b - a);
    if (hs.length > 0) out.bars.push({id, heights: hs});
  }
  for (const li of document.querySelectorAll('ul.unchanged li')) out.unchanged.push(li.textContent.trim());
  for (const el of document.querySelectorAll('span.id')) {
    if (el.getBoundingClientRect().width === 0) continue;
    out.ids.push({text: el.textContent, title: el.getAttribute('title') || '', lines: el.getClientRects().length});
  }
  return out;
})()`

// layout is what layoutJS returns.
type layout struct {
	VW        float64 `json:"vw"`
	ScrollW   float64 `json:"scrollW"`
	Wide      []string
	Charts    []chartShown
	Small     []string
	Legends   [][]string
	Cut       []string
	Tall      []string
	Flat      []string
	Unchanged []string
	Bars      []struct {
		ID      string
		Heights []float64
	}
	IDs []struct {
		Text, Title string
		Lines       int
	}
}

// chartShown is a chart layoutJS found shown: its aria-labelledby and
// how many values it draws (data-points).
type chartShown struct {
	ID     string
	Points int
}

// measureLayout loads page in headless Chromium (chromedp) at width css
// px and runs layoutJS.
func measureLayout(t *testing.T, chromium, page string, width int64) layout {
	t.Helper()
	dir := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.UserDataDir(filepath.Join(dir, "profile")), chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("hide-scrollbars", false), chromedp.Env("HOME="+dir))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
		t.Fatalf("chromium at %d px: %v", width, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatalf("chromium: load %s: %v", page, err)
	}
	l, err := chromedp.Run(ctx, chromedp.Evaluate[layout](layoutJS))
	if err != nil {
		t.Fatalf("chromium at %d px: measure: %v", width, err)
	}
	return l
}

// TestReportLayoutInChromium renders the report of a warehouse minutes
// old (three runs on the simulator) in a real headless Chromium at 1400
// 400 and 320 px wide: nothing wider than the viewport (tables scroll in
// their own box), the latest balances and the titles whole, each chart
// shown with at least two points (one per run), text at least 11 px as
// drawn, each legend's colours distinct, and the page read at a glance
// (checkGlance): no flat balance chart, no bar dwarfed by the backfill's,
// every card id on one line.
func TestReportLayoutInChromium(t *testing.T) {
	chromium := findChromium(t)
	up := newUpstream(t, sim.Options{Seed: 25, Cards: 120, OddData: true, AccountDrift: true})
	d := newDeployment(t, up)
	d.backfillOK(t)
	var ordinary []sim.Card
	var longID string
	for _, c := range up.Cards() {
		switch c.Odd {
		case "":
			ordinary = append(ordinary, c)
		case "long-id":
			longID = c.ID
		}
	}
	up.UpdateCard(ordinary[0].ID)
	up.UpdateCard(longID) // a 200-character id in the changed cards' table
	up.RemoveCard(ordinary[1].ID)
	d.backfillOK(t)
	d.backfillOK(t)
	// A failed run with a 300-character error (one word: no space to
	// break at) must stay readable: no row squeezed tall.
	db, err := sql.Open("sqlite", "file:"+d.db+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	long := "get_/v1/cards?page=2:_" + strings.Repeat("upstream_answered_503_", 13) + "end"
	if _, err := db.Exec(`UPDATE sync_runs SET status = 'failed', error = ? WHERE run_id = (SELECT max(run_id) FROM sync_runs)`, long); err != nil {
		t.Fatal(err)
	}
	db.Close()
	page := filepath.Join(d.dir, "report.html")
	if code, out, errOut := d.run("report", "-o", page); code != 0 {
		t.Fatalf("report exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), long) {
		t.Error("the failed run's error is not on the page")
	}
	if strings.Contains(strings.ToLower(string(html)), "<script") {
		t.Error("the report has a script")
	}
	t.Run("probe", func(t *testing.T) { checkProbe(t, chromium) })
	for _, width := range []int64{1400, 400, 320} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			l := measureLayout(t, chromium, page, width)
			t.Logf("%d px: viewport %v, document %v wide; %d charts, %d legends", width, l.VW, l.ScrollW, len(l.Charts), len(l.Legends))
			if l.ScrollW > l.VW || len(l.Wide) > 0 {
				t.Errorf("document %v px wide in a %v px viewport; wider than it: %q", l.ScrollW, l.VW, l.Wide)
			}
			if len(l.Cut) > 0 {
				t.Errorf("cut: %q", l.Cut)
			}
			if len(l.Charts) < 6 {
				t.Errorf("%d charts shown, want balance's and cards_balance's (they drift), 2 card and 2 run charts", len(l.Charts))
			}
			checkGlance(t, l)
			for _, c := range l.Charts {
				if c.Points < 2 {
					t.Errorf("chart %s draws %d points, want at least 2 (one per run)", c.ID, c.Points)
				}
			}
			if len(l.Small) > 0 {
				t.Errorf("text under 11 px: %q", l.Small)
			}
			if len(l.Tall) > 0 {
				t.Errorf("table rows over 300 px tall: %q", l.Tall)
			}
			for _, lg := range l.Legends {
				seen := map[string]bool{}
				for _, c := range lg {
					if c == "" || seen[c] {
						t.Errorf("legend colours %q: want one of its own for each entry", lg)
						break
					}
					seen[c] = true
				}
			}
		})
	}
}

// dwarfed names the bar charts whose second-tallest bar, as drawn, is
// under a quarter of the tallest: the later runs' bars beside a
// backfill's, which the axis's cut must keep readable.
func dwarfed(l layout) []string {
	var out []string
	for _, b := range l.Bars {
		if len(b.Heights) >= 2 && b.Heights[1] < b.Heights[0]/4 {
			out = append(out, fmt.Sprintf("%s: %.1f beside %.1f", b.ID, b.Heights[1], b.Heights[0]))
		}
	}
	return out
}

// wrappedIDs lists the card ids shown on more than one line.
func wrappedIDs(l layout) []string {
	var out []string
	for _, id := range l.IDs {
		if id.Lines != 1 {
			out = append(out, fmt.Sprintf("%q on %d lines", id.Text, id.Lines))
		}
	}
	return out
}

// checkGlance checks what makes the page read at a glance: no balance
// chart of one flat line (such an amount is a line of text: the three the
// simulator never moves), no bar dwarfed by a backfill's, and every card
// id on one line, a long one cut with an ellipsis and whole in its title.
func checkGlance(t *testing.T, l layout) {
	t.Helper()
	if len(l.Flat) > 0 {
		t.Errorf("balance charts of an amount that never moved: %q", l.Flat)
	}
	for _, amount := range []string{"available_recharge_balance", "transfer_amount", "reach_amount"} {
		if !slices.ContainsFunc(l.Unchanged, func(s string) bool {
			return strings.HasPrefix(s, amount+": ") && strings.Contains(s, "(unchanged over 3 snapshots)")
		}) {
			t.Errorf("no line says %s is unchanged over the 3 runs: %q", amount, l.Unchanged)
		}
	}
	for _, amount := range []string{"balance", "cards_balance"} {
		if !slices.ContainsFunc(l.Charts, func(c chartShown) bool { return strings.HasPrefix(c.ID, "bal-"+amount+"-") }) {
			t.Errorf("no chart of %s, which drifts", amount)
		}
	}
	if d := dwarfed(l); len(d) > 0 {
		t.Errorf("bars under a quarter of the tallest: %q", d)
	}
	if len(l.Bars) < 3 {
		t.Errorf("%d bar charts measured, want the card changes and the 2 run charts", len(l.Bars))
	}
	if w := wrappedIDs(l); len(w) > 0 {
		t.Errorf("card ids on more than one line: %q", w)
	}
	cut := 0
	for _, id := range l.IDs {
		if strings.HasSuffix(id.Text, "…") {
			cut++
			if !strings.HasPrefix(id.Title, strings.TrimSuffix(id.Text, "…")) || len([]rune(id.Title)) <= len([]rune(id.Text)) {
				t.Errorf("id %q cut, but its title is %q", id.Text, id.Title)
			}
		}
	}
	if cut == 0 {
		t.Errorf("no long id was cut: %+v", l.IDs)
	}
}

// checkProbe measures a page with each fault the layout checks look for:
// they must see every one.
func checkProbe(t *testing.T, chromium string) {
	t.Helper()
	probe := filepath.Join(t.TempDir(), "probe.html")
	bad := `<!DOCTYPE html><meta name="viewport" content="width=device-width"><body>
<div style="width:700px">wide</div><figure><figcaption style="white-space:nowrap;overflow:hidden">` + strings.Repeat("title ", 40) + `</figcaption>
<svg class="chart" viewBox="0 0 720 200" data-points="1" aria-labelledby="x"><text x="1" y="9" style="font-size:11px">tiny</text></svg>
<ul class="legend"><li style="--k:#0072b2">a</li><li style="--k:#0072b2">b</li></ul></figure>
<table style="width:60px"><tbody><tr><td style="word-break:break-all">` + strings.Repeat("x", 300) + `</td></tr></tbody></table>
<svg class="chart" viewBox="0 0 480 220" aria-labelledby="bal-x-t bal-x-d"><g class="f1"><circle cx="10" cy="50" r="2"/><circle cx="90" cy="50" r="2"/></g></svg>
<svg class="chart" viewBox="0 0 480 220" aria-labelledby="changes-t changes-d"><path class="f1" d="M10 190V10h20V190zM40 190V188h20V190z"/></svg>
<p style="width:80px"><span class="id">card-0123456789-card-0123456789</span></p>`
	if err := os.WriteFile(probe, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	l := measureLayout(t, chromium, probe, 400)
	if l.ScrollW <= l.VW || len(l.Wide) == 0 || len(l.Cut) == 0 || len(l.Charts) != 3 || l.Charts[0].Points != 1 ||
		len(l.Small) == 0 || len(l.Legends) != 1 || l.Legends[0][0] != l.Legends[0][1] || len(l.Tall) == 0 {
		t.Fatalf("the checks miss a fault of the probe page: %+v", l)
	}
	if !slices.Equal(l.Flat, []string{"bal-x-t bal-x-d"}) || len(l.Bars) != 1 || len(l.IDs) != 1 || l.IDs[0].Lines < 2 ||
		len(dwarfed(l)) != 1 || len(wrappedIDs(l)) != 1 {
		t.Fatalf("the checks miss a flat balance chart, a dwarfed bar or a wrapped id of the probe page: %+v", l)
	}
}
