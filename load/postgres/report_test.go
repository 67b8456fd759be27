package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/account"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/reportrows"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/money"
)

// Both warehouses serve the report.
var (
	_ load.Reporter = (*Warehouse)(nil)
	_ load.Reporter = (*sqlite.Warehouse)(nil)
)

// reportCard is a card of the report fixture: id and the rest of its JSON
// members.
func reportCard(id, members string) load.Card {
	return load.Card{ID: id, Data: []byte(`{"id":"` + id + `"` + members + `}`)}
}

// reportPage is one page of the fixture's walks, its total counting the
// rejected items too.
func reportPage(cards []load.Card, rejected ...load.Rejection) load.Page {
	return load.Page{Stream: load.StreamCards, Number: 1, TotalPages: 1, TotalItems: len(cards) + len(rejected),
		FetchedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Duration: 120 * time.Millisecond,
		BodySHA256: strings.Repeat("ab", 32), Requests: 1, Cards: cards, Rejected: rejected}
}

func amount(minor int64) *money.Amount { a := money.FromMinor(minor, 2); return &a }

// writeReportHistory writes three days of history through the store's
// public methods: five runs (succeeded, failed, running; 429s and
// retries), account snapshots with odd amounts (31337.07, -0.07, 0.10,
// null, a negative whole amount), card statuses of every JSON type, card
// versions new, changed (a nested object, a long multibyte value),
// removed (two walks) and returned, and rejected items with long
// multibyte data (one JSON, one not, one rejected twice).
func writeReportHistory(t *testing.T, b backend) {
	t.Helper()
	ctx := t.Context()
	longText := strings.Repeat("日本語", 150) // 1,350 bytes, 450 characters
	rejected := []load.Rejection{
		{Index: 8, CardID: "r1", Reason: "bad item: ünïcode", Data: []byte(`{"id":"r1","text":"` + longText + `","n":1.50}`)},
		{Index: 9, Reason: "not JSON", Data: []byte(strings.Repeat("€ ", 200))},
	}
	first := []load.Card{
		reportCard("1", `,"status":"active","balance":"10.00","note":"x"`),
		reportCard("2", `,"status":"active","limits":{"z":1,"a":[1,2],"mm":"é"},"currency":"USD","balance":"0.10"`),
		reportCard("3", `,"status":"frozen","currency":"USD","balance":0.20`),
		reportCard("4", `,"status":true,"currency":"EUR","balance":"90071992547409.93"`),
		reportCard("5", `,"status":{"b":1,"a":"x"},"currency":"EUR","balance":"n/a"`),
		reportCard("6", ``),
		reportCard("7", `,"status":null`),
		reportCard("8", `,"status":3`),
	}
	snapshot := func(run int64, s account.Snapshot) {
		t.Helper()
		if err := b.s.SaveAccount(ctx, run, load.Account{Snapshot: s}); err != nil {
			t.Fatalf("SaveAccount: %v", err)
		}
	}
	walk := func(run int64, cards []load.Card, rejected ...load.Rejection) {
		t.Helper()
		commit(t, b.s, run, reportPage(cards, rejected...))
		if _, err := b.s.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
			t.Fatalf("FinishWalk: %v", err)
		}
	}
	finish := func(run int64, r load.RunResult) {
		t.Helper()
		if err := b.s.FinishRun(ctx, run, r); err != nil {
			t.Fatalf("FinishRun: %v", err)
		}
	}
	applied := int64(3)

	// Day 1, 12:00: the first walk.
	run := startRun(t, b.s)
	walk(run, first, rejected...)
	snapshot(run, account.Snapshot{Balance: amount(3133707), CardsBalance: amount(-7), AvailableRechargeBalance: amount(10),
		ReachAmount: amount(0), Authorizations: amount(123456789012345), AppliedCardCount: &applied})
	b.clk.Advance(95 * time.Second)
	finish(run, load.RunResult{Status: load.StatusSucceeded, RateLimited: 2, Retries: 3})

	// Day 1, 19:00: cards 1 and 2 change, 6 is not listed (pending).
	b.clk.Advance(7 * time.Hour)
	run = startRun(t, b.s)
	second := append([]load.Card(nil), first...)
	second[0] = reportCard("1", `,"status":"frozen","balance":"10.00","note":"`+longText+`"`)
	second[1] = reportCard("2", `,"status":"active","limits":{"z":1,"a":[1,2,3],"mm":"é"},"currency":"USD","balance":"0.10"`)
	second = append(second[:5], second[6:]...)
	walk(run, second, rejected[0])
	snapshot(run, account.Snapshot{Balance: amount(-100), CardsBalance: amount(-7), AvailableRechargeBalance: amount(10)})
	b.clk.Advance(30 * time.Minute)
	snapshot(run, account.Snapshot{Balance: amount(3133707), CardsBalance: amount(1)})
	b.clk.Advance(61 * time.Second)
	finish(run, load.RunResult{Status: load.StatusFailed, Error: "upstream said no", RateLimited: 1})

	// Day 2, 10:00: 6 missed again (removed), 3 changes status.
	b.clk.Set(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	run = startRun(t, b.s)
	third := append([]load.Card(nil), second...)
	third[2] = reportCard("3", `,"status":"active","currency":"USD","balance":0.20`)
	walk(run, third)
	snapshot(run, account.Snapshot{Balance: amount(99), CardsBalance: amount(-7)})
	b.clk.Advance(4 * time.Second)
	finish(run, load.RunResult{Status: load.StatusSucceeded})

	// Day 3, 09:00: 6 returns.
	b.clk.Set(time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC))
	run = startRun(t, b.s)
	walk(run, append(third, first[5]))
	for k := range 3 {
		snapshot(run, account.Snapshot{Balance: amount(int64(k*1000 - 1500)), CardsBalance: amount(-7), AvailableRechargeBalance: amount(10),
			TransferAmount: amount(int64(-k))})
		b.clk.Advance(10 * time.Minute)
	}
	finish(run, load.RunResult{Status: load.StatusSucceeded})

	// Day 3, 11:00: a run still running.
	b.clk.Set(time.Date(2026, 3, 3, 11, 0, 0, 0, time.UTC))
	startRun(t, b.s)
	b.clk.Set(time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC))
}

