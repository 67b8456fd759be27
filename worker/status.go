package worker

import (
	"fmt"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/redact"
)

// StatusSchemaVersion is the version of `cardsync status -json`'s document
// (StatusReport). Fields are only ever added within a version.
const StatusSchemaVersion = 1

// StatusReport is `cardsync status -json`. Every field is always present;
// times are RFC 3339 UTC strings, null for "never". The accounts list has
// one entry per synced account ("default" for the [api] table).
type StatusReport struct {
	SchemaVersion int             `json:"schema_version"`
	GeneratedAt   string          `json:"generated_at"`
	Healthy       bool            `json:"healthy"`
	Accounts      []AccountStatus `json:"accounts"`
}

// NewStatusReport is the report of the accounts' statuses at now: healthy
// when every account is.
func NewStatusReport(now time.Time, accounts []AccountStatus) StatusReport {
	rep := StatusReport{SchemaVersion: StatusSchemaVersion, GeneratedAt: rfc(now), Healthy: true, Accounts: accounts}
	for _, a := range accounts {
		rep.Healthy = rep.Healthy && a.Healthy
	}
	return rep
}

// AccountStatus is one account's entry of the report: its health (Assess)
// and the warehouse's state behind it.
type AccountStatus struct {
	Account         string           `json:"account"`
	Healthy         bool             `json:"healthy"`
	Problems        []string         `json:"problems"`
	Warnings        []string         `json:"warnings"`
	Warehouse       WarehouseStatus  `json:"warehouse"`
	Schedule        ScheduleStatus   `json:"schedule"`
	LastSuccess     SuccessStatus    `json:"last_success"`
	FailuresInARow  int              `json:"failures_in_a_row"`
	Writer          WriterStatus     `json:"writer"`
	Checkpoint      CheckpointStatus `json:"checkpoint"`
	LastWalk        WalkStatus       `json:"last_walk"`
	Cards           CardsStatus      `json:"cards"`
	AccountSnapshot SnapshotStatus   `json:"account_snapshot"`
	RejectedItems   RejectedStatus   `json:"rejected_items"`
	RemovalsHeld    int64            `json:"removals_held"`
	Runs            []RunStatus      `json:"runs"`
	// Lease is the account's lease with a PostgreSQL warehouse: who syncs
	// it (null with SQLite, or before any replica took it).
	Lease *LeaseStatus `json:"lease"`
}

// WarehouseStatus is the warehouse an account is in: what applies to its
// kind (SQLite file or PostgreSQL database).
type WarehouseStatus struct {
	// Path is the file, or the PostgreSQL URL without its password.
	Path string `json:"path"`
	// Schema is the PostgreSQL schema the warehouse lives in ([warehouse]
	// schema; absent for a SQLite file).
	Schema string `json:"schema,omitempty"`
	// SchemaVersion is the file's PRAGMA user_version, or the highest
	// version in PostgreSQL's schema_migrations.
	SchemaVersion int `json:"schema_version"`
	// DatabaseBytes is the file's size, or the PostgreSQL database's.
	DatabaseBytes int64 `json:"database_bytes"`
	// WALBytes is the size of the file's -wal (0 with PostgreSQL, which
	// has no WAL file of its own: see WAL).
	WALBytes int64 `json:"wal_bytes"`
	// WAL is true when the warehouse has a WAL file beside it (SQLite), so
	// WALBytes is worth showing; not part of the JSON document.
	WAL bool `json:"-"`
	// CardsFlatStale is true while a PostgreSQL warehouse's cards_flat
	// lags behind card_fields (load.Summary.CardsFlatStale).
	CardsFlatStale bool `json:"cards_flat_stale"`
	// BeforeRestore lists the warehouses restore replaced and kept beside
	// this one, newest first (empty with PostgreSQL).
	BeforeRestore []BeforeRestoreStatus `json:"before_restore"`
	// RulesVersion is the version of the data rules every stored row has
	// been through (rules_state; 0: not read); CurrentRulesVersion is this
	// cardsync's (redact.RulesVersion).
	RulesVersion        int `json:"rules_version"`
	CurrentRulesVersion int `json:"current_rules_version"`
	// RulesWarnings say that the warehouse or a backup predates the
	// current rules, each naming the fix (RulesWarnings).
	RulesWarnings []string `json:"rules_warnings"`
}

