package load

import (
	"time"
)

// Run statuses stored in sync_runs.status.
const (
	StatusRunning     = "running"
	StatusSucceeded   = "succeeded"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	StatusAbandoned   = "abandoned"
)

// Run triggers stored in sync_runs.trigger.
const (
	TriggerSchedule = "schedule"
	TriggerBackfill = "backfill"
	TriggerDemo     = "demo"
)

// StreamCards is the checkpoint stream of the card walk.
const StreamCards = "cards"

// StaleRun is a run AbandonStaleRuns marked abandoned.
type StaleRun struct {
	ID      int64
	Trigger string
}

// RunResult is how a run ended. The counters are deltas not yet passed to
// CommitPage.
type RunResult struct {
	Status         string // succeeded, failed, interrupted (or abandoned)
	Error          string // empty on success
	WalkConsistent *bool  // nil when no walk finished in this run
	Requests       int64
	Retries        int64
	RateLimited    int64
	AuthRequests   int64
	// Duration is the run's wall-clock duration as the worker measured it
	// on a monotonic clock, from its row to its result; stored in
	// sync_runs.duration_ms (milliseconds, truncated). 0 means unknown
	// (stored NULL).
	Duration time.Duration
}

// RunCounts are a run's counters, as sync_runs holds them (JSON names are
// its columns).
type RunCounts struct {
	Pages        int64 `json:"pages"`
	CardsSeen    int64 `json:"cards_seen"`
	CardsNew     int64 `json:"cards_new"`
	CardsChanged int64 `json:"cards_changed"`
	// CardsReturned counts the cards listed again after being marked
	// removed; CardsChanged counts content changes only.
	CardsReturned  int64 `json:"cards_returned"`
	CardsUnchanged int64 `json:"cards_unchanged"`
	CardsRemoved   int64 `json:"cards_removed"`
	CardsRejected  int64 `json:"cards_rejected"`
	RemovalsHeld   int64 `json:"removals_held"`
	Requests       int64 `json:"requests"`
	Retries        int64 `json:"retries"`
	RateLimited    int64 `json:"rate_limited"`
	AuthRequests   int64 `json:"auth_requests"`
	// SecretsRedacted counts the values and keys of the run's data in
	// which a secret was replaced (Options.Secrets).
	SecretsRedacted int64 `json:"secrets_redacted"`
	// CardNumbersMasked, CodesDropped and TrackDataDropped count the card
	// numbers masked (card ids stored by their pseudonym included), the
	// security codes and PINs dropped and the track data dropped from the
	// run's data; FieldsDropped the top-level card fields [cards]
	// keep_fields left out. Runs recorded before these counters read 0.
	CardNumbersMasked int64 `json:"card_numbers_masked"`
	CodesDropped      int64 `json:"codes_dropped"`
	TrackDataDropped  int64 `json:"track_data_dropped"`
	FieldsDropped     int64 `json:"fields_dropped"`
}

// Run is one row of sync_runs.
type Run struct {
	ID          int64      `json:"run_id"`
	Trigger     string     `json:"trigger"`
	Status      string     `json:"status"`
	StartedAt   time.Time  `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
	HeartbeatAt time.Time  `json:"heartbeat_at"`
	RunCounts
	WalkConsistent *bool  `json:"walk_consistent"`
	Error          string `json:"error,omitempty"`
	AccountError   string `json:"account_error,omitempty"`
	Version        string `json:"version"`
	// DurationMS is sync_runs.duration_ms: the run's exact duration in
	// milliseconds; nil while it runs, for an abandoned run and for runs
	// recorded before schema version 14 (their stamps give it to the
	// second).
	DurationMS *int64 `json:"duration_ms"`
}

// SummaryRuns is how many runs Summary lists.
const SummaryRuns = 10

// Summary is what the warehouse knows about its own health: recent runs,
// the checkpoint, row counts, freshness. `cardsync status`, `check` and the
// daemon's health read it; package worker judges it.
type Summary struct {
	Path string `json:"path"`
	// Schema is the PostgreSQL schema the warehouse lives in ("" for a
	// SQLite file).
	Schema string `json:"schema,omitempty"`
	// Account is the account summarised (Options.Account): every count
	// and run below is its own.
	Account       string     `json:"account"`
	SchemaVersion int        `json:"schema_version"`
	Runs          []Run      `json:"runs"`
	Checkpoint    Checkpoint `json:"checkpoint"`
	Cards         int64      `json:"cards"`
	CurrentCards  int64      `json:"current_cards"`
	RemovedCards  int64      `json:"removed_cards"`
	// PendingRemovals counts current cards the last complete, consistent
	// walk did not list: the next one marks them removed if it misses them
	// too.
	PendingRemovals int64 `json:"pending_removals"`
	CardVersions    int64 `json:"card_versions"`
	Snapshots       int64 `json:"snapshots"`
	// LastSnapshotAt is when the latest account snapshot was taken.
	LastSnapshotAt *time.Time `json:"last_snapshot_at"`
	// RejectedCards counts distinct rejections in rejected_cards;
	// LastRunRejected the items the last run set aside.
	RejectedCards   int64 `json:"rejected_cards"`
	LastRunRejected int64 `json:"last_run_rejected"`
	// RemovalsHeld is what the guard held back in the last finished walk.
	RemovalsHeld   int64      `json:"removals_held"`
	LastSuccessAt  *time.Time `json:"last_success_at"`
	LastSuccessRun int64      `json:"last_success_run,omitempty"`
	// FailuresInARow counts failed and abandoned runs since the last
	// success; an interrupted run (SIGTERM, Ctrl-C) is not a failure.
	FailuresInARow     int        `json:"failures_in_a_row"`
	LastWalkConsistent *bool      `json:"last_walk_consistent"`
	LastWalkAt         *time.Time `json:"last_walk_at"`
	// RecentWalks are the last SummaryWalks finished walks that were judged
	// (complete or inconsistent; reset ones aside), newest first.
	RecentWalks   []WalkOutcome `json:"recent_walks"`
	Running       int           `json:"running"`
	WALBytes      int64         `json:"wal_bytes"`
	DatabaseBytes int64         `json:"database_bytes"`
	// CardsFlatStale is true when the PostgreSQL warehouse's cards_flat
	// lags behind card_fields (a column missing, or one that could not be
	// dropped: a view built on it blocks the DROP). Always false with
	// SQLite.
	CardsFlatStale bool `json:"cards_flat_stale"`
}

// SummaryWalks is how many finished walks Summary.RecentWalks holds: two
// inconsistent walks in a row make an account unhealthy.
const SummaryWalks = 2

// WalkOutcome is how a finished walk ended, as Summary reports it.
type WalkOutcome struct {
	WalkID     int64     `json:"walk_id"`
	FinishedAt time.Time `json:"finished_at"`
	// Outcome is complete or inconsistent.
	Outcome string `json:"outcome"`
	// Reason is why an inconsistent walk was so (one of WalkReasons; ""
	// for a complete walk, or one closed before schema version 8).
	Reason string `json:"reason,omitempty"`
	// Pages are the pages that came back wrong (sync_walks.inconsistent_pages).
	Pages []int `json:"pages,omitempty"`
}

// Consistent reports whether the walk was complete.
func (o WalkOutcome) Consistent() bool { return o.Outcome == "complete" }
