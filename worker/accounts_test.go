package worker

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/sim"
)

// TestTwoAccountsInOneFileAreIndependent syncs two simulators, whose card
// ids overlap, into one warehouse file as accounts alpha and beta: each
// account's cards, removals (pending, confirmed, held by the guard),
// checkpoint, runs and snapshots are its own.
func TestTwoAccountsInOneFileAreIndependent(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "w.db")
	a := newFixtureAt(t, path, "alpha", sim.Options{Seed: 31, Cards: 40})
	b := newFixtureAt(t, path, "beta", sim.Options{Seed: 32, Cards: 60})
	if a.srv.Cards()[0].ID != b.srv.Cards()[0].ID {
		t.Fatalf("the simulators' card ids do not overlap (%s, %s): the test proves nothing", a.srv.Cards()[0].ID, b.srv.Cards()[0].ID)
	}
	run := func(f *fixture, name string) Result {
		t.Helper()
		res, err := f.job.Run(ctx, TriggerSchedule, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	run(a, "alpha first run")
	run(b, "beta first run")
	if got := a.currentCards(t); got != 40 {
		t.Errorf("alpha: %d current cards, want 40", got)
	}
	if got := b.currentCards(t); got != 60 {
		t.Errorf("beta: %d current cards, want 60", got)
	}

	// beta loses half its cards: the guard holds them, and only beta's.
	// alpha loses one: pending, then removed, without touching beta's
	// pending cards.
	for _, c := range b.srv.Cards()[:30] {
		b.srv.RemoveCard(c.ID)
	}
	a.srv.RemoveCard(a.srv.Cards()[5].ID)
	if res := run(b, "beta second run"); res.RemovalsHeld != 30 || res.PendingRemovals != 30 {
		t.Errorf("beta second run: held %d, pending %d; want 30, 30", res.RemovalsHeld, res.PendingRemovals)
	}
	if res := run(a, "alpha second run"); res.RemovalsHeld != 0 || res.PendingRemovals != 1 || res.Removed != 0 {
		t.Errorf("alpha second run: held %d, pending %d, removed %d; want 0, 1, 0", res.RemovalsHeld, res.PendingRemovals, res.Removed)
	}
	if res := run(a, "alpha third run"); res.Removed != 1 || res.PendingRemovals != 0 {
		t.Errorf("alpha third run: removed %d, pending %d; want 1, 0", res.Removed, res.PendingRemovals)
	}
	checkTwoAccountSummaries(t, a, b)

	// A failed run of alpha leaves alpha's walk open at page 2; beta's
	// next run starts its own walk at page 1 and confirms its held cards.
	a.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultStatus, Status: 403, Pages: []int{2}})
	var se *extract.StatusError
	if _, err := a.job.Run(ctx, TriggerSchedule, Options{}); !errors.As(err, &se) {
		t.Fatalf("alpha faulty run: %v, want a 403", err)
	}
	if cp, _ := a.wh.Checkpoint(ctx, Stream); cp.NextPage != 2 || !cp.InProgress {
		t.Errorf("alpha checkpoint %+v, want next page 2, in progress", cp)
	}
	if cp, _ := b.wh.Checkpoint(ctx, Stream); cp.NextPage != 1 || cp.InProgress {
		t.Errorf("beta checkpoint %+v, want next page 1, no walk open", cp)
	}
	res, err := b.job.Run(ctx, TriggerBackfill, Options{ConfirmRemovals: true})
	if err != nil || res.Resumed || res.StartPage != 1 || res.Removed != 30 {
		t.Errorf("beta confirming run %+v (%v), want a walk from page 1 removing 30", res, err)
	}
	if cp, _ := a.wh.Checkpoint(ctx, Stream); cp.NextPage != 2 {
		t.Errorf("alpha checkpoint after beta's run %+v, want next page 2", cp)
	}
	a.srv.ClearFaults()
	if res := run(a, "alpha resumed run"); !res.Resumed || res.StartPage != 2 {
		t.Errorf("alpha resumed run %+v, want a resume at page 2", res)
	}
	if got, want := a.currentCards(t), 39; got != want {
		t.Errorf("alpha: %d current cards, want %d", got, want)
	}
	if got, want := b.currentCards(t), 30; got != want {
		t.Errorf("beta: %d current cards, want %d", got, want)
	}

	checkSyncHealth(t, a)
}

// checkTwoAccountSummaries checks alpha's and beta's summaries after their
// removals: each account's own counts and runs.
func checkTwoAccountSummaries(t *testing.T, a, b *fixture) {
	t.Helper()
	ctx := t.Context()
	sa, err := a.wh.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.wh.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sa.CurrentCards != 39 || sa.RemovedCards != 1 || sa.PendingRemovals != 0 || sa.RemovalsHeld != 0 {
		t.Errorf("alpha summary: %d current, %d removed, %d pending, %d held; want 39, 1, 0, 0",
			sa.CurrentCards, sa.RemovedCards, sa.PendingRemovals, sa.RemovalsHeld)
	}
	if sb.CurrentCards != 60 || sb.RemovedCards != 0 || sb.PendingRemovals != 30 || sb.RemovalsHeld != 30 {
		t.Errorf("beta summary: %d current, %d removed, %d pending, %d held; want 60, 0, 30, 30",
			sb.CurrentCards, sb.RemovedCards, sb.PendingRemovals, sb.RemovalsHeld)
	}
	if len(sa.Runs) != 3 || len(sb.Runs) != 2 || sa.Snapshots != 3 || sb.Snapshots != 2 {
		t.Errorf("alpha %d runs, %d snapshots; beta %d runs, %d snapshots; want 3, 3, 2, 2",
			len(sa.Runs), sa.Snapshots, len(sb.Runs), sb.Snapshots)
	}
	for _, r := range sb.Runs {
		for _, o := range sa.Runs {
			if r.ID == o.ID {
				t.Errorf("run %d listed by both accounts", r.ID)
			}
		}
	}
}

// checkSyncHealth checks sync_health of a's file: one row per account, no
// 'default'.
func checkSyncHealth(t *testing.T, a *fixture) {
	t.Helper()
	ctx := t.Context()
	rows, err := a.wh.DB().QueryContext(ctx, `SELECT account, current_cards, pending_removals, last_status FROM sync_health`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][3]any{}
	for rows.Next() {
		var acct, status string
		var current, pending int
		if err := rows.Scan(&acct, &current, &pending, &status); err != nil {
			t.Fatal(err)
		}
		got[acct] = [3]any{current, pending, status}
	}
	want := map[string][3]any{"alpha": {39, 0, "succeeded"}, "beta": {30, 0, "succeeded"}}
	if len(got) != len(want) || got["alpha"] != want["alpha"] || got["beta"] != want["beta"] {
		t.Errorf("sync_health %v, want %v", got, want)
	}
}
