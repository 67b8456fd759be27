package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// statusFixture is a summary with something in every field, and the time
// status runs at.
func statusFixture() (load.Summary, time.Time) {
	// Run 8 has its measured duration; run 7 was recorded before duration_ms.
	measured := int64(299876)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	yes, no := true, false
	sum := load.Summary{Path: "/var/lib/cardsync/cardsync.db", Account: "default", SchemaVersion: 11,
		Runs: []load.Run{
			{ID: 9, Trigger: "schedule", Status: "running", StartedAt: *at(10 * time.Minute), HeartbeatAt: *at(9 * time.Minute), Version: "v1.2.3",
				RunCounts: load.RunCounts{Pages: 2, CardsSeen: 200, Requests: 3}},
			{ID: 8, Trigger: "schedule", Status: "failed", StartedAt: *at(70 * time.Minute), FinishedAt: at(65 * time.Minute), HeartbeatAt: *at(65 * time.Minute),
				WalkConsistent: &no, Error: "walk: page 3:\nEOF", AccountError: "GET /account: 503", Version: "v1.2.3", DurationMS: &measured,
				RunCounts: load.RunCounts{Pages: 5, CardsSeen: 500, CardsNew: 1, CardsChanged: 2, CardsReturned: 1, CardsRemoved: 3, CardsRejected: 4,
					Requests: 7, RateLimited: 1, SecretsRedacted: 2}},
			{ID: 7, Trigger: "backfill", Status: "succeeded", StartedAt: *at(130 * time.Minute), FinishedAt: at(125 * time.Minute), HeartbeatAt: *at(125 * time.Minute),
				WalkConsistent: &yes, Version: "v1.2.2"},
		},
		Checkpoint: load.Checkpoint{Stream: "cards", RunID: 9, NextPage: 3, TotalPages: 5, UpdatedAt: *at(9 * time.Minute), InProgress: true},
		Cards:      520, CurrentCards: 500, RemovedCards: 20, PendingRemovals: 3, CardVersions: 900, Snapshots: 12, LastSnapshotAt: at(65 * time.Minute),
		RejectedCards: 6, LastRunRejected: 4, LastSuccessAt: at(125 * time.Minute), LastSuccessRun: 7, FailuresInARow: 1,
		LastWalkConsistent: &no, LastWalkAt: at(65 * time.Minute),
		RecentWalks: []load.WalkOutcome{{WalkID: 5, FinishedAt: *at(65 * time.Minute), Outcome: "inconsistent", Reason: "empty_page", Pages: []int{3}},
			{WalkID: 4, FinishedAt: *at(125 * time.Minute), Outcome: "complete"}},
		Running: 1, WALBytes: 3 * 4096, DatabaseBytes: 5 << 20,
	}
	return sum, now
}

