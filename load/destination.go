package load

import (
	"context"
	"time"
)

// Destination is what a sync writes into: the methods the worker calls on
// a warehouse, with this package's types and meaning. *Warehouse (SQLite)
// is one; the PostgreSQL warehouse (package load/postgres) is the other.
// Both scope every read and write to one account (Options.Account).
type Destination interface {
	// Verify checks that the warehouse can still be written (for SQLite:
	// the same file, writable; a deleted file is written back).
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
	Optimize(ctx context.Context) error
	Summary(ctx context.Context) (Summary, error)
	Runs(ctx context.Context, n int) ([]Run, error)
	Close() error
	// Path names the warehouse for messages: the file, or the URL without
	// its password.
	Path() string
	Account() string
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
