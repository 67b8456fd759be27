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
package load
