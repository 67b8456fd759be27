package load

import (
	"context"
	"time"
)

// Destination is a warehouse opened for writing: everything the worker,
// a rescan and the commands call on it, with this package's types and
// meaning. The SQLite warehouse (package load/sqlite) is one, the
// PostgreSQL warehouse (package load/postgres) the other; both scope
// every read and write to one account (Options.Account). The steps only
// one kind needs (a file's check, its WAL checkpoint, the file beside
// which unrecorded results are kept) are methods of both, a no-op or an
// empty answer where they do not apply, so callers hold the contract and
// never probe it. What a shared server adds (leases, replicas) is a
// Cluster, given beside the warehouse where it is opened
// (dialect.Open); the account's run lock is a RunLock.
type Destination interface {
	// Reader: what the read-only commands read, a written warehouse too.
	Reader
	// Rescanner: a rescan rewrites what older rules stored.
	Rescanner
	// Verify is the check before a run writes anything. A file checks
	// that its path still names the file open here and that it can be
	// written, repairs what it can (a deleted file written back, a
	// replaced one followed) and says what happened (a FileEvent and a
	// message to log; the run lock follows a changed file in its Keep).
	// A server checks that it accepts writes (Writable) and reports
	// FileOK.
	Verify(ctx context.Context) (FileEvent, string, error)
	AbandonStaleRuns(ctx context.Context, staleAfter time.Duration) ([]StaleRun, error)
	StartRun(ctx context.Context, trigger, version string) (int64, error)
	Heartbeat(ctx context.Context, runID int64) error
	FinishRun(ctx context.Context, runID int64, r RunResult) error
	ResetCheckpoint(ctx context.Context, stream string) error
	Checkpoint(ctx context.Context, stream string) (Checkpoint, error)
	SaveAccount(ctx context.Context, runID int64, a Account) error
	RecordAccountError(ctx context.Context, runID int64, msg string) error
	// PageWriter starts the batched page commits of one walk (NewWalkWriter).
	PageWriter(runID int64, stream string) PageWriter
	WalkSummary(ctx context.Context, stream string) (WalkSummary, error)
	FinishWalk(ctx context.Context, runID int64, stream string, end WalkEnd) (WalkResult, error)
	PruneAudit(ctx context.Context, cutoff time.Time) (int64, error)
	// PruneFields deletes the card_fields rows (and cards_flat columns)
	// of fields no commit saw since cutoff (StaleFields); call it after
	// a complete walk only.
	PruneFields(ctx context.Context, cutoff time.Time) (int, error)
	// Optimize tidies the warehouse after a run or a rescan: a file's
	// WAL checkpoint and PRAGMA optimize. A server's autovacuum does that
	// work on its own: there it does nothing.
	Optimize(ctx context.Context) error
	// File is the file the warehouse is kept in on this machine ("" for a
	// server): the results it refused to record are kept beside it
	// (<file>.unrecorded) for the next process.
	File() string
}

// Reader is a warehouse opened to read (dialect.OpenReadOnly: status,
// check, report, datasette-metadata, serve's report refresh), and what a
// Destination offers the same commands. Both dialects implement all of
// it, read-only opens included.
type Reader interface {
	Summary(ctx context.Context) (Summary, error)
	Runs(ctx context.Context, n int) ([]Run, error)
	// Writable checks that the warehouse can be written by this process
	// or role (a PostgreSQL standby or a read-only role cannot; a SQLite
	// file may have lost its write permission; a file opened read-only
	// says ErrReadOnly).
	Writable(ctx context.Context) error
	// WriterFacts says who writes the account now and what restore kept
	// beside a file (status, check); sole says the account is the
	// warehouse's only one, whose older writers lock a whole file.
	WriterFacts(ctx context.Context, sole bool) (WriterFacts, error)
	Reporter
	DocsReader
	RulesReader
	Close() error
	// Path names the warehouse for messages: the file, or the URL without
	// its password.
	Path() string
	Account() string
}

// WriterFacts are who writes an account of a warehouse and what was kept
// beside it, as status shows them (Reader.WriterFacts).
type WriterFacts struct {
	// Shared: replicas share the warehouse (PostgreSQL) and an account's
	// lease, not a PID, says who syncs it.
	Shared bool
	// Leases are every account's lease (Shared only).
	Leases []Lease
	// WriterPID is, with a file, the PID of the process syncing the
	// account (0: none, -1: one whose PID is unknown).
	WriterPID int
	// BeforeRestore are the warehouses restore kept beside a file,
	// newest first.
	BeforeRestore []BeforeRestoreFile
}

// RunLock is an account's run lock: one writer of an account at a time.
// A file's account lock (package load/sqlite: file locks) or the
// account's lease in a shared server (the worker's lease lock, over a
// Cluster) is behind it; the worker holds one of either kind the same
// way.
type RunLock interface {
	// Hold takes the lock without waiting; another writer holding it is
	// refused with an error wrapping ErrLocked.
	Hold(ctx context.Context) error
	// Keep keeps the held lock while a run goes on, from after the
	// warehouse's Verify to stop. A file's lock first moves to the file
	// its path names now, when Verify wrote it back or found it replaced
	// (an error wrapping ErrLocked when another process holds that one);
	// a lease is renewed, and the context returned ends, its cause
	// wrapping ErrLeaseLost, once it may have lapsed.
	Keep(ctx context.Context) (kept context.Context, stop func(), err error)
	// Check is asked before each request of a run: an error wrapping
	// ErrLeaseLost once a lease may have lapsed by this process's clock
	// (a file's lock: always nil).
	Check() error
	// Release drops the lock, keeping what it needs to take it again.
	Release() error
	// Held reports whether this process holds the lock.
	Held() bool
	// Close releases the lock and closes it.
	Close() error
}

// Cluster is what a warehouse several serve processes share (PostgreSQL)
// adds to a Destination: the accounts' leases (Leaser, LeaseLister) and
// the replicas' heartbeats (Replicas). dialect.Open returns it beside the
// warehouse (nil for a file); the worker's lease lock and the daemon's
// replicas use it.
type Cluster interface {
	Leaser
	LeaseLister
	Replicas
}

// PageWriter commits a walk's pages in batches with their checkpoint:
// *WalkWriter, and the PostgreSQL warehouse's.
type PageWriter interface {
	Add(ctx context.Context, p Page) (PageResult, error)
	Flush(ctx context.Context) error
	Buffered() Batch
	// FieldsSkipped counts the new top-level fields the writer's commits
	// found beyond the walk's MaxNewFieldsPerWalk, each once: they have
	// no card_fields row and no cards_flat column, their values stay in
	// the cards' data.
	FieldsSkipped() int
}
