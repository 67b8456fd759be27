package load

import (
	"context"
	"time"
)

// Destination is what a sync writes into: the methods the worker calls on
// every warehouse, with this package's types and meaning. The SQLite
// warehouse (package load/sqlite) is one, the PostgreSQL warehouse
// (package load/postgres) the other. Both scope every read and write to
// one account (Options.Account). What only some warehouses do is a
// capability interface of its own (FileChecker, Optimizer, Leaser,
// LeaseLister, BackupTaker, FileStatus, LocalFile, Reporter), found by a
// type assertion where the warehouse is used.
type Destination interface {
	// Writable checks that the warehouse can still be written (a
	// PostgreSQL standby cannot; a SQLite file may have lost its write
	// permission), before a run writes anything.
	Writable(ctx context.Context) error
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
	Summary(ctx context.Context) (Summary, error)
	Runs(ctx context.Context, n int) ([]Run, error)
	Close() error
	// Path names the warehouse for messages: the file, or the URL without
	// its password.
	Path() string
	Account() string
}

// FileChecker is the capability of a warehouse kept in a file that can be
// replaced, deleted or moved under a daemon (SQLite): Verify checks it is
// still the same file and writable, writes a deleted one back, and says
// what happened (a FileEvent and a message to log); a changed file makes
// the worker reopen its lock. The worker calls it, when present, instead
// of Writable.
type FileChecker interface {
	Verify(ctx context.Context) (FileEvent, string, error)
}

// Optimizer is the capability of a warehouse that tidies itself after a
// run (SQLite: a WAL checkpoint and PRAGMA optimize). PostgreSQL's
// autovacuum does that work on its own: it has none.
type Optimizer interface {
	Optimize(ctx context.Context) error
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