// RulesWarnings are the warnings of status and check while a warehouse at
// rules version version (0: unknown, no warning), or one of the backups
// outdated, predates the current rules: each names the fix, a command
// line of cl.
func RulesWarnings(version int, outdated []string, cl CommandLine) []string {
	out := []string{}
	if version > 0 && version < redact.RulesVersion {
		out = append(out, fmt.Sprintf("the warehouse was written under data rules version %d, older than this cardsync's %d: rows may keep what the current rules remove; run: %s",
			version, redact.RulesVersion, cl.Command("rescan")))
	}
	for _, b := range outdated {
		out = append(out, fmt.Sprintf("backup %s predates data rules version %d: run: %s (or delete it)", b, redact.RulesVersion, cl.Command("rescan", "-backups")))
	}
	return out
}

// BeforeRestoreStatus is one warehouse kept by a restore.
type BeforeRestoreStatus struct {
	Path string `json:"path"`
	// ReplacedAt is null for a file kept by a cardsync before warehouse
	// identities.
	ReplacedAt *string `json:"replaced_at"`
	Bytes      int64   `json:"bytes"`
}

// ScheduleStatus is the configured schedule and what it expects.
type ScheduleStatus struct {
	Cron       string  `json:"cron"`
	Timezone   string  `json:"timezone"`
	NextDueAt  *string `json:"next_due_at"`
	Overdue    bool    `json:"overdue"`
	StaleAfter *string `json:"stale_after"`
}

// SuccessStatus is the last successful run (every field null without one).
type SuccessStatus struct {
	RunID      *int64  `json:"run_id"`
	FinishedAt *string `json:"finished_at"`
	AgeSeconds *int64  `json:"age_seconds"`
}

// WriterStatus is the process syncing the account, if any, and the runs
// whose process died.
type WriterStatus struct {
	// PID holds the warehouse lock (a run in progress), or null.
	PID      *int    `json:"pid"`
	DeadRuns []int64 `json:"dead_runs"`
}

// CheckpointStatus is where the card walk resumes.
type CheckpointStatus struct {
	InProgress bool    `json:"in_progress"`
	NextPage   int     `json:"next_page"`
	TotalPages int     `json:"total_pages"`
	RunID      *int64  `json:"run_id"`
	UpdatedAt  *string `json:"updated_at"`
}

// WalkStatus is the last finished walk.
type WalkStatus struct {
	Consistent *bool   `json:"consistent"`
	FinishedAt *string `json:"finished_at"`
	// Reason and Pages say why an inconsistent walk was so (sync_walks).
	Reason *string `json:"inconsistent_reason"`
	Pages  []int   `json:"inconsistent_pages"`
	// InconsistentInARow counts the inconsistent walks among the last two.
	InconsistentInARow int `json:"inconsistent_in_a_row"`
}

// CardsStatus counts the account's cards.
type CardsStatus struct {
	Total           int64 `json:"total"`
	Current         int64 `json:"current"`
	Removed         int64 `json:"removed"`
	PendingRemovals int64 `json:"pending_removals"`
	Versions        int64 `json:"versions"`
}

// SnapshotStatus is the account snapshots taken.
type SnapshotStatus struct {
	Count      int64   `json:"count"`
	LastAt     *string `json:"last_at"`
	AgeSeconds *int64  `json:"age_seconds"`
}

// RejectedStatus counts the items set aside in rejected_cards.
type RejectedStatus struct {
	Distinct int64 `json:"distinct"`
	LastRun  int64 `json:"last_run"`
}

// RunStatus is one of the last runs; Status is "dead" for a run marked
// running whose process died or is stuck.
type RunStatus struct {
	RunID        int64   `json:"run_id"`
	Trigger      string  `json:"trigger"`
	Status       string  `json:"status"`
	StartedAt    string  `json:"started_at"`
	FinishedAt   *string `json:"finished_at"`
	HeartbeatAt  string  `json:"heartbeat_at"`
	DurationSecs *int64  `json:"duration_seconds"`
	// DurationMS is sync_runs.duration_ms: the run's measured duration in
	// milliseconds (nil while it runs, for an abandoned run and for runs
	// recorded before schema version 14).
	DurationMS *int64 `json:"duration_ms"`
	load.RunCounts
	WalkConsistent *bool   `json:"walk_consistent"`
	Error          *string `json:"error"`
	AccountError   *string `json:"account_error"`
	Version        string  `json:"version"`
}

