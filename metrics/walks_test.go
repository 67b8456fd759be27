package metrics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// TestInconsistentWalksCountedAndJudged: cardsync_walks_inconsistent_total
// exists at 0 for every account and reason, rises by reason with each
// inconsistent walk over the simulator, and /healthz turns 503 at the
// second inconsistent walk in a row, naming the reason and the page, also
// after a restart (seeded from the warehouse).
func TestInconsistentWalksCountedAndJudged(t *testing.T) {
	j := newSimJob(t, sim.Options{Seed: 4, Cards: 45}) // 3 pages
	fams := families(t, j.m)
	for _, r := range WalkReasons {
		if v := mustValue(t, fams, "cardsync_walks_inconsistent_total", "account=default,reason="+r); v != 0 {
			t.Errorf("reason %s at start-up = %v, want 0", r, v)
		}
	}
	run := func(step string) worker.Result {
		t.Helper()
		res, err := j.job.Run(t.Context(), worker.TriggerSchedule, worker.Options{})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return res
	}
	run("a good walk")
	j.sim.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultEmptyPage})
	for i, want := range []struct {
		code   int
		reason string
	}{
		{200, "ok: "},
		{503, "unhealthy: the last two walks were inconsistent (empty_page on page 2; empty_page on page 2)"},
	} {
		res := run(fmt.Sprintf("inconsistent walk %d", i+1))
		if res.WalkConsistent || res.InconsistentReason != load.ReasonEmptyPage {
			t.Fatalf("walk %d: consistent %v reason %q, want empty_page", i+1, res.WalkConsistent, res.InconsistentReason)
		}
		if got := mustValue(t, families(t, j.m), "cardsync_walks_inconsistent_total", "account=default,reason=empty_page"); got != float64(i+1) {
			t.Errorf("walk %d: counter = %v, want %d", i+1, got, i+1)
		}
		if code, body := get(t, j.m.Handler(), "/healthz"); code != want.code || !strings.Contains(body, want.reason) {
			t.Errorf("walk %d: /healthz = %d %q, want %d containing %q", i+1, code, body, want.code, want.reason)
		}
	}
	// A restarted daemon knows from the warehouse.
	m := New(Options{})
	if err := m.Refresh(t.Context(), j.wh); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, m.Handler(), "/healthz"); code != 503 || !strings.Contains(body, "empty_page on page 2") {
		t.Errorf("after restart: /healthz = %d %q, want 503 naming empty_page on page 2", code, body)
	}
	// One consistent walk clears it.
	j.sim.ClearFaults()
	run("a good walk again")
	if code, body := get(t, j.m.Handler(), "/healthz"); code != 200 {
		t.Errorf("after a consistent walk: /healthz = %d %q, want 200", code, body)
	}
}
