package sqlite

import (
	"reflect"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
)

// TestWalkRecordsPageAnomalies: each commit of a page with an anomaly
// records the first reason and appends the page on the open walk (across
// commits and runs), the walk's close keeps that reason before its own,
// and Summary.RecentWalks reports the last two judged walks.
func TestWalkRecordsPageAnomalies(t *testing.T) {
	ctx := t.Context()
	w, _, _ := openTest(t, load.Options{})
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 15), 1, 45))
	p2 := page(2, nil, 1, 45)
	p2.Anomaly = load.ReasonEmptyPage
	commit(t, w, run, p2)
	run2 := startRun(t, w) // a resumed walk
	p3 := page(3, idRange(31, 45), 1, 45)
	p3.Anomaly = load.ReasonTotalPagesChanged
	commit(t, w, run2, p3)
	sum, err := w.WalkSummary(ctx, load.StreamCards)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reason != load.ReasonEmptyPage || !reflect.DeepEqual(sum.AnomalyPages, []int{2, 3}) {
		t.Errorf("open walk: reason %q pages %v, want empty_page on [2 3]", sum.Reason, sum.AnomalyPages)
	}
	if _, err := w.FinishWalk(ctx, run2, load.StreamCards, load.WalkEnd{Reason: load.ReasonCountMismatch}); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, w, `SELECT inconsistent_reason || ' ' || inconsistent_pages FROM sync_walks ORDER BY walk_id DESC LIMIT 1`); got != "empty_page [2,3]" {
		t.Errorf("closed walk: %q, want the page reason kept: empty_page [2,3]", got)
	}
	// A walk with no page anomaly takes its close's reason; a complete one none.
	run3 := startRun(t, w)
	commit(t, w, run3, page(1, idRange(1, 15), 1, 45))
	if _, err := w.FinishWalk(ctx, run3, load.StreamCards, load.WalkEnd{Reason: load.ReasonCountMismatch}); err != nil {
		t.Fatal(err)
	}
	run4 := startRun(t, w)
	commit(t, w, run4, page(1, idRange(1, 15), 1, 15))
	if _, err := w.FinishWalk(ctx, run4, load.StreamCards, load.WalkEnd{Consistent: true, Reason: load.ReasonCountMismatch}); err != nil {
		t.Fatal(err)
	}
	st, err := w.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []load.WalkOutcome
	for _, o := range st.RecentWalks {
		got = append(got, load.WalkOutcome{Outcome: o.Outcome, Reason: o.Reason, Pages: o.Pages})
	}
	want := []load.WalkOutcome{{Outcome: "complete"}, {Outcome: "inconsistent", Reason: load.ReasonCountMismatch}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("recent walks %+v, want %+v", got, want)
	}
}

func TestParsePages(t *testing.T) {
	for in, want := range map[string][]int{"": nil, "[2]": {2}, "[2,3,2]": {2, 3}, "not json": nil} {
		if got := sqlshare.ParsePages(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParsePages(%q) = %v, want %v", in, got, want)
		}
	}
}
