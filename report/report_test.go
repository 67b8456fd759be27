package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/sim"
)

// TestReportDataFromSimulator checks load's report queries against a
// warehouse written by real runs on the simulator.
func TestReportDataFromSimulator(t *testing.T) {
	sw := buildWarehouse(t, t.TempDir(), false)
	w, err := sqlite.OpenReadOnly(t.Context(), sw.path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	now := time.Now().Add(time.Minute)
	d, err := w.ReportData(t.Context(), now.Add(-24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	var newCards, changed, removed int64
	for _, c := range d.CardChanges {
		newCards, changed, removed = newCards+c.New, changed+c.Changed, removed+c.Removed
	}
	if changed != 2 || removed != 1 || newCards != d.CurrentCards+d.RemovedCards {
		t.Errorf("card changes: %d new, %d changed, %d removed; want %d new, 2 changed, 1 removed",
			newCards, changed, removed, d.CurrentCards+d.RemovedCards)
	}
	var ids []string
	for _, c := range d.ChangedCards {
		ids = append(ids, c.CardID)
		var status bool
		for _, f := range c.Fields {
			status = status || f.Name == "status" && f.Before != f.After
		}
		if !status {
			t.Errorf("card %s: changed fields %+v, want its status", c.CardID, c.Fields)
		}
	}
	slices.Sort(ids)
	want := slices.Sorted(slices.Values(sw.changed))
	if !slices.Equal(ids, want) || d.ChangedCardsTotal != 2 {
		t.Errorf("changed cards %v (total %d), want %v", ids, d.ChangedCardsTotal, want)
	}
	var onLastDay int64
	for _, counts := range d.StatusCounts {
		onLastDay += counts[len(counts)-1]
	}
	if onLastDay != d.CurrentCards || d.RemovedCards != 1 {
		t.Errorf("statuses add up to %d on the last day, %d cards are current (%d removed)", onLastDay, d.CurrentCards, d.RemovedCards)
	}
	if len(d.RunPoints) != sw.runs || len(d.LastRuns) != sw.runs || d.LastSuccessRun != d.LastRuns[0].ID {
		t.Errorf("%d run points, %d last runs, last success %d; want %d runs", len(d.RunPoints), len(d.LastRuns), d.LastSuccessRun, sw.runs)
	}
	if d.RejectedTotal == 0 || len(d.Rejected) == 0 {
		t.Error("no rejected item, the simulator sent odd data")
	}
	if d.Latest == nil || len(d.Latest.Amounts) != 6 {
		t.Fatalf("latest balances %+v", d.Latest)
	}
	var balanceDays int
	for _, b := range d.Balances {
		if b.Amount == "balance" {
			balanceDays++
			if b.Snapshots != int64(sw.runs) && len(d.Days) == 1 {
				t.Errorf("balance day %+v, want %d snapshots", b, sw.runs)
			}
		}
	}
	if balanceDays == 0 {
		t.Error("no balance per day")
	}
	checkCardSums(t, d, sw.srv.Cards())
	// Minutes of history: one slot per run, each with its snapshot.
	if f := d.Fine; f == nil || f.Unit != load.FineRun || len(f.Starts) != sw.runs || len(f.Balances) != sw.runs*5 {
		t.Errorf("fine %+v, want %d runs with 5 amounts each", f, sw.runs)
	}
}

// checkCardSums compares the report's card sums with the simulator's
// truth: balance is typed decimal at scale 2 and, per currency, its
// ordinary cards are all summed, exactly (none is a misfit or without a
// balance; odd items carry no currency); every current card counted.
func checkCardSums(t *testing.T, d load.ReportData, cards []sim.Card) {
	t.Helper()
	if d.BalanceType != "decimal" {
		t.Errorf("balance is typed %q, want decimal", d.BalanceType)
	}
	want := map[string]int64{}
	n := map[string]int64{}
	for _, c := range cards {
		if c.Odd != "" {
			continue
		}
		a, err := money.Parse(c.Balance, 2)
		if err != nil {
			t.Fatal(err)
		}
		want[c.Currency] += a.Minor()
		n[c.Currency]++
	}
	var total int64
	for _, s := range d.CardSums {
		total += s.Cards
		if s.Currency == load.NoCurrency {
			continue
		}
		if s.Sum != money.FromMinor(want[s.Currency], 2).String() || s.Scale != 2 || s.Cards != n[s.Currency] || s.Summed != s.Cards ||
			s.Unparsed != 0 || s.NoBalance != 0 {
			t.Errorf("%s: %+v, want %d cards summing to %s", s.Currency, s, n[s.Currency], money.FromMinor(want[s.Currency], 2))
		}
		delete(want, s.Currency)
	}
	if total != d.CurrentCards || len(want) > 0 {
		t.Errorf("card sums count %d cards of %d current; currencies missing: %v", total, d.CurrentCards, want)
	}
}

// TestRenderYear renders a year of 15-minute snapshots and runs plus the
// simulator's runs, and checks the file: under 512,000 bytes, no script, no
// URL, accessible charts and tables, exact amounts.
func TestRenderYear(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a year of history (35,040 runs and snapshots)")
	}
	dir := t.TempDir()
	sw := buildWarehouse(t, dir, true)
	w, err := sqlite.OpenReadOnly(t.Context(), sw.path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out := filepath.Join(dir, "report.html")
	start := time.Now()
	if err := Write(t.Context(), w, out, Options{Since: 366 * 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a year of 15-minute snapshots: %d bytes, written in %v", len(b), elapsed)
	if keep := os.Getenv("REPORT_YEAR_OUT"); keep != "" {
		// To look at it: REPORT_YEAR_OUT=/tmp/year.html go test ./report -run Year
		if err := os.WriteFile(keep, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(b) >= 512_000 {
		t.Errorf("report of a year is %d bytes, want under 512,000", len(b))
	}
	checkSelfContained(t, b)
	d, err := w.ReportData(t.Context(), time.Now().Add(-366*24*time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if d.RunPoints != nil || len(d.RunDays) < 365 {
		t.Errorf("a year of runs: %d run points, %d run days; want days only", len(d.RunPoints), len(d.RunDays))
	}
	for _, a := range d.Latest.Amounts {
		if a.Null {
			continue
		}
		cell := `<th scope="row" class="name">` + strings.ReplaceAll(a.Name, "_", "_<wbr>") + `</th><td class="n">` + a.Value + `</td>`
		if !bytes.Contains(b, []byte(cell)) {
			t.Errorf("latest %s: %q not in the table", a.Name, cell)
		}
	}
	if !bytes.Contains(b, []byte("connection reset")) || !bytes.Contains(b, []byte("https&#58;//api.example.com/cards")) {
		t.Error("a failed run's error is missing, or its URL is not written with an entity")
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("report mode %v (%v)", fi.Mode(), err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".report.html.*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	// A new report gets the mode it is given (the warehouse's, from the
	// commands), so the page is never more readable than the warehouse.
	private := filepath.Join(dir, "private.html")
	if err := Write(t.Context(), w, private, Options{Since: time.Hour, Mode: 0o640}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(private); err != nil || fi.Mode().Perm()&0o007 != 0 {
		t.Errorf("report written with Mode 0640 has mode %v (%v), want no access for others", fi.Mode(), err)
	}
}

// checkSelfContained fails on anything that would make a browser fetch
// something or run code, and on charts and tables a screen reader cannot
// read.
func checkSelfContained(t *testing.T, b []byte) {
	t.Helper()
	s := strings.ToLower(string(b))
	for _, bad := range []string{"<script", "http://", "https://", "url(", "@import", "@font-face", " src=", " href=", "<link", "<iframe", "<object", "<embed", "<img"} {
		if strings.Contains(s, bad) {
			i := strings.Index(s, bad)
			t.Errorf("the report contains %q: …%s…", bad, s[max(0, i-80):min(len(s), i+80)])
		}
	}
	svgs := regexp.MustCompile(`<svg [^>]*role="img"[^>]*aria-labelledby="([^" ]+) ([^"]+)"[^>]*><title id="([^"]+)">[^<]+</title><desc id="([^"]+)">[^<]+</desc>`).FindAllStringSubmatch(string(b), -1)
	if n := strings.Count(s, "<svg"); n < 6 || len(svgs) != n {
		t.Errorf("%d charts, %d with role=img, a <title> and a <desc>", n, len(svgs))
	}
	for _, m := range svgs {
		if m[1] != m[3] || m[2] != m[4] {
			t.Errorf("chart labelled by %s %s, title %s, desc %s", m[1], m[2], m[3], m[4])
		}
	}
	if tables, heads := strings.Count(s, "<table"), strings.Count(s, "<thead>"); tables < 2 || tables != heads || tables != strings.Count(s, "<caption") {
		t.Errorf("%d tables, %d with a header row, %d with a caption", tables, heads, strings.Count(s, "<caption"))
	}
	if !strings.Contains(s, "prefers-color-scheme:dark") || !strings.Contains(s, "@media print") {
		t.Error("no dark mode or print rules")
	}
}

func TestTicksExact(t *testing.T) {
	tests := []struct {
		lo, hi int64
		want   []int64
	}{
		{0, 10, []int64{0, 5, 10}},
		{3123707, 3143707, []int64{3120000, 3125000, 3130000, 3135000, 3140000, 3145000}},
		{-7, 3, []int64{-10, -5, 0, 5}},
		{5, 5, []int64{5, 6}},
	}
	for _, tt := range tests {
		if got := ticks(tt.lo, tt.hi); !slices.Equal(got, tt.want) {
			t.Errorf("ticks(%d, %d) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestEscapeDefangsURLs(t *testing.T) {
	got := escape(`Get "https://api.example.com/x?a=1&b=<2>"`)
	want := `Get &#34;https&#58;//api.example.com/x?a=1&amp;b=&lt;2&gt;&#34;`
	if got != want {
		t.Errorf("escape = %s, want %s", got, want)
	}
}

func BenchmarkWriteYear(b *testing.B) {
	dir := b.TempDir()
	sw := buildWarehouse(b, dir, true)
	w, err := sqlite.OpenReadOnly(b.Context(), sw.path)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	out := filepath.Join(dir, "report.html")
	opts := Options{Since: 366 * 24 * time.Hour}
	b.Run("Write", func(b *testing.B) {
		for b.Loop() {
			if err := Write(b.Context(), w, out, opts); err != nil {
				b.Fatal(err)
			}
		}
		if fi, err := os.Stat(out); err == nil {
			b.ReportMetric(float64(fi.Size()), "bytes")
		}
	})
	d, err := w.ReportData(b.Context(), time.Now().Add(-opts.Since), time.Now())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ReportData", func(b *testing.B) {
		for b.Loop() {
			if _, err := w.ReportData(b.Context(), time.Now().Add(-opts.Since), time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Render", func(b *testing.B) {
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if err := Render(&buf, d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestTrimToData(t *testing.T) {
	day := func(n int) time.Time { return time.Date(2025, 3, n, 0, 0, 0, 0, time.UTC) }
	d := load.ReportData{Days: []time.Time{day(1), day(2), day(3), day(4), day(5)},
		Statuses: []string{"active"}, StatusCounts: [][]int64{{0, 0, 0, 2, 2}},
		RunDays: []load.RunDay{{Day: day(4), Runs: 1}}, Balances: []load.BalanceDay{{Amount: "balance", Day: day(5)}}}
	got, from := trimToData(d)
	if from != "2025-03-04" || len(got.Days) != 2 || !slices.Equal(got.StatusCounts[0], []int64{2, 2}) {
		t.Errorf("trimmed to %s: %v %v", from, got.Days, got.StatusCounts)
	}
	if len(d.StatusCounts[0]) != 5 {
		t.Error("the input was changed")
	}
	d.StatusCounts = [][]int64{{0, 1, 0, 2, 2}}
	if got, from := trimToData(d); from != "2025-03-02" || len(got.Days) != 4 {
		t.Errorf("cards listed on day 2: trimmed to %s, %d days", from, len(got.Days))
	}
	if _, from := trimToData(load.ReportData{Days: d.Days}); from != "" {
		t.Errorf("no data: trimmed to %s", from)
	}
}
