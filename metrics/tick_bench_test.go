package metrics

import (
	"path/filepath"
	"testing"

	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// benchTick measures what a replica's Tick costs (one read of the
// account's facts) on a warehouse holding one account of 20,000 cards.
func benchTick(b *testing.B, target worker.Target) {
	m := New(Options{Accounts: []string{"acme"}})
	j := newTargetJob(b, m, target, "acme", sim.Options{Cards: 20000, Seed: 1})
	if _, err := j.job.Run(b.Context(), worker.TriggerBackfill, worker.Options{}); err != nil {
		b.Fatal(err)
	}
	tick := j.obs.(worker.TickObserver)
	for b.Loop() {
		tick.Tick(b.Context())
	}
}

func BenchmarkTickSQLite(b *testing.B) {
	benchTick(b, worker.Target{Path: filepath.Join(b.TempDir(), "w.db")})
}

func BenchmarkTickPostgres(b *testing.B) {
	srv := pgServerTB(b)
	benchTick(b, worker.Target{URL: srv.NewDatabase(b), Holder: "bench", LeaseTTL: 60e9})
}