// LeaseStatus is an account's lease in a PostgreSQL warehouse.
type LeaseStatus struct {
	Holder       string `json:"holder"`
	FencingToken int64  `json:"fencing_token"`
	ExpiresAt    string `json:"expires_at"`
	Expired      bool   `json:"expired"`
}

// Live reports whether the lease stands for a live writer (l may be nil).
func (l *LeaseStatus) Live() bool { return l != nil && !l.Expired }

// StatusFacts is what `status` reads of one account of a warehouse
// (PostgresStatusFacts, SQLiteStatusFacts).
type StatusFacts struct {
	Summary load.Summary
	// Postgres: the warehouse is a PostgreSQL database (no WAL file, no
	// run lock: Lease says who syncs the account).
	Postgres bool
	// Lease is the account's lease with PostgreSQL (nil: never taken).
	Lease *LeaseStatus
	// LockHolder is, with SQLite, the PID holding the account's run lock
	// (0: none, -1: held by a process whose PID is unknown).
	LockHolder int
	// BeforeRestore are the warehouses restore kept beside a SQLite file.
	BeforeRestore []load.BeforeRestoreFile
	// RulesVersion is the warehouse's rules version (load.RulesReader; 0:
	// not recorded).
	RulesVersion int
	// OutdatedBackups are the backups in the backup directory that predate
	// the current rules (read by the command, which knows the directory).
	OutdatedBackups []string
}

// StatusSettings is what an account's status is judged against.
type StatusSettings struct {
	// Cron and Timezone are shown as configured; Schedule (nil: none)
	// says when runs are due.
	Cron, Timezone string
	Schedule       Schedule
	// RunTimeout bounds a live run (0: no bound).
	RunTimeout time.Duration
	// Commands builds the command lines the status names (the fix of a
	// held removal, of outdated rules).
	Commands CommandLine
}

// writer is the PID Assess judges runs marked running by, and the PID
// shown as the writer (0: none). With PostgreSQL a live lease stands for a
// live writer whose PID is on another host, so runs marked running are
// not dead while it lasts, and no PID is shown.
func (f StatusFacts) writer() (judged, shown int) {
	if f.Postgres {
		if f.Lease.Live() {
			return -1, 0
		}
		return 0, 0
	}
	return f.LockHolder, f.LockHolder
}

// NewAccountStatus judges one account's facts at now (Assess) and builds
// its entry of the report.
func NewAccountStatus(f StatusFacts, c StatusSettings, now time.Time) AccountStatus {
	judged, shown := f.writer()
	sum := f.Summary
	h := Assess(sum, c.Schedule, now, judged, c.RunTimeout, c.Commands)
	a := AccountStatus{
		Account:  sum.Account,
		Healthy:  h.Healthy,
		Problems: append([]string{}, h.Problems...),
		Warnings: append([]string{}, h.Warnings...),
		Warehouse: WarehouseStatus{Path: sum.Path, Schema: sum.Schema, SchemaVersion: sum.SchemaVersion, DatabaseBytes: sum.DatabaseBytes,
			WALBytes: sum.WALBytes, WAL: !f.Postgres, CardsFlatStale: sum.CardsFlatStale, BeforeRestore: beforeRestore(f.BeforeRestore),
			RulesVersion: f.RulesVersion, CurrentRulesVersion: redact.RulesVersion, RulesWarnings: RulesWarnings(f.RulesVersion, f.OutdatedBackups, c.Commands)},
		Schedule: ScheduleStatus{Cron: c.Cron, Timezone: c.Timezone, Overdue: h.Overdue,
			NextDueAt: rfcPtr(&h.NextDue), StaleAfter: rfcPtr(&h.StaleAfter)},
		FailuresInARow: sum.FailuresInARow,
		Writer:         WriterStatus{DeadRuns: append([]int64{}, h.DeadRuns...)},
		Checkpoint: CheckpointStatus{InProgress: sum.Checkpoint.InProgress, NextPage: sum.Checkpoint.NextPage,
			TotalPages: sum.Checkpoint.TotalPages, UpdatedAt: rfcPtr(&sum.Checkpoint.UpdatedAt)},
		LastWalk: lastWalkStatus(sum),
		Cards: CardsStatus{Total: sum.Cards, Current: sum.CurrentCards, Removed: sum.RemovedCards,
			PendingRemovals: sum.PendingRemovals, Versions: sum.CardVersions},
		AccountSnapshot: SnapshotStatus{Count: sum.Snapshots, LastAt: rfcPtr(sum.LastSnapshotAt)},
		RejectedItems:   RejectedStatus{Distinct: sum.RejectedCards, LastRun: sum.LastRunRejected},
		RemovalsHeld:    sum.RemovalsHeld,
		Runs:            runStatuses(sum.Runs, h.DeadRuns),
		Lease:           f.Lease,
	}
	if shown > 0 {
		a.Writer.PID = &shown
	}
	if sum.Checkpoint.RunID != 0 {
		id := sum.Checkpoint.RunID
		a.Checkpoint.RunID = &id
	}
	if sum.LastSuccessAt != nil {
		id, age := sum.LastSuccessRun, int64(now.Sub(*sum.LastSuccessAt).Seconds())
		a.LastSuccess = SuccessStatus{RunID: &id, FinishedAt: rfcPtr(sum.LastSuccessAt), AgeSeconds: &age}
	}
	if sum.LastSnapshotAt != nil {
		age := int64(now.Sub(*sum.LastSnapshotAt).Seconds())
		a.AccountSnapshot.AgeSeconds = &age
	}
	return a
}