// TestStatusGolden renders the status model of fixed facts as text and
// JSON and compares them with testdata/status: the JSON document and the
// SQLite text are byte for byte what status printed before the model
// moved to package worker; with PostgreSQL the text has no WAL (there is
// no WAL file) and the JSON is unchanged (wal_bytes 0). Since the next
// run is counted as the daemon counts it (worker.NextRun, from a run's
// end), an account whose run is still in progress at 12:00 is next due at
// 13:00 (it was 12:00, counted from the run's start: a time already due).
func TestStatusGolden(t *testing.T) {
	sum, now := statusFixture()
	sch, err := cron.ParseStandard("0 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	set := worker.StatusSettings{Cron: "0 * * * *", Timezone: "UTC", Schedule: inLocation{sch, time.UTC}, RunTimeout: 30 * time.Minute}
	kept := []load.BeforeRestoreFile{
		{Path: "/var/lib/cardsync/cardsync.db.before-restore-20260401T030000Z", ReplacedAt: time.Date(2026, 4, 1, 3, 0, 0, 0, time.UTC), Bytes: 2 << 20},
		{Path: "/var/lib/cardsync/cardsync.db.before-restore", Bytes: 100},
	}
	sqlite := func(holder int) worker.AccountStatus {
		return worker.NewAccountStatus(worker.StatusFacts{Summary: sum, LockHolder: holder, BeforeRestore: kept,
			RulesVersion: 1, OutdatedBackups: []string{"/var/lib/cardsync/backups/cardsync-20260401T030000Z.db"}}, set, now)
	}
	pgsum := sum
	pgsum.Path, pgsum.SchemaVersion, pgsum.WALBytes, pgsum.CardsFlatStale = "postgres://cardsync@db.example/cardsync", 7, 0, true
	pg := func(lease *worker.LeaseStatus) worker.AccountStatus {
		return worker.NewAccountStatus(worker.StatusFacts{Summary: pgsum, Postgres: true, Lease: lease, RulesVersion: redact.RulesVersion}, set, now)
	}
	beta := sqlite(4242)
	beta.Account = "beta"
	cases := map[string]struct {
		accounts []worker.AccountStatus
		many     bool
	}{
		"sqlite-dead": {[]worker.AccountStatus{sqlite(0)}, false},
		"sqlite-many": {[]worker.AccountStatus{sqlite(0), beta}, true},
		"pg-live":     {[]worker.AccountStatus{pg(&worker.LeaseStatus{Holder: "host-a:1", FencingToken: 3, ExpiresAt: "2026-05-01T12:01:00Z"})}, false},
		"pg-free":     {[]worker.AccountStatus{pg(&worker.LeaseStatus{Holder: "host-a:1", FencingToken: 3, ExpiresAt: "2026-05-01T11:01:00Z", Expired: true})}, false},
		"pg-none":     {[]worker.AccountStatus{pg(nil)}, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rep := worker.NewStatusReport(now, c.accounts)
			var j bytes.Buffer
			enc := json.NewEncoder(&j)
			enc.SetIndent("", "  ")
			if err := enc.Encode(rep); err != nil {
				t.Fatal(err)
			}
			var txt bytes.Buffer
			printStatus(&txt, rep, c.many, worker.CommandLine{})
			for ext, got := range map[string][]byte{".json": j.Bytes(), ".txt": txt.Bytes()} {
				if os.Getenv("CARDSYNC_UPDATE_GOLDEN") != "" {
					if err := os.WriteFile(filepath.Join("testdata", "status", name+ext), got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(filepath.Join("testdata", "status", name+ext))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s%s:\n%s\nwant:\n%s", name, ext, got, want)
				}
			}
		})
	}
}

// TestPostgresStatusShowsWhatApplies: on PostgreSQL, status shows the
// database's schema version (the highest in schema_migrations) and no WAL
// line, in text and JSON (wal_bytes stays 0, as the document promises an
// integer).
func TestPostgresStatusShowsWhatApplies(t *testing.T) {
	url := pgURL(t)
	_, e := newEnv(t, sim.Options{Seed: 3, Cards: 10})
	delete(e.vars, "CARDSYNC_WAREHOUSE_PATH")
	e.vars["CARDSYNC_WAREHOUSE_URL"] = url
	e.vars["CARDSYNC_CLUSTER_HOLDER"] = "test-host:1"
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := e.run(t.Context(), "status")
	want := fmt.Sprintf(" (schema v%d, ", postgres.SchemaVersion())
	if code != 0 || !strings.Contains(out, "\nwarehouse  ") || !strings.Contains(out, want) || strings.Contains(out, "WAL") {
		t.Errorf("status: exit %d, want %q and no WAL:\n%s\n%s", code, want, out, errOut)
	}
	code, out, _ = e.run(t.Context(), "status", "-json")
	var doc struct {
		Accounts []struct {
			Warehouse map[string]any `json:"warehouse"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || len(doc.Accounts) != 1 {
		t.Fatalf("status -json: exit %d, %v\n%s", code, err, out)
	}
	wh := doc.Accounts[0].Warehouse
	if wh["schema_version"] != float64(postgres.SchemaVersion()) || wh["wal_bytes"] != float64(0) {
		t.Errorf("status -json warehouse = %v, want schema_version %d, wal_bytes 0", wh, postgres.SchemaVersion())
	}
}

// TestStatusNamesPhantomPages: a backfill against an API whose total_pages
// is inflated (2000 for 30 cards) reads 4 pages, says why its walk was
// inconsistent, and status (text and -json) names phantom_pages on page 1;
// a second such walk makes the account unhealthy.
func TestStatusNamesPhantomPages(t *testing.T) {
	srv, e := newEnv(t, sim.Options{Seed: 4, Cards: 30, Faults: []sim.Fault{{Endpoint: sim.EndpointCards, Kind: sim.FaultPhantomPages}}})
	for i := range 2 {
		code, out, errOut := e.run(t.Context(), "backfill")
		if code != 0 || !strings.Contains(out+errOut, "walk inconsistent: phantom_pages on page 1") {
			t.Fatalf("backfill %d: exit %d\n%s%s", i+1, code, out, errOut)
		}
	}
	if n := srv.Stats().Requests[sim.EndpointCards]; n != 8 {
		t.Errorf("%d /cards requests for two walks, want 8 (pages 1 to 4 each)", n)
	}
	code, out, _ := e.run(t.Context(), "status")
	if code != exitFailure || !strings.Contains(out, "INCONSISTENT (phantom_pages on page 1, 2 in a row)") {
		t.Errorf("status: exit %d\n%s", code, out)
	}
	var doc struct {
		Accounts []struct {
			LastWalk struct {
				Reason *string `json:"inconsistent_reason"`
				Pages  []int   `json:"inconsistent_pages"`
			} `json:"last_walk"`
		} `json:"accounts"`
	}
	_, out, _ = e.run(t.Context(), "status", "-json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("status -json: %v\n%s", err, out)
	}
	if len(doc.Accounts) != 1 || doc.Accounts[0].LastWalk.Reason == nil || *doc.Accounts[0].LastWalk.Reason != "phantom_pages" ||
		!slices.Equal(doc.Accounts[0].LastWalk.Pages, []int{1}) {
		t.Errorf("status -json last_walk: %s", out)
	}
}

// TestStatusScheduleOnlyWhenNamed: status judges an account by the
// schedule only when something syncs it on one: the configuration names
// it, or serve ran one of its runs. A warehouse synced by hand with no
// schedule named shows none, and is not judged stale or overdue.
func TestStatusScheduleOnlyWhenNamed(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 5, Cards: 10})
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ := e.run(t.Context(), "status")
	if code != 0 || !strings.Contains(out, "schedule   none (") || strings.Contains(out, "next run due") {
		t.Errorf("status without a schedule: exit %d\n%s", code, out)
	}
	_, out, _ = e.run(t.Context(), "status", "-json")
	var doc struct {
		Accounts []struct {
			Schedule worker.ScheduleStatus `json:"schedule"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Accounts) != 1 {
		t.Fatalf("status -json: %v\n%s", err, out)
	}
	if s := doc.Accounts[0].Schedule; s.Cron != "" || s.NextDueAt != nil || s.StaleAfter != nil {
		t.Errorf("status -json schedule without one named: %+v", s)
	}
	e.vars["CARDSYNC_SCHEDULE_CRON"] = "@every 1h"
	if code, out, _ := e.run(t.Context(), "status"); code != 0 || !strings.Contains(out, `schedule   "@every 1h" in UTC; next run due `) {
		t.Errorf("status with [schedule] cron from the environment: exit %d\n%s", code, out)
	}

	served := config.Settings{}
	for _, c := range []struct {
		trigger string
		want    bool
	}{{worker.TriggerSchedule, true}, {worker.TriggerBackfill, false}, {worker.TriggerDemo, false}} {
		runs := []load.Run{{ID: 2, Trigger: worker.TriggerBackfill}, {ID: 1, Trigger: c.trigger}}
		if got := onSchedule(served, runs); got != c.want {
			t.Errorf("onSchedule with no schedule named and runs by %s, %s = %v, want %v", runs[0].Trigger, runs[1].Trigger, got, c.want)
		}
	}
	if !onSchedule(config.Settings{ScheduleSet: true}, nil) {
		t.Error("onSchedule with a schedule named = false")
	}
}
