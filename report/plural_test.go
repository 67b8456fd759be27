package report

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
)

// TestReportOneIsSingular renders a report whose every count is 1 (one
// day, one run with one of each problem, one change with one field beyond
// those shown, one rejected item) and finds no "1 <plural>" in its text.
func TestReportOneIsSingular(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	d, err := load.NewReportData("/w.db", now.Add(-time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	day := d.Days[0]
	at := now.Add(-30 * time.Minute)
	ms := int64(1500)
	d.LastSuccessAt, d.LastSuccessRun, d.CurrentCards, d.RemovedCards, d.PendingRemovals = &at, 1, 1, 1, 1
	d.Statuses, d.StatusCounts = []string{"active"}, [][]int64{{1}}
	d.CardChanges = []load.ChangeDay{{Day: day, New: 1, Changed: 1, Removed: 1, Returned: 1}}
	d.RunDays = []load.RunDay{{Day: day, Runs: 1, Succeeded: 1, MaxMillis: ms, TotalMillis: ms, MaxExact: true,
		RateLimited: 1, Retries: 1, Rejected: 1, RemovalsHeld: 1}}
	d.FirstRunAt = &at
	d.LastRuns = []load.Run{{ID: 1, Trigger: "backfill", Status: "succeeded", StartedAt: at, FinishedAt: &at, HeartbeatAt: at, DurationMS: &ms,
		RunCounts: load.RunCounts{Pages: 1, CardsSeen: 1, CardsNew: 1, Requests: 1}}}
	var fields []load.FieldChange
	for i := range maxFieldsShown + 1 {
		fields = append(fields, load.FieldChange{Name: fmt.Sprintf("f%d", i), Before: "a", After: "b"})
	}
	d.ChangedCards, d.ChangedCardsTotal = []load.CardChange{{CardID: "1", Version: 2, At: at, RunID: 1, Fields: fields}}, 1
	d.Rejected, d.RejectedTotal = []load.RejectedItem{{ID: 1, Reason: "no id", Times: 1, FirstAt: at, LastAt: at, Data: "{}"}}, 1
	var b bytes.Buffer
	if err := Render(&b, d); err != nil {
		t.Fatal(err)
	}
	// Each element's text on a line of its own: a chart's axis tick ("1")
	// and its unit ("cards") are two elements, not one phrase.
	text := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(b.String(), "\n"))
	for _, want := range []string{"1 of 1 change,", "and 1 more field", "1 of 1 item set aside", "1 answer 429", "1 item rejected", "1 removal held"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if bad := english.Miscounted(text); len(bad) > 0 {
		t.Errorf("a count of 1 with a plural: %q\n%s", bad, text)
	}
}