// beforeRestore is the report's list of kept warehouses (never nil).
func beforeRestore(kept []load.BeforeRestoreFile) []BeforeRestoreStatus {
	out := []BeforeRestoreStatus{}
	for _, k := range kept {
		var at *string
		if !k.ReplacedAt.IsZero() {
			at = strPtr(rfc(k.ReplacedAt))
		}
		out = append(out, BeforeRestoreStatus{Path: k.Path, ReplacedAt: at, Bytes: k.Bytes})
	}
	return out
}

// runStatuses are the report's runs (never nil), the dead ones so marked.
func runStatuses(runs []load.Run, dead []int64) []RunStatus {
	out := []RunStatus{}
	for _, r := range runs {
		rs := RunStatus{RunID: r.ID, Trigger: r.Trigger, Status: r.Status, StartedAt: rfc(r.StartedAt),
			FinishedAt: rfcPtr(r.FinishedAt), HeartbeatAt: rfc(r.HeartbeatAt), RunCounts: r.RunCounts,
			WalkConsistent: r.WalkConsistent, Error: strPtr(r.Error), AccountError: strPtr(r.AccountError), Version: r.Version,
			DurationMS: r.DurationMS}
		if r.FinishedAt != nil {
			d := int64(r.FinishedAt.Sub(r.StartedAt).Seconds())
			rs.DurationSecs = &d
		}
		for _, id := range dead {
			if id == r.ID {
				rs.Status = "dead"
			}
		}
		out = append(out, rs)
	}
	return out
}

// lastWalkStatus is the report's last walk: its outcome and, when
// inconsistent, why, on which pages and how many in a row.
func lastWalkStatus(sum load.Summary) WalkStatus {
	ws := WalkStatus{Consistent: sum.LastWalkConsistent, FinishedAt: rfcPtr(sum.LastWalkAt), Pages: []int{}}
	for i, o := range sum.RecentWalks {
		if o.Consistent() {
			break
		}
		if i == 0 {
			ws.Reason = strPtr(o.Reason)
			ws.Pages = append(ws.Pages, o.Pages...)
		}
		ws.InconsistentInARow++
	}
	return ws
}

// InconsistentText names an inconsistent walk's reason and pages for
// people (ReasonText).
func (ws WalkStatus) InconsistentText() string {
	reason := ""
	if ws.Reason != nil {
		reason = *ws.Reason
	}
	return ReasonText(reason, ws.Pages)
}

// ReasonText names why a walk was inconsistent, and on which pages, for
// people: "empty_page on page 2", "count_mismatch", "reason not recorded".
func ReasonText(reason string, pages []int) string {
	if reason == "" {
		reason = "reason not recorded"
	}
	if len(pages) == 0 {
		return reason
	}
	return reason + " on " + PagesText(pages)
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// rfcPtr is t in RFC 3339 UTC, nil for a nil or zero time.
func rfcPtr(t *time.Time) *string {
	if t == nil || t.IsZero() {
		return nil
	}
	s := rfc(*t)
	return &s
}

// strPtr is s, nil when empty.
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
