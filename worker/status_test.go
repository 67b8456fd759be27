package worker

import (
	"os"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
)

// TestNewAccountStatusJudgesTheWriter: a run marked running is dead
// unless its writer is live: with SQLite a process holding the run lock
// (shown as the writer), with PostgreSQL a live lease (no PID shown: it is
// on another host). The WAL applies to SQLite alone.
func TestNewAccountStatusJudgesTheWriter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	sum := load.Summary{Account: "acme", Runs: []load.Run{{ID: 3, Status: load.StatusRunning,
		StartedAt: now.Add(-time.Minute), HeartbeatAt: now.Add(-time.Second)}}}
	live := &LeaseStatus{Holder: "host-b:1", FencingToken: 2, ExpiresAt: "2026-05-01T12:01:00Z"}
	lapsed := &LeaseStatus{Holder: "host-b:1", FencingToken: 2, ExpiresAt: "2026-05-01T11:59:00Z", Expired: true}
	tests := []struct {
		name  string
		facts StatusFacts
		dead  bool
		pid   int
		wal   bool
	}{
		{"sqlite, no holder", StatusFacts{LockHolder: 0}, true, 0, true},
		{"sqlite, held", StatusFacts{LockHolder: 77}, false, 77, true},
		{"sqlite, held by an unknown PID", StatusFacts{LockHolder: -1}, false, 0, true},
		{"postgres, live lease", StatusFacts{Postgres: true, Lease: live}, false, 0, false},
		{"postgres, lapsed lease", StatusFacts{Postgres: true, Lease: lapsed}, true, 0, false},
		{"postgres, no lease", StatusFacts{Postgres: true}, true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.facts.Summary = sum
			a := NewAccountStatus(tt.facts, StatusSettings{}, now)
			if dead := len(a.Writer.DeadRuns) == 1 && a.Runs[0].Status == "dead"; dead != tt.dead {
				t.Errorf("dead runs %v, run status %q: want dead %v", a.Writer.DeadRuns, a.Runs[0].Status, tt.dead)
			}
			if pid := a.Writer.PID; tt.pid == 0 && pid != nil || tt.pid != 0 && (pid == nil || *pid != tt.pid) {
				t.Errorf("writer PID %v, want %d", pid, tt.pid)
			}
			if a.Warehouse.WAL != tt.wal || a.Lease != tt.facts.Lease {
				t.Errorf("WAL %v, lease %v: want %v, %v", a.Warehouse.WAL, a.Lease, tt.wal, tt.facts.Lease)
			}
			if a.Writer.DeadRuns == nil || a.Warehouse.BeforeRestore == nil || a.Runs == nil || a.LastWalk.Pages == nil {
				t.Error("a list of the report is nil (null in JSON, where the document promises an array)")
			}
		})
	}
	if rep := NewStatusReport(now, []AccountStatus{{Healthy: true}, {Healthy: false}}); rep.Healthy || rep.SchemaVersion != StatusSchemaVersion {
		t.Errorf("report %+v: want unhealthy when an account is, schema version %d", rep, StatusSchemaVersion)
	}
}

// TestSQLiteStatusFacts: the sole account of a file whose whole-file lock
// is held has a writer; an account of several is judged by its own lock.
func TestSQLiteStatusFacts(t *testing.T) {
	f := newFixture(t, sim.Options{Cards: 5, Seed: 3})
	if _, err := f.job.Run(t.Context(), TriggerBackfill, Options{}); err != nil {
		t.Fatal(err)
	}
	lock := f.job.Lock.(*sqlite.Lock)
	if err := lock.Acquire(); err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	facts, err := ReadStatusFacts(t.Context(), f.wh, load.DefaultAccount, true)
	if err != nil {
		t.Fatal(err)
	}
	if facts.Postgres || facts.Summary.CurrentCards != 5 || facts.LockHolder != os.Getpid() {
		t.Errorf("facts %+v: want 5 cards, this process (%d) as the writer", facts, os.Getpid())
	}
	if got := f.wh.WriterPID(false); got != 0 {
		t.Errorf("account of several: writer %d, want 0 (its own lock is free)", got)
	}
}

// TestPostgresStatusFacts: a read-only handle reads the database's schema
// version (schema_migrations) and the account's live lease.
func TestPostgresStatusFacts(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	pgStore(t, url, "acme", "replica-a", time.Minute, true)
	wh, err := postgres.Open(t.Context(), url, postgres.Options{Common: load.Options{Account: "acme"}, RequireLease: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	facts, err := ReadStatusFacts(t.Context(), wh, "acme", false)
	if err != nil {
		t.Fatal(err)
	}
	if !facts.Postgres || facts.Summary.SchemaVersion != postgres.SchemaVersion() || !facts.Lease.Live() || facts.Lease.Holder != "replica-a" {
		t.Errorf("facts %+v, lease %+v: want schema version %d, replica-a's live lease", facts, facts.Lease, postgres.SchemaVersion())
	}
	a := NewAccountStatus(facts, StatusSettings{}, time.Now())
	if a.Warehouse.WAL || a.Warehouse.SchemaVersion != postgres.SchemaVersion() {
		t.Errorf("warehouse %+v: want no WAL, schema version %d", a.Warehouse, postgres.SchemaVersion())
	}
}