// TestReportDataAsSQLite: the same history written through each
// warehouse's public methods gives the same ReportData, field by field,
// for periods that start before, inside and after it (bounds with a
// fraction of a second). Only Path differs (the file; the redacted URL)
// and is zeroed before comparing.
func TestReportDataAsSQLite(t *testing.T) {
	bs := backends(t, 0.5, 0)
	if len(bs) < 2 {
		t.Skip("no PostgreSQL server")
	}
	now := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	periods := []struct{ since, now time.Time }{
		{time.Date(2026, 3, 1, 11, 0, 0, 500e6, time.UTC), now},
		{time.Date(2026, 3, 1, 12, 0, 0, 300e6, time.UTC), now.Add(700 * time.Millisecond)},
		{time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 3, 9, 10, 0, 0, time.UTC)},
		{now.Add(24 * time.Hour), now.Add(48 * time.Hour)},
	}
	got := make([][]load.ReportData, len(bs))
	for i, b := range bs {
		writeReportHistory(t, b)
		for _, p := range periods {
			d, err := b.s.(load.Reporter).ReportData(t.Context(), p.since, p.now)
			if err != nil {
				t.Fatalf("%s: ReportData(%v, %v): %v", b.name, p.since, p.now, err)
			}
			if d.Path == "" {
				t.Errorf("%s: no Path", b.name)
			}
			d.Path = ""
			got[i] = append(got[i], d)
		}
	}
	for k := range periods {
		lite, pg := got[0][k], got[1][k]
		if !reflect.DeepEqual(lite, pg) {
			l, _ := json.MarshalIndent(lite, "", " ")
			p, _ := json.MarshalIndent(pg, "", " ")
			t.Errorf("period %d: PostgreSQL's ReportData differs from SQLite's:\n%s", k, lineDiff(string(l), string(p)))
		}
	}

	// What the comparison covers is there: a few figures checked against
	// the history itself.
	d := got[1][0]
	checkReportFigures(t, d)
	checkReportFineAndValues(t, d)
}

