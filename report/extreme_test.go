package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/money"
)

// TestTicksWholeRange: ticks covers any range of int64 with round,
// exact, ascending values, at most maxTicks of them, and never a value
// outside int64.
func TestTicksWholeRange(t *testing.T) {
	const maxI, minI = math.MaxInt64, math.MinInt64
	ranges := [][2]int64{
		{maxI, maxI}, {minI, minI}, {minI + 1, minI + 1}, {minI, maxI}, {minI + 1, maxI},
		{1, maxI}, {0, maxI}, {minI, 0}, {minI, -1}, {maxI - 10, maxI}, {minI, minI + 10},
		{1, 9000000000000000000}, {-9000000000000000000, 9000000000000000000},
		{maxI - 1, maxI}, {-5, -5}, {0, 0}, {1, 1},
	}
	for _, r := range ranges {
		lo, hi := r[0], r[1]
		ts := ticks(lo, hi)
		if len(ts) == 0 || len(ts) > maxTicks || !slices.IsSorted(ts) || len(slices.Compact(slices.Clone(ts))) != len(ts) {
			t.Errorf("ticks(%d, %d) = %v: want 1 to %d distinct values, ascending", lo, hi, ts, maxTicks)
			continue
		}
		// Ticks leave out only what int64 cannot hold: the axis (ticks
		// widened by the data) covers the data.
		if min(ts[0], lo) > lo || max(ts[len(ts)-1], hi) < hi {
			t.Errorf("ticks(%d, %d) = %v do not cover the range", lo, hi, ts)
		}
		if lo < hi && hi-lo > 0 && hi-lo < 1e18 && len(ts) < 2 {
			t.Errorf("ticks(%d, %d) = %v: one tick for a small span", lo, hi, ts)
		}
	}
}

// extremeData is a report period of three days with the balance values
// given, one per day (a 0 day has no snapshot), as load reads them: cents
// and their exact text.
func extremeData(values ...int64) load.ReportData {
	day0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	d := load.ReportData{Path: "w.db", Since: day0, Now: day0.Add(time.Duration(len(values)) * 24 * time.Hour)}
	for i, v := range values {
		day := day0.Add(time.Duration(i) * 24 * time.Hour)
		d.Days = append(d.Days, day)
		text := money.FromMinor(v, 2).String()
		d.Balances = append(d.Balances, load.BalanceDay{Amount: "balance", Day: day, Snapshots: 1,
			First: v, Min: v, Max: v, Last: v, FirstText: text, MinText: text, MaxText: text, LastText: text})
	}
	last := money.FromMinor(values[len(values)-1], 2).String()
	d.Latest = &load.LatestBalances{TakenAt: d.Now, Amounts: []load.NamedAmount{{Name: "balance", Value: last}}}
	return d
}

// TestRenderExtremeAmounts: charts of amounts at and near the ends of
// int64 (the review's 92233720368547758.07 then 0.01 hung the report;
// 90000000000000000.00 then 0.01 panicked) render quickly, and the page
// says the amounts as their exact decimal text.
func TestRenderExtremeAmounts(t *testing.T) {
	tests := []struct {
		name   string
		values []int64
		want   []string
	}{
		{"max then 1", []int64{math.MaxInt64, 1}, []string{"92233720368547758.07", "0.01"}},
		{"9e18 then 1", []int64{9000000000000000000, 1}, []string{"90000000000000000.00", "0.01"}},
		{"max alone", []int64{math.MaxInt64}, []string{"92233720368547758.07"}},
		{"min+1 alone", []int64{math.MinInt64 + 1}, []string{"-92233720368547758.07"}},
		{"min alone", []int64{math.MinInt64}, []string{"-92233720368547758.08"}},
		{"both ends", []int64{math.MinInt64 + 1, math.MaxInt64, math.MinInt64 + 1}, []string{"-92233720368547758.07", "92233720368547758.07"}},
		{"min and max", []int64{math.MinInt64, math.MaxInt64}, []string{"-92233720368547758.08", "92233720368547758.07"}},
		{"flat", []int64{7, 7, 7}, []string{"0.07"}},
		{"near max", []int64{math.MaxInt64 - 3, math.MaxInt64}, []string{"92233720368547758.04", "92233720368547758.07"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			var b bytes.Buffer
			done := make(chan error, 1)
			go func() { done <- render(ctx, &b, extremeData(tt.values...), "") }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-ctx.Done():
				t.Fatal("render did not finish in 10 s")
			}
			page := b.String()
			for _, w := range tt.want {
				if !strings.Contains(page, w) {
					t.Errorf("the page lacks the amount %s", w)
				}
			}
			for _, bad := range []string{"NaN", "Inf", "e+"} {
				if strings.Contains(page, bad) {
					i := strings.Index(page, bad)
					t.Errorf("the page has %q: …%s…", bad, page[max(0, i-80):min(len(page), i+80)])
				}
			}
			checkChartGeometry(t, page)
		})
	}
}

