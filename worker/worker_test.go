package worker

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
)

func TestInconsistency(t *testing.T) {
	tests := []struct {
		name string
		sum  load.WalkSummary
		want string
	}{
		{name: "consistent", sum: load.WalkSummary{WalkID: 1, DistinctIDs: 30, FirstTotal: 30, LastTotal: 30}},
		{name: "empty account", sum: load.WalkSummary{WalkID: 1}},
		{name: "total changed", sum: load.WalkSummary{WalkID: 1, DistinctIDs: 30, FirstTotal: 30, LastTotal: 31, TotalChanged: true}, want: "total changed"},
		{name: "duplicates", sum: load.WalkSummary{WalkID: 1, DistinctIDs: 29, DuplicateIDs: 1, FirstTotal: 30, LastTotal: 30}, want: "more than one page"},
		{name: "missed cards", sum: load.WalkSummary{WalkID: 1, DistinctIDs: 29, FirstTotal: 30, LastTotal: 30}, want: "distinct cards"},
		{name: "one card seen", sum: load.WalkSummary{WalkID: 1, DistinctIDs: 1, FirstTotal: 2, LastTotal: 2}, want: "saw 1 distinct card but"},
		{name: "no page committed", sum: load.WalkSummary{}, want: "no page"},
		{name: "empty page", sum: load.WalkSummary{WalkID: 1, DistinctIDs: 30, FirstTotal: 30, LastTotal: 30, Reason: "empty_page", AnomalyPages: []int{2}},
			want: "a page before the last was empty"},
		{name: "a page reason comes first", sum: load.WalkSummary{WalkID: 1, DistinctIDs: 30, DuplicateIDs: 15, FirstTotal: 45, LastTotal: 45,
			Reason: "repeated_page", AnomalyPages: []int{2, 3}}, want: "the same cards as the page before"},
		{name: "phantom pages", sum: load.WalkSummary{WalkID: 1, DistinctIDs: 30, FirstTotal: 30, LastTotal: 30, Reason: "phantom_pages", AnomalyPages: []int{1}},
			want: "never requested the rest"},
		{name: "fractional pagination", sum: load.WalkSummary{WalkID: 1, DistinctIDs: 38, FirstTotal: 38, LastTotal: 38, Reason: "fractional_pagination", AnomalyPages: []int{1}},
			want: "had a fraction"},
	}
	reasons := map[string]string{"total changed": "total_changed", "duplicates": "duplicate_ids", "missed cards": "count_mismatch", "one card seen": "count_mismatch",
		"no page committed": "no_pages", "empty page": "empty_page", "a page reason comes first": "repeated_page",
		"phantom pages": "phantom_pages", "fractional pagination": "fractional_pagination"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, got := inconsistency(tt.sum)
			if (got == "") != (tt.want == "") || (tt.want != "" && !strings.Contains(got, tt.want)) {
				t.Errorf("inconsistency(%+v) = %q, want %q", tt.sum, got, tt.want)
			}
			if bad := english.Miscounted(got); len(bad) > 0 {
				t.Errorf("inconsistency(%+v) = %q: a count of 1 with a plural, %q", tt.sum, got, bad)
			}
			if reason != reasons[tt.name] || (reason != "" && !slices.Contains(load.WalkReasons(), reason)) {
				t.Errorf("reason %q, want %q (one of load.WalkReasons)", reason, reasons[tt.name])
			}
		})
	}
	// The client's page anomalies are the warehouse's page reasons.
	for _, a := range extract.Anomalies() {
		if !slices.Contains(load.WalkReasons(), string(a)) {
			t.Errorf("extract anomaly %q is not in load.WalkReasons", a)
		}
	}
}

