package worker

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
)

// Stream is the checkpoint stream of the card walk (load.StreamCards).
const Stream = load.StreamCards

// Triggers recorded in sync_runs.trigger; the values are load's.
const (
	TriggerSchedule = load.TriggerSchedule
	TriggerBackfill = load.TriggerBackfill
	TriggerDemo     = load.TriggerDemo
)

// ErrWarehouse is wrapped by every error that comes from the warehouse (load
// classifies its errors at the source), so callers can tell a local storage
// problem from an upstream one.
var ErrWarehouse = load.ErrWarehouse

// ErrInterrupted is returned when the run stopped because its context was
// cancelled (SIGTERM, Ctrl-C); the checkpoint is kept for the next run.
var ErrInterrupted = errors.New("run interrupted")

// Progress is reported after each commit of a batch of pages (Page is the
// last of them).
type Progress struct {
	RunID int64
	Page  int
	// TotalPages is the last page's total_pages, but no more than the
	// walk's last page when the client bounds it (phantom pages).
	TotalPages int
	TotalItems int
	Cards      int           // cards committed by this run so far
	Elapsed    time.Duration // since the walk started in this run
	Resumed    bool          // the walk resumed a checkpoint
	StartPage  int
}

// Job runs syncs of one account into one warehouse. Its fields are set by
// the caller; Client, Warehouse and Lock are required.
type Job struct {
	Client *extract.Client
	// Warehouse is where the run writes (dialect.Open: SQLite or
	// PostgreSQL).
	Warehouse load.Destination
	// Lock is the account's run lock (a file's account lock, or Lease
	// with PostgreSQL). Run takes it for the run unless the caller already
	// holds it (a backfill takes it before opening the warehouse, so a
	// refused process never touches the file), and keeps it while the
	// run goes on (load.RunLock.Keep).
	Lock load.RunLock
	// Lease is Lock when it is the account's lease on a shared warehouse
	// (nil: a file): the daemon keeps it between runs and shares the
	// accounts with the other replicas through its cluster.
	Lease   *LeaseLock
	Logger  *slog.Logger
	Version string
	// Now stamps times; default time.Now.
	Now func() time.Time
	// HeartbeatEvery is how often a long page wait refreshes heartbeat_at;
	// default 10s.
	HeartbeatEvery time.Duration
	// Progress, if set, is called after every commit of pages.
	Progress func(Progress)
	// Status, if set, gets a short human status line ("page 37/120").
	Status func(string)
	// AuditRetention, when positive, is how long run_pages audit rows are
	// kept: older ones are pruned after each run.
	AuditRetention time.Duration
	// FieldRetention is how long a card_fields row stays after a commit
	// last saw its field: older ones (and their cards_flat columns) are
	// pruned after each run that completed a walk. Zero is
	// load.DefaultFieldRetention.
	FieldRetention time.Duration
	// Observer, if set, is told about every run that recorded a sync_runs
	// row, once its result is recorded (metrics).
	Observer Observer
	// FetchAhead is how many fetched pages may wait for the warehouse
	// while the walk fetches on (DefaultFetchAhead in a serve of several
	// accounts, whose commits wait for each other or for the server); 0:
	// each page is handed to the warehouse before the next is fetched.
	FetchAhead int
	// Commands builds the command lines the run's log names (the fix of
	// a held removal), complete with the config and account it acts on.
	Commands CommandLine

	starts  startFailures
	pending pendingResults
	// progress is when the current run last moved (unix nanoseconds).
	progress atomic.Int64
}

// markProgress notes that the run in progress moved on (a page committed,
// the account read), for the daemon's watchdog.
func (j *Job) markProgress() { j.progress.Store(time.Now().UnixNano()) }

// ProgressDeadline returns when the run in progress must next show
// progress: the end of the client's request in flight, or a commit's worth
// of time after the last progress, whichever is later. The daemon stops
// feeding systemd's watchdog past it.
func (j *Job) ProgressDeadline() time.Time {
	d := time.Unix(0, j.progress.Load()).Add(commitTimeout + j.Client.Timeout())
	if b := j.Client.BusyUntil(); b.After(d) {
		d = b
	}
	return d
}

// Options change one run.
type Options struct {
	// Restart discards the checkpoint and walks from page 1.
	Restart bool
	// ConfirmRemovals lifts the mass-removal guard for this run's walk
	// (`cardsync backfill -confirm-removals`).
	ConfirmRemovals bool
}

// Observer is told how each run ended. It is called synchronously at the
// end of Job.Run, after the result is recorded and before Run returns, with
// a context that outlives a shutdown by a commit's worth of time.
type Observer interface {
	RunFinished(ctx context.Context, r Result)
}

// StartObserver is an Observer also told about each run that could not
// start (the lock could not be taken or opened, the file check or the run
// row failed): no sync_runs row records those.
type StartObserver interface {
	RunNotStarted(what string, err error)
}

// Result summarises one run.
type Result struct {
	RunID int64
	// Trigger is the run's sync_runs.trigger (TriggerSchedule, ...).
	Trigger string
	// Status is the run's final sync_runs.status (load.StatusSucceeded, ...).
	Status string
	Pages  int
	Cards  int
	New    int
	// Changed counts cards whose content changed; Returned the cards
	// listed again after being marked removed (whatever their content).
	Changed   int
	Returned  int
	Unchanged int
	// Removed counts cards marked removed: missed by this walk and by the
	// previous consistent one.
	Removed int
	// PendingRemovals counts cards not listed by the last complete,
	// consistent walk and not yet confirmed removed: the next consistent
	// walk marks them removed if it misses them too. Set when the walk
	// finished (WalkComplete).
	PendingRemovals int
	// RemovalsHeld counts cards the walk missed but the mass-removal guard
	// did not mark removed.
	RemovalsHeld int
	// Rejected counts page items set aside in rejected_cards.
	Rejected int
	// FieldsSkipped counts the new top-level fields this run's part of the
	// walk found beyond load.MaxNewFieldsPerWalk: stored in the cards'
	// data only, with no card_fields row or cards_flat column.
	FieldsSkipped int
	// AccountError says why no account snapshot was taken ("" if it was).
	AccountError string
	// AccountSnapshotAt is when this run stored its account snapshot; zero
	// when it took none.
	AccountSnapshotAt time.Time
	// Abandoned lists the triggers of the runs this run found left running
	// by a dead process and marked abandoned before it started, one entry a
	// run.
	Abandoned      []string
	Resumed        bool
	StartPage      int
	WalkComplete   bool
	WalkConsistent bool
	// Inconsistency says for people why the walk was inconsistent ("" when
	// it was not), InconsistentReason names it (one of load.WalkReasons)
	// and InconsistentPages are the pages that came back wrong (none for a
	// reason judged from the walk's counts).
	Inconsistency      string
	InconsistentReason string
	InconsistentPages  []int
	Requests           int64
	Retries            int64
	RateLimited        int64
	AuthRequests       int64
	Duration           time.Duration
}

func (j *Job) logger() *slog.Logger {
	if j.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return j.Logger
}

func (j *Job) now() time.Time {
	if j.Now == nil {
		return time.Now()
	}
	return j.Now()
}
