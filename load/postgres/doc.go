// Package postgres is the PostgreSQL warehouse: the second implementation
// of what package load does for SQLite, for several replicas sharing one
// database. It opens a pgx pool ([warehouse] url), migrates
// schema.Postgres (versions in schema_migrations, each migration in its
// own transaction under a transaction-scoped advisory lock, so migrators
// may race), and offers the methods the worker calls on *sqlite.Warehouse
// with the same signatures and meaning, in load's types: runs, account
// snapshots, WalkWriter page commits with their checkpoint, walks and
// two-walk removals with the mass-removal guard, quarantine, redaction.
// It owns the lease rows (sync_leases) that share accounts among replicas.
// It never speaks HTTP, never imports package extract, and never logs or
// returns the URL's password.
//
// # Same contract as SQLite
//
// The database-independent steps are load's own, so both destinations
// store the same thing and batch, count and decide alike: redaction,
// canonical JSON, hashing and setting aside unusable items
// (load.PreparePageItems, load.QuarantineData), a page's comparison and
// accounting (batch.PreparedPage, batch.BatchTally), the batching policy
// (batch.Batcher with load.BatchLimits), the options and their defaults
// (Options.Common, load.Options.Settings), the removal and guard rules
// (walk.Removals, walk.HoldRemovals, walk.FoldsWalk with the fold's
// SQL) and the account snapshot's columns (load.PrepareAccount). A batch of
// pages commits in one transaction with the checkpoint that follows it and
// the run's counters; cards whose data hash is unchanged are not written
// (their rows keep their xmin); a card is marked removed only when two
// consecutive complete, consistent walks miss it, unless the guard holds
// the removal; rejected items go to rejected_cards, redacted.
//
// Where PostgreSQL differs: documents are jsonb (keys reordered, duplicates
// dropped, numbers rewritten by PostgreSQL; data_hash, load.DataHash, reads
// values, so the text as sent and jsonb's text of it hash alike), so a card whose JSON jsonb cannot store (a \u0000 escape, a
// UTF-16 surrogate escape not in a pair, a number beyond numeric's range:
// jsonbUnstorable scans the text before the page is sent) is quarantined
// alone, and a card id that is not UTF-8 or holds a NUL byte too.
// account_snapshots.raw is text, kept as received. walk_seen holds each
// page's ids as a text[] (and its cards' hashes as one bytea).
//
// # Schema and locks
//
// The warehouse lives in one schema (Options.Schema, public by default):
// every connection's search_path is that schema alone, so a schema named
// after the role changes nothing, and Open refuses an empty default schema
// beside another schema's warehouse (checkSchema). Every connection and
// write transaction waits at most LockTimeout for a lock; a statement that
// gives up returns a *LockTimeoutError naming what it waited for.
// cardsync's own advisory locks are waited for longer (advisoryLock).
//
// # card_fields, cards_flat and column_docs
//
// The public names are SQLite's. The page commit records its cards'
// top-level fields in card_fields with cardfield.PlanFields (SQLite's rule:
// JSON types, first and last run, a column name unique case-insensitively),
// taking a transaction-scoped advisory lock only when it adds or updates a
// row, so replicas of several accounts never pick the same column. The
// cards_flat view is not touched inside that transaction: after the commit,
// syncFlat compares the view with card_fields in a transaction of its own
// under another advisory lock and changes it only when needed, with CREATE
// OR REPLACE VIEW when the change adds columns at the end (card_id,
// removed_at and account come first so that a new field always does).
// Every field column is text whatever JSON types the field holds, so a
// field whose type changes never changes its column; a decimal field's
// minor-units column (card_fields.minor_column) is bigint, read from
// card_state.minor, and its type is sticky (cardfield.PlanFields), so it never
// changes either; only a column that
// goes (its field pruned) or one of another type (a numeric column made by
// an older binary) needs DROP and CREATE. Neither is tried while another
// session holds the view (an analyst's open transaction: its readers would
// queue behind the ACCESS EXCLUSIVE lock) or by a role that does not own
// it. A failed re-creation (a view
// built on cards_flat blocking the DROP, a lock, a permission) is a warning
// in the log, never a failed open or run: the view keeps its old columns,
// CardsFlatStale and Summary report it, and the next commit tries again.
// PostgreSQL's bounds are lower than SQLite's:
// 1,597 field columns, names of 63 bytes (flatLimits). load's bounds on
// card_fields hold here too: a walk adds at most load.MaxNewFieldsPerWalk
// fields (cardfield.FieldBudget, counted over the walk's runs), and PruneFields
// deletes the rows cardfield.StaleFields names under the fields lock, then
// syncFlat drops their columns (DROP and CREATE, then the view's comments
// again). A writing Open fills column_docs and the COMMENTs of the
// documented tables, views and columns from schema.ObjectsIn in
// PostgreSQL's words when they differ, under a third advisory lock.
//
// # Leases and fencing
//
// AcquireLease takes an account's lease row when it is free or expired by
// the server's clock, or renews it for its holder, in one transaction;
// fencing_token goes up whenever the lease changes hands or lapsed. Once a
// Warehouse has taken the lease of its own account (or when
// Options.RequireLease is set), every write transaction first reads the
// lease row FOR SHARE and checks holder, token and expires_at > now(): a
// replica paused past its lease's expiry finds ErrLeaseLost and writes
// nothing, and a replica taking over waits for a commit in flight rather
// than overlapping it. No session-level advisory lock is used, so the pool
// may sit behind PgBouncer in transaction pooling mode (add
// default_query_exec_mode=exec to the URL when the pooler cannot keep
// prepared statements).
//
// # Times
//
// Times written are Options.Now (UTC, whole seconds), as in SQLite; lease
// expiry alone uses the server's now(), the one clock all replicas share.
//
// # Pools, read-only opens and replicas
//
// A Warehouse has a pgx pool of its own, or shares Pools (one per database,
// shared by a serve's accounts, with 2 connections kept for lease renewals
// and heartbeats; migration and checks once per pool: pool.go). Options.ReadOnly
// opens for status and check: no DDL, no write, an older schema refused with
// load.ErrSchemaTooOld. sync_replicas holds each replica's heartbeat
// (load.Replicas: ReplicaHeartbeat, LeaveReplicas, LiveReplicas). The
// schema-name rule and the lease connections a shared pool keeps are in
// load/postgres/pgrules, which config uses without compiling pgx.
package postgres