func TestInterruptedRunResumes(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 2, Cards: 100}) // 7 pages
	ctx, cancel := context.WithCancel(t.Context())
	f.srv.OnPageServed(func(page int) {
		if page == 3 {
			cancel()
		}
	})
	res, err := f.job.Run(ctx, TriggerBackfill, Options{})
	if !errors.Is(err, ErrInterrupted) || res.Status != "interrupted" {
		t.Fatalf("first run: status %q err %v, want interrupted", res.Status, err)
	}
	cp, err := f.wh.Checkpoint(t.Context(), Stream)
	if err != nil {
		t.Fatal(err)
	}
	// The cancel comes while page 3 is being served: pages 1 and 2 are
	// committed, and page 3 too when its response reaches the client before
	// the cancel does (a race on loopback: about one run in twenty).
	if !cp.InProgress || cp.NextPage != res.Pages+1 || cp.NextPage < 3 || cp.NextPage > 4 {
		t.Fatalf("checkpoint %+v after %d committed pages, want next page 3 (or 4) in progress", cp, res.Pages)
	}
	next := cp.NextPage
	f.srv.OnPageServed(nil)
	res, err = f.job.Run(t.Context(), TriggerBackfill, Options{})
	if err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	if !res.Resumed || res.StartPage != next || res.Pages != 8-next {
		t.Errorf("resumed run %+v, want resume at page %d with %d pages", res, next, 8-next)
	}
	if !res.WalkConsistent {
		t.Errorf("a resumed walk of an unchanged account must be consistent: %s", res.Inconsistency)
	}
	if got := f.currentCards(t); got != 100 {
		t.Errorf("%d current cards, want 100", got)
	}
	if extra := extraFetches(f.srv.Stats()); extra > 1 {
		t.Errorf("%d pages fetched twice across one interruption, want at most 1", extra)
	}
}

func TestFailedRunKeepsCheckpoint(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 4, Cards: 100})
	f.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultStatus, Status: 403, Pages: []int{3}})
	res, err := f.job.Run(t.Context(), TriggerBackfill, Options{})
	var se *extract.StatusError
	if !errors.As(err, &se) || se.StatusCode != 403 || res.Status != "failed" {
		t.Fatalf("run: status %q err %v, want failed with a 403", res.Status, err)
	}
	cp, _ := f.wh.Checkpoint(t.Context(), Stream)
	if cp.NextPage != 3 {
		t.Errorf("checkpoint next page %d, want 3 (page 3 refused)", cp.NextPage)
	}
	f.srv.ClearFaults()
	res, err = f.job.Run(t.Context(), TriggerBackfill, Options{})
	if err != nil || !res.Resumed || res.StartPage != 3 {
		t.Fatalf("second run %+v err %v, want a resume at page 3", res, err)
	}
	if got := f.currentCards(t); got != 100 {
		t.Errorf("%d current cards, want 100", got)
	}
}

func TestRestartDiscardsCheckpoint(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 4, Cards: 40})
	ctx, cancel := context.WithCancel(t.Context())
	f.srv.OnPageServed(func(page int) {
		if page == 1 {
			cancel()
		}
	})
	if _, err := f.job.Run(ctx, TriggerBackfill, Options{}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("first run: %v", err)
	}
	f.srv.OnPageServed(nil)
	res, err := f.job.Run(t.Context(), TriggerBackfill, Options{Restart: true})
	if err != nil || res.Resumed || res.StartPage != 1 || res.Pages != 3 {
		t.Fatalf("restart run %+v err %v, want a fresh walk of 3 pages", res, err)
	}
}

func TestEmptyAccountAndFinishedCheckpoint(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 1, Cards: 0})
	res, err := f.job.Run(t.Context(), TriggerBackfill, Options{})
	if err != nil || !res.WalkConsistent || res.Cards != 0 {
		t.Fatalf("empty account run %+v err %v", res, err)
	}
}