// checkChartGeometry fails when a chart's path or circle is placed
// outside the chart.
func checkChartGeometry(t *testing.T, page string) {
	t.Helper()
	for _, attr := range []string{` cy="`, ` y1="`, ` y2="`} {
		for rest := page; ; {
			i := strings.Index(rest, attr)
			if i < 0 {
				break
			}
			rest = rest[i+len(attr):]
			v := rest[:strings.IndexByte(rest, '"')]
			if f, err := parseFloat(v); err != nil || f < 0 || f > float64(max(wide.h, narrow.h)) {
				t.Errorf("%s%s\" is outside the chart", attr, v)
			}
		}
	}
}

func parseFloat(s string) (float64, error) {
	var f float64
	_, err := fmt.Sscan(s, &f)
	return f, err
}

// TestChartExtremeSeries draws a band and a line from math.MinInt64+1 to
// math.MaxInt64 in one series, and stacked bars that overflow when added.
func TestChartExtremeSeries(t *testing.T) {
	c := &chart{id: "x", title: "x", desc: "x", slots: 3, slotLabel: func(int) string { return "d" }, yLabel: cents,
		lines: []lineSeries{{color: 1, points: []slotValue{{0, math.MinInt64 + 1}, {1, math.MaxInt64}, {2, 0}}}},
		bands: []bandSeries{{color: 1, points: []slotRange{{0, math.MinInt64 + 1, math.MaxInt64}, {2, math.MinInt64, math.MaxInt64}}}}}
	svg := string(c.svg())
	if !strings.Contains(svg, "50000000000000000.00") || !strings.Contains(svg, "-50000000000000000.00") || !strings.Contains(svg, ">0.00<") {
		t.Errorf("axis labels of the whole int64 range: %s", svg)
	}
	checkChartGeometry(t, svg)
	bars := &chart{id: "b", title: "b", desc: "b", slots: 2, slotLabel: func(int) string { return "d" }, yLabel: count, zero: true,
		bars: []barSeries{{color: 1, values: []int64{math.MaxInt64, 1}}, {color: 2, values: []int64{math.MaxInt64, math.MinInt64}}}}
	checkChartGeometry(t, string(bars.svg()))
}

// TestWriteRemovesTempOnPanic: a panic while the page is written leaves
// no temporary file; an error neither.
func TestWriteRemovesTempOnPanic(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach the caller")
			}
		}()
		_ = writeAtomic(out, 0o644, func(w io.Writer) error {
			io.WriteString(w, "half a page")
			panic("boom")
		})
	}()
	fail := errors.New("no")
	if err := writeAtomic(out, 0o644, func(io.Writer) error { return fail }); !errors.Is(err, fail) {
		t.Errorf("writeAtomic = %v, want %v", err, fail)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
}

// TestRenderHonoursContext: a cancelled context stops the page.
func TestRenderHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := render(ctx, io.Discard, extremeData(1, 2, 3), "")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("render with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestPageNamesAccount: a named account is said in the heading and the
// title; without one the page is the page it always was.
func TestPageNamesAccount(t *testing.T) {
	d := extremeData(100, 200)
	var plain, named, old bytes.Buffer
	if err := render(t.Context(), &plain, d, ""); err != nil {
		t.Fatal(err)
	}
	if err := Render(&old, d); err != nil {
		t.Fatal(err)
	}
	if err := render(t.Context(), &named, d, "globex"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain.Bytes(), old.Bytes()) {
		t.Error("the page without an account differs from Render's")
	}
	p := plain.String()
	if !strings.Contains(p, "<title>cardsync report: ") || !strings.Contains(p, "<h1>cardsync report</h1>") || strings.Contains(p, "for account") {
		t.Errorf("the page of the one unnamed account changed:\n%.600s", p)
	}
	n := named.String()
	if !strings.Contains(n, "<title>cardsync report for account globex: ") || !strings.Contains(n, "<h1>cardsync report for account globex</h1>") {
		t.Errorf("the page of account globex does not say so:\n%.600s", n)
	}
	if strings.Replace(n, " for account globex", "", 2) != p {
		t.Error("the named page differs from the unnamed one beyond the account's name")
	}
}
