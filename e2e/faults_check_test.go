//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// checkRefused checks a fault the run must refuse: its exit code and
// error, the warehouse unchanged (content hash before), the checkpoint not
// past the faulty page, and a clean run after it.
func checkRefused(t *testing.T, tc faultCase, up *upstream, d *deployment, code int, errOut, before string) {
	t.Helper()
	if code != tc.wantCode {
		t.Errorf("backfill exit %d, want %d\nstderr: %s", code, tc.wantCode, errOut)
	}
	if !strings.Contains(errOut, tc.wantErr) {
		t.Errorf("stderr does not say %q:\n%s", tc.wantErr, errOut)
	}
	run := lastRun(t, d.db)
	if run.Status != "failed" || !strings.Contains(run.Error, tc.wantErr) {
		t.Errorf("run %d: status %s, error %q; want failed with %q", run.ID, run.Status, run.Error, tc.wantErr)
	}
	assertStructural(t, d.db)
	if after := contentHash(t, d.db); after != before {
		t.Errorf("the failed run changed the warehouse content")
	}
	st := d.status(t)
	if st.Checkpoint.NextPage > tc.failPage {
		t.Errorf("checkpoint next_page %d moved past the faulty page %d", st.Checkpoint.NextPage, tc.failPage)
	}
	t.Logf("exit %d, checkpoint next_page %d, error: %s", code, st.Checkpoint.NextPage, run.Error)
	up.ClearFaults()
	d.backfillOK(t)
	assertTruth(t, up, d.db)
	if run := lastRun(t, d.db); run.WalkConsistent.Int64 != 1 {
		t.Errorf("clean run after the fault: walk_consistent %v, want 1", run.WalkConsistent)
	}
}

// checkFlaggedInconsistent checks a fault that makes the walk inconsistent:
// nothing removed or pending, then the card gone (goneID) pending after a
// quiet run and removed after a second.
func checkFlaggedInconsistent(t *testing.T, up *upstream, d *deployment, code int, out, errOut, goneID string) {
	t.Helper()
	if code != 0 {
		t.Fatalf("backfill exit %d, want 0\nstderr: %s", code, errOut)
	}
	assertStructural(t, d.db)
	run := lastRun(t, d.db)
	if !run.WalkConsistent.Valid || run.WalkConsistent.Int64 != 0 {
		t.Errorf("walk_consistent %v, want 0", run.WalkConsistent)
	}
	if ids := removedCards(t, d.db); len(ids) != 0 {
		t.Errorf("an inconsistent walk marked cards removed: %v", ids)
	}
	if ids := pendingCards(t, d.db); len(ids) != 0 {
		t.Errorf("an inconsistent walk made cards pending removal: %v", ids)
	}
	if !strings.Contains(out, "walk inconsistent") {
		t.Errorf("backfill output does not report the inconsistent walk:\n%s", out)
	}
	up.ClearFaults()
	// First quiet run: the card is missed once, pending.
	d.backfillOK(t)
	assertStructural(t, d.db)
	if ids := pendingCards(t, d.db); len(ids) != 1 || ids[0] != goneID {
		t.Errorf("after a quiet run pending cards are %v, want [%s]", ids, goneID)
	}
	if ids := removedCards(t, d.db); len(ids) != 0 {
		t.Errorf("one quiet run marked %v removed; removal takes two consistent walks", ids)
	}
	// Second quiet run: confirmed.
	d.backfillOK(t)
	assertTruth(t, up, d.db)
	if ids := removedCards(t, d.db); len(ids) != 1 || ids[0] != goneID {
		t.Errorf("after two quiet runs removed cards are %v, want [%s]", ids, goneID)
	}
	if ids := pendingCards(t, d.db); len(ids) != 0 {
		t.Errorf("after two quiet runs pending cards are %v, want none", ids)
	}
}