func TestSecondRunOnlySeesChanges(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 8, Cards: 50})
	if _, err := f.job.Run(t.Context(), TriggerSchedule, Options{}); err != nil {
		t.Fatal(err)
	}
	cards := f.srv.Cards()
	f.srv.UpdateCard(cards[0].ID)
	f.srv.RemoveCard(cards[20].ID)
	res, err := f.job.Run(t.Context(), TriggerSchedule, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.New != 0 || res.Changed != 1 || res.Unchanged != 48 || res.Removed != 0 || res.PendingRemovals != 1 {
		t.Errorf("second run %+v, want 1 changed, 48 unchanged, 0 removed, 1 pending removal", res)
	}
	if res.AuthRequests != 0 {
		t.Errorf("second run made %d token requests; the token in hand is valid", res.AuthRequests)
	}
	// The removal is confirmed by the next consistent walk that misses it.
	res, err = f.job.Run(t.Context(), TriggerSchedule, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed != 0 || res.Unchanged != 49 || res.Removed != 1 || res.PendingRemovals != 0 {
		t.Errorf("third run %+v, want 49 unchanged, 1 removed, 0 pending", res)
	}
	if got := f.currentCards(t); got != 49 {
		t.Errorf("%d current cards, want 49", got)
	}
	// The removed card comes back unchanged: returned, not changed, in
	// the Result and in sync_runs.
	f.srv.RestoreCard(cards[20])
	res, err = f.job.Run(t.Context(), TriggerSchedule, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Returned != 1 || res.Changed != 0 || res.Unchanged != 49 || res.Cards != 50 {
		t.Errorf("fourth run %+v, want 1 returned, 0 changed, 49 unchanged, 50 cards", res)
	}
	var returned, changed int64
	if err := f.wh.DB().QueryRowContext(t.Context(), `SELECT cards_returned, cards_changed FROM sync_runs WHERE run_id = ?`, res.RunID).Scan(&returned, &changed); err != nil ||
		returned != 1 || changed != 0 {
		t.Errorf("sync_runs of the fourth run: cards_returned %d, cards_changed %d (%v); want 1, 0", returned, changed, err)
	}
	if got := f.currentCards(t); got != 50 {
		t.Errorf("%d current cards, want 50", got)
	}
}

// TestDriftSkippedCardIsNotRemoved reproduces offset drift that no count
// detects: after page 2 is served, a card on page 1 is removed and one is
// added at the end. The walk looks consistent but skipped a card still
// listed (the first card of page 2 shifted onto page 1); it must not be
// marked removed, and the truly removed card must be, one walk later.
func TestDriftSkippedCardIsNotRemoved(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 9, Cards: 45}) // 3 pages
	if _, err := f.job.Run(t.Context(), TriggerSchedule, Options{}); err != nil {
		t.Fatal(err)
	}
	cards := f.srv.Cards()
	gone, skipped := cards[3].ID, cards[30].ID // page 1; first card of page 3 shifts onto page 2
	f.srv.OnPageServed(func(page int) {
		if page == 2 {
			f.srv.RemoveCard(gone)
			f.srv.AddCard()
		}
	})
	res, err := f.job.Run(t.Context(), TriggerSchedule, Options{})
	f.srv.OnPageServed(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.WalkConsistent || res.Removed != 0 || res.PendingRemovals != 1 {
		t.Fatalf("drifting run %+v, want a walk that looks consistent, 0 removed, 1 pending", res)
	}
	pending := func() string {
		var id string
		if err := f.wh.DB().QueryRowContext(t.Context(), `SELECT coalesce(group_concat(card_id), '') FROM removal_pending`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	if got := pending(); got != skipped {
		t.Errorf("pending after the drifting walk = %q, want the skipped card %s", got, skipped)
	}
	for _, want := range []struct{ removed, pending int }{{0, 1}, {1, 0}} {
		res, err := f.job.Run(t.Context(), TriggerSchedule, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Removed != want.removed || res.PendingRemovals != want.pending {
			t.Errorf("quiet run %d: removed %d, pending %d; want %d, %d", res.RunID, res.Removed, res.PendingRemovals, want.removed, want.pending)
		}
	}
	if got := f.currentCards(t); got != 45 {
		t.Errorf("%d current cards, want 45", got)
	}
}

// TestResumeAfterLastPageCommitted covers a crash between the last page's
// commit and the end of the walk: the checkpoint points past the last page.
func TestResumeAfterLastPageCommitted(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 6, Cards: 30}) // 2 pages
	runID, err := f.wh.StartRun(t.Context(), TriggerBackfill, "test")
	if err != nil {
		t.Fatal(err)
	}
	cards := f.srv.Cards()
	for page := 1; page <= 2; page++ {
		var batch []load.Card
		for _, c := range cards[(page-1)*15 : page*15] {
			batch = append(batch, load.Card{ID: c.ID, Data: c.JSON()})
		}
		if _, err := f.wh.CommitPage(t.Context(), runID, load.Page{Stream: Stream, Number: page, TotalPages: 2, TotalItems: 30, Cards: batch, FetchedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	// The process died here: the run is still "running", the walk open.
	res, err := f.job.Run(t.Context(), TriggerBackfill, Options{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !res.Resumed || res.StartPage != 3 || !res.WalkConsistent || res.Cards != 0 {
		t.Errorf("run %+v, want a resume past the last page that closes a consistent walk", res)
	}
	if got := f.currentCards(t); got != 30 {
		t.Errorf("%d current cards, want 30", got)
	}
}

func TestAuditRetentionPrunesOldRuns(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 3, Cards: 30})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.job.Now = func() time.Time { return now }
	f.job.AuditRetention = time.Hour
	// The warehouse stamps with its own clock; move both together.
	if _, err := f.job.Run(t.Context(), TriggerSchedule, Options{}); err != nil {
		t.Fatal(err)
	}
	db := f.wh.DB()
	count := func() int {
		var n int
		if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM run_pages`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := count(); got != 2 {
		t.Fatalf("%d audit rows after the first run, want 2", got)
	}
	if _, err := db.ExecContext(t.Context(), `UPDATE sync_runs SET started_at = '2025-12-31T20:00:00Z' WHERE run_id = 1`); err != nil {
		t.Fatal(err)
	}
	// Only a page that changes something gets an audit row: change a card
	// on each of the two pages.
	cards := f.srv.Cards()
	for _, c := range []sim.Card{cards[0], cards[15]} {
		if !f.srv.UpdateCard(c.ID) {
			t.Fatalf("card %s not in the simulator", c.ID)
		}
	}
	if _, err := f.job.Run(t.Context(), TriggerSchedule, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 2 {
		t.Errorf("%d audit rows after the second run, want only its own 2 (the first run is 4h old, retention 1h)", got)
	}
	// A third run finds nothing new: no audit row, the second run's stay.
	if _, err := f.job.Run(t.Context(), TriggerSchedule, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 2 {
		t.Errorf("%d audit rows after a run that changed nothing, want the second run's 2", got)
	}
}

func TestRunDeadlineIsAFailure(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 2, Cards: 100})
	ctx := &expiring{Context: t.Context(), expire: make(chan struct{})}
	f.srv.OnPageServed(func(page int) {
		if page == 2 {
			close(ctx.expire)
		}
	})
	res, err := f.job.Run(ctx, TriggerSchedule, Options{})
	if err == nil || errors.Is(err, ErrInterrupted) || res.Status != "failed" {
		t.Fatalf("status %q err %v, want failed (a deadline is not an interruption)", res.Status, err)
	}
	runs, err := f.wh.Runs(t.Context(), 1)
	if err != nil || len(runs) != 1 || runs[0].Status != "failed" || !strings.Contains(runs[0].Error, "deadline") {
		t.Errorf("run row %+v, %v; want failed with the deadline in its error", runs, err)
	}
}

// TestAccountFailureDoesNotStopTheWalk: an account read that fails after
// its retries, or whose body cannot be parsed, leaves no snapshot and a
// reason in sync_runs.account_error; the walk runs and the run succeeds.
func TestAccountFailureDoesNotStopTheWalk(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fault func(f *fixture)
		want  string
	}{
		{"5xx past max_wait", func(f *fixture) {
			f.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointAccount, Kind: sim.FaultStatus, Status: 503})
		}, "503"},
		{"unparseable amount", func(f *fixture) {
			a := f.srv.Account()
			bad := `"1,234.50"`
			a.Balance = &bad
			f.srv.SetAccount(a)
		}, "account.balance"},
		{"HTML instead of JSON", func(f *fixture) {
			f.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointAccount, Kind: sim.FaultHTML, Status: 500})
		}, "not JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, sim.Options{Seed: 5, Cards: 40})
			tt.fault(f)
			var logs strings.Builder
			f.job.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
			res, err := f.job.Run(t.Context(), TriggerSchedule, Options{})
			if err != nil || res.Status != "succeeded" || res.Cards != 40 {
				t.Fatalf("run %+v err %v; want succeeded with 40 cards", res, err)
			}
			if !strings.Contains(res.AccountError, tt.want) {
				t.Errorf("account error %q, want it to mention %q", res.AccountError, tt.want)
			}
			db := f.wh.DB()
			var snapshots int
			var accountErr sql.NullString
			db.QueryRow(`SELECT count(*) FROM account_snapshots`).Scan(&snapshots)
			db.QueryRow(`SELECT account_error FROM sync_runs WHERE run_id = ?`, res.RunID).Scan(&accountErr)
			if snapshots != 0 || !strings.Contains(accountErr.String, tt.want) {
				t.Errorf("snapshots %d, account_error %q; want none and the reason", snapshots, accountErr.String)
			}
			if !strings.Contains(logs.String(), `"level":"ERROR","msg":"no account snapshot this run; the card walk goes on"`) {
				t.Errorf("no error line:\n%s", logs.String())
			}
		})
	}
}

// TestAccountFloatNoiseIsRounded: PHP float noise in an account amount is
// rounded half to even into *_minor, amounts_rounded marks the snapshot and
// raw keeps the exact text.
func TestAccountFloatNoiseIsRounded(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 5, Cards: 3})
	a := f.srv.Account()
	noise, third := "1234.5600000000002", "0.30000000000000004"
	a.Balance, a.AvailableRechargeBalance = &noise, &third
	f.srv.SetAccount(a)
	res, err := f.job.Run(t.Context(), TriggerSchedule, Options{})
	if err != nil || res.AccountError != "" {
		t.Fatalf("run %+v err %v", res, err)
	}
	var balance, recharge, rounded int64
	var raw string
	if err := f.wh.DB().QueryRow(`SELECT balance_minor, available_recharge_balance_minor, amounts_rounded, raw FROM account_snapshots`).
		Scan(&balance, &recharge, &rounded, &raw); err != nil {
		t.Fatal(err)
	}
	if balance != 123456 || recharge != 30 || rounded != 1 || !strings.Contains(raw, noise) || !strings.Contains(raw, third) {
		t.Errorf("balance %d recharge %d rounded %d raw %s; want 123456, 30, 1 and the exact text", balance, recharge, rounded, raw)
	}
}

// TestRejectedCardsLoggedOncePerRun: a page item that cannot be a card is
// quarantined and logged at warn once per run, with its reason; the run
// succeeds with the rest of the cards.
func TestRejectedCardsLoggedOncePerRun(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 5, Cards: 30})
	first := f.srv.Cards()[0].ID
	bad := regexp.MustCompile(`"id":` + first + `,`)
	f.job.Client = rewriteClient(t, f, func(b []byte) []byte { return bad.ReplaceAll(b, []byte(`"id":null,`)) })
	for run := 1; run <= 2; run++ {
		var logs strings.Builder
		f.job.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		res, err := f.job.Run(t.Context(), TriggerSchedule, Options{})
		if err != nil || res.Status != "succeeded" || res.Rejected != 1 || res.Cards != 29 {
			t.Fatalf("run %d: %+v err %v; want succeeded, 29 cards and 1 rejected", run, res, err)
		}
		if n := strings.Count(logs.String(), `"level":"WARN","msg":"card set aside in rejected_cards; the rest of the page is stored"`); n != 1 {
			t.Errorf("run %d: %d warn lines, want 1:\n%s", run, n, logs.String())
		}
		if !strings.Contains(logs.String(), `"reason":"unusable id: id is null, not an integer or a string"`) {
			t.Errorf("run %d: the reason is not logged:\n%s", run, logs.String())
		}
	}
	var rows, times int
	f.wh.DB().QueryRow(`SELECT count(*), max(times) FROM rejected_cards`).Scan(&rows, &times)
	if rows != 1 || times != 2 {
		t.Errorf("rejected_cards: %d rows, times %d; want 1 row seen twice", rows, times)
	}
}
