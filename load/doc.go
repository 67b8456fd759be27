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
// page's items (PreparePageItems, QuarantineData), the field limits
// (MaxNewFieldsPerWalk, DefaultFieldRetention), the reasons of an
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
// (load/internal/batch: CommitBatch over a dialect's BatchTx) and the
// walk's close (load/internal/walk: CloseWalk over a WalkTx, the removal
// rules and the mass-removal guard, one content per id and walk: an id
// listed with two contents keeps its stored content); field discovery and
// types (load/internal/cardfield: FieldSet, PlanFields, FieldBudget,
// ClassifyValue, FieldType.Fit, MinorJSON, the sticky type rule,
// TypeUpgrade and the report's exact card sums); the run rules
// (load/internal/runrule: CheckTrigger, CheckFinishStatus, StaleCutoff);
// the report's limits and field changes (load/internal/reportrows);
// WriteTurns (the commits of several accounts of one file in one process
// take turns); amounts (amounts.go: AmountRules, a card's scale from its
// currency); the change hash (load/internal/hashform: numbers by exact
// value, strings in NFC); the lease rules (DefaultLeaseTTL, MinLeaseTTL,
// CheckLeaseTTL, CheckHolder); and RedactURL (a PostgreSQL URL fit for
// logs).
package load