// checkReportFigures checks the latest amounts, the daily balances, the
// statuses, the totals and the card sums of d, the ReportData of
// writeReportHistory's whole history, against the history itself.
func checkReportFigures(t *testing.T, d load.ReportData) {
	t.Helper()
	latest := map[string]load.NamedAmount{}
	for _, a := range d.Latest.Amounts {
		latest[a.Name] = a
	}
	if latest["balance"].Value != "5.00" || latest["cards_balance"].Value != "-0.07" || latest["available_recharge_balance"].Value != "0.10" ||
		latest["transfer_amount"].Value != "-0.02" || !latest["reach_amount"].Null {
		t.Errorf("latest amounts %+v", d.Latest.Amounts)
	}
	var sawBig bool
	for _, b := range d.Balances {
		if b.Amount == "authorizations" && b.MaxText == "1234567890123.45" {
			sawBig = true
		}
		if b.Amount == "balance" && b.Day.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) &&
			(b.FirstText != "31337.07" || b.MinText != "-1.00" || b.LastText != "31337.07" || b.Snapshots != 3) {
			t.Errorf("day 1 balance %+v", b)
		}
	}
	if !sawBig {
		t.Errorf("no authorizations of 1234567890123.45 in %+v", d.Balances)
	}
	// At the end: cards 6 and 7 without one, 2 and 3 active, one each of
	// the rest; ties by name, bytewise.
	wantStatuses := []string{"(no status)", "active", "1", "3", "frozen", `{"a":"x","b":1}`}
	if !reflect.DeepEqual(d.Statuses, wantStatuses) {
		t.Errorf("statuses %q, want %q", d.Statuses, wantStatuses)
	}
	if d.ChangedCardsTotal != 3 || len(d.Rejected) != 2 || d.RejectedTotal != 2 || len(d.RunPoints) != 5 || d.RunDays[0].MaxMillis != (30*60+61)*1000 {
		t.Errorf("changed %d, rejected %d of %d, run points %d, day 1 runs %+v", d.ChangedCardsTotal, len(d.Rejected), d.RejectedTotal, len(d.RunPoints), d.RunDays[0])
	}
	// Card sums by currency: the first walk's balances are four decimals
	// and one "n/a", so card_fields types balance decimal (more than half
	// of its values) and "n/a" is not an amount; the cards without a
	// balance are counted apart.
	wantSums := []load.CardSum{
		{Currency: "EUR", Cards: 2, Summed: 1, Sum: "90071992547409.93", Scale: 2, Unparsed: 1},
		{Currency: "USD", Cards: 2, Summed: 2, Sum: "0.30", Scale: 2},
		{Currency: load.NoCurrency, Cards: 4, Summed: 1, Sum: "10.00", Scale: 2, NoBalance: 3},
	}
	if !reflect.DeepEqual(d.CardSums, wantSums) || d.BalanceType != "decimal" {
		t.Errorf("card sums %+v of a %q balance, want %+v of a decimal one", d.CardSums, d.BalanceType, wantSums)
	}
}

// checkReportFineAndValues checks d's per-run slots against its per-day
// figures, and the cut of long values in changed cards and rejected items.
func checkReportFineAndValues(t *testing.T, d load.ReportData) {
	t.Helper()
	if d.Fine == nil || d.Fine.Unit != load.FineRun || len(d.Fine.Starts) != 5 || len(d.Fine.Balances) == 0 {
		t.Errorf("a period of 49 hours and 5 runs: fine %+v, want one slot per run", d.Fine)
	} else {
		lastOf := func(counts [][]int64) (n int64) {
			for _, c := range counts {
				n += c[len(c)-1]
			}
			return n
		}
		changes := func(cs []load.ChangeDay) (n [4]int64) {
			for _, c := range cs {
				n[0], n[1], n[2], n[3] = n[0]+c.New, n[1]+c.Changed, n[2]+c.Removed, n[3]+c.Returned
			}
			return n
		}
		if lastOf(d.Fine.StatusCounts) != lastOf(d.StatusCounts) || changes(d.Fine.CardChanges) != changes(d.CardChanges) ||
			len(d.Fine.CardChanges) != 4 || d.Fine.CardChanges[0].Run != d.Fine.Runs[0] || d.Fine.StatusCounts[0][0] == 0 {
			t.Errorf("per run: statuses %v, changes %+v; per day: statuses %v, changes %+v", d.Fine.StatusCounts, d.Fine.CardChanges, d.StatusCounts, d.CardChanges)
		}
	}
	for _, c := range d.ChangedCards {
		for _, f := range c.Fields {
			if c.CardID == "2" && f.After != `{"a":[1,2,3],"mm":"é","z":1}` {
				t.Errorf("card 2's limits after = %s, want canonical JSON", f.After)
			}
			if c.CardID == "1" && f.Name == "note" && (!strings.HasSuffix(f.After, "…") || len(f.After) > reportrows.ReportValueBytes+len("…")) {
				t.Errorf("card 1's note not cut: %d bytes", len(f.After))
			}
		}
	}
	for _, r := range d.Rejected {
		if !r.DataTruncated || len([]rune(r.Data)) != reportrows.ReportValueBytes {
			t.Errorf("rejected %d: %d characters, truncated %v", r.ID, len([]rune(r.Data)), r.DataTruncated)
		}
	}
}

