// Package load is the contract between the worker and a warehouse, and
// every rule of storing a sync that does not depend on the database: the
// types (Page, Card, Batch, RunResult, WalkEnd, Summary, ...), the
// interfaces callers hold without probing (Destination and its
// PageWriter: a warehouse opened to write, its before- and after-run
// steps included; Reader: one opened to read; RunLock: an account's run
// lock, a file's or a lease; Cluster: a shared server's leases and
// replicas, given beside the warehouse where it is opened), the errors every
// warehouse returns (ErrWarehouse, ErrLocked, ...), Options and their
// checks, the batching limits (BatchLimits; the batch commit itself is
// load/internal/batch, which the dialects import), redaction and quarantine of a
// page's items (PreparePageItems, QuarantineData), field discovery
// (FieldSet, PlanFields, FieldBudget), the removal rules and the
// mass-removal guard (WalkEnd.Removals, HoldRemovals), the reasons of an
// inconsistent walk, and account rounding (PrepareAccount, Cents).
//
// It imports no database driver. The warehouses are its siblings:
// load/sqlite (a file, the default) and load/postgres (a server); each
// implements Destination with these types and rules, so a rule is written
// once here and both follow it.
//
// Besides Destination and PageWriter, a warehouse may have capabilities,
// each a small interface: FileChecker (a file's check with its events),
// Optimizer (the WAL checkpoint after a run), FileStatus (a file's writer
// and kept warehouses), BackupTaker and LocalFile (SQLite's); Leaser,
// LeaseLister and Replicas (PostgreSQL's); Reporter and DocsReader (both).
// Each dialect asserts at compile time the ones it implements.
//
// The other rules both dialects follow, each once: the batch commit
// (CommitBatch over a dialect's BatchTx) and the walk's close (CloseWalk
// over a WalkTx); WriteTurns (the commits of several accounts of one file in
// one process take turns); field types (typed.go: ClassifyValue,
// FieldType.Fit, MinorJSON, the sticky type rule and TypeUpgrade) and
// amounts (amounts.go: AmountRules, a card's scale from its currency); one
// content per id and walk (conflicts.go: an id listed with two contents
// keeps its stored content); the change hash (hashform.go: numbers by exact
// value, strings in NFC); the run rules (CheckTrigger, CheckFinishStatus,
// StaleCutoff); the lease rules (DefaultLeaseTTL, MinLeaseTTL,
// CheckLeaseTTL, CheckHolder); and RedactURL (a PostgreSQL URL fit for
// logs).
package load