// lineDiff shows the lines of a and b that differ, for a failure message.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(al), len(bl)) && len(out) < 40; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("line %d:\n  sqlite:   %s\n  postgres: %s", i+1, x, y))
		}
	}
	return strings.Join(out, "\n")
}

// TestReportDataPerHourAsSQLite: 410 runs five minutes apart (more than
// load.ReportFineRuns, and than reportrows.ReportRunPoints, in under 72 hours)
// are drawn per UTC hour (the smallest bucket giving at most 72 slots), runs included, the same from both warehouses: a
// snapshot and a card walk each run, a card's status changing every
// fourth.
func TestReportDataPerHourAsSQLite(t *testing.T) {
	bs := backends(t, 0.5, 0)
	if len(bs) < 2 {
		t.Skip("no PostgreSQL server")
	}
	const runs = reportrows.ReportRunPoints + 10
	got := make([]load.ReportData, len(bs))
	for i, b := range bs {
		ctx := t.Context()
		start := b.clk.Now()
		for k := range runs {
			b.clk.Set(start.Add(time.Duration(k) * 5 * time.Minute))
			run := startRun(t, b.s)
			status := []string{"active", "frozen"}[k/4%2]
			commit(t, b.s, run, reportPage([]load.Card{reportCard("1", `,"status":"`+status+`","currency":"HKD","balance":"1.5"`),
				reportCard("2", `,"status":"active","currency":"HKD","balance":"2.25"`)}))
			if _, err := b.s.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
				t.Fatal(err)
			}
			if err := b.s.SaveAccount(ctx, run, load.Account{Snapshot: account.Snapshot{Balance: amount(int64(k * 100))}}); err != nil {
				t.Fatal(err)
			}
			b.clk.Advance(3 * time.Second)
			if err := b.s.FinishRun(ctx, run, load.RunResult{Status: load.StatusSucceeded}); err != nil {
				t.Fatal(err)
			}
		}
		now := b.clk.Now().Add(time.Minute)
		d, err := b.s.(load.Reporter).ReportData(ctx, now.Add(-90*24*time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		d.Path = ""
		got[i] = d
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		l, _ := json.MarshalIndent(got[0], "", " ")
		p, _ := json.MarshalIndent(got[1], "", " ")
		t.Errorf("PostgreSQL's ReportData differs from SQLite's:\n%s", lineDiff(string(l), string(p)))
	}
	f := got[1].Fine
	if f == nil || f.Unit != load.FineBucket || f.Bucket != time.Hour || len(f.Starts) < 35 || len(f.Starts) > 36 || got[1].RunPoints != nil {
		t.Fatalf("%d runs in 34 hours: fine %+v, want per hour", runs, f)
	}
	var hourRuns int64
	for _, r := range f.RunHours {
		hourRuns += r.Runs
		if r.Runs > 12 || r.MaxMillis != 3000 {
			t.Errorf("hour %+v: want at most 12 runs of 3 s", r)
		}
	}
	if hourRuns != runs {
		t.Errorf("%d runs in the hours, want %d", hourRuns, runs)
	}
	var snapshots int64
	for _, b := range f.Balances {
		snapshots += b.Snapshots
		if b.Day.Minute() != 0 || b.Day.Second() != 0 {
			t.Errorf("balance slot %v is not an hour", b.Day)
		}
	}
	if snapshots != runs || len(f.Statuses) != 2 {
		t.Errorf("%d snapshots in the hours, statuses %q", snapshots, f.Statuses)
	}
	if want := (load.CardSum{Currency: "HKD", Cards: 2, Summed: 2, Sum: "3.75", Scale: 2}); len(got[1].CardSums) != 1 || got[1].CardSums[0] != want || got[1].BalanceType != "decimal" {
		t.Errorf("card sums %+v, want %+v", got[1].CardSums, want)
	}
}

// TestReportAbandonedUnknown: an abandoned run has no duration_ms, and its
// stamps stop at its last heartbeat, so both warehouses give it an
// unknown duration (RunPoint.Unknown, 0 in the day's sums), not the 10 s
// from its stamps.
func TestReportAbandonedUnknown(t *testing.T) {
	bs := backends(t, 0.5, 0)
	if len(bs) < 2 {
		t.Skip("no PostgreSQL server")
	}
	type abandoner interface {
		AbandonStaleRuns(ctx context.Context, staleAfter time.Duration) ([]load.StaleRun, error)
	}
	got := make([]load.ReportData, len(bs))
	for i, b := range bs {
		b.clk.Set(time.Date(2026, 3, 3, 11, 0, 0, 0, time.UTC))
		run := startRun(t, b.s)
		b.clk.Advance(10 * time.Second)
		if stale, err := b.s.(abandoner).AbandonStaleRuns(t.Context(), time.Second); err != nil || len(stale) != 1 || stale[0].ID != run {
			t.Fatalf("%s: AbandonStaleRuns = %+v, %v", b.name, stale, err)
		}
		now := b.clk.Now().Add(time.Minute)
		d, err := b.s.(load.Reporter).ReportData(t.Context(), now.Add(-24*time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		d.Path = ""
		got[i] = d
		if len(d.RunPoints) != 1 || !d.RunPoints[0].Unknown || d.RunPoints[0].Millis != 0 || d.RunPoints[0].Status != load.StatusAbandoned {
			t.Errorf("%s: run points %+v, want one abandoned of unknown duration", b.name, d.RunPoints)
		}
		if len(d.RunDays) != 1 || d.RunDays[0].MaxMillis != 0 || d.RunDays[0].TotalMillis != 0 || d.RunDays[0].Abandoned != 1 {
			t.Errorf("%s: run days %+v, want 0 ms", b.name, d.RunDays)
		}
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		l, _ := json.MarshalIndent(got[0], "", " ")
		p, _ := json.MarshalIndent(got[1], "", " ")
		t.Errorf("PostgreSQL's ReportData differs from SQLite's:\n%s", lineDiff(string(l), string(p)))
	}
}

// TestReportDataPerSecondAsSQLite: 90 runs in 14 s (more than
// load.ReportFineRuns) are drawn per second, the same from both
// warehouses, each slot with its snapshots and runs.
func TestReportDataPerSecondAsSQLite(t *testing.T) {
	bs := backends(t, 0.5, 0)
	if len(bs) < 2 {
		t.Skip("no PostgreSQL server")
	}
	got := make([]load.ReportData, len(bs))
	for i, b := range bs {
		ctx := t.Context()
		start := time.Date(2026, 3, 3, 11, 0, 0, 0, time.UTC)
		for k := range 90 {
			b.clk.Set(start.Add(time.Duration(k) * 14 * time.Second / 89))
			run := startRun(t, b.s)
			if err := b.s.SaveAccount(ctx, run, load.Account{Snapshot: account.Snapshot{Balance: amount(int64(k * 100))}}); err != nil {
				t.Fatal(err)
			}
			if err := b.s.FinishRun(ctx, run, load.RunResult{Status: load.StatusSucceeded}); err != nil {
				t.Fatal(err)
			}
		}
		now := start.Add(time.Minute)
		d, err := b.s.(load.Reporter).ReportData(ctx, now.Add(-90*24*time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		d.Path = ""
		got[i] = d
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		l, _ := json.MarshalIndent(got[0], "", " ")
		p, _ := json.MarshalIndent(got[1], "", " ")
		t.Errorf("PostgreSQL's ReportData differs from SQLite's:\n%s", lineDiff(string(l), string(p)))
	}
	f := got[1].Fine
	if f == nil || f.Unit != load.FineBucket || f.Bucket != time.Second || len(f.Starts) < 2 || len(f.Starts) > load.ReportFineRuns {
		t.Fatalf("90 runs in 14 s: fine %+v, want per second", f)
	}
	var runs, snapshots int64
	for _, r := range f.RunHours {
		runs += r.Runs
	}
	for _, b := range f.Balances {
		if b.Amount == "balance" {
			snapshots += b.Snapshots
		}
	}
	if runs != 90 || snapshots != 90 {
		t.Errorf("%d runs and %d snapshots in the slots, want 90 each", runs, snapshots)
	}
}
