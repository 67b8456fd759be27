// Package sqlite is the SQLite warehouse (the default; package load/postgres
// is the other): the only package that opens a SQLite warehouse file. It
// implements package load's Destination with load's types and rules, and
// migrates the schema (package schema), upserts cards and versions, stores
// account snapshots, run history and page checkpoints. It never speaks HTTP
// and never imports package extract.
//
// # Writing
//
// Open holds one connection (SetMaxOpenConns(1)) with its pragmas in a
// file: DSN: WAL (checked after open), busy_timeout 5 s, foreign_keys,
// synchronous FULL by default, journal_size_limit 64 MiB, trusted_schema OFF,
// _txlock=immediate (every write is BEGIN IMMEDIATE) and _time_format=sqlite.
// Every time is stored as UTC text YYYY-MM-DDTHH:MM:SSZ from Options.Now.
//
// A walk's pages go through a WalkWriter. Each page is redacted and its
// cards compared with the warehouse by hash (card_state.data_hash, one query
// per page, no write). Pages are committed several to a transaction: cards,
// versions, the pages' seen ids (walk_seen, one row per page),
// card_fields/cards_flat, a run_pages audit row for each page that changed
// something, the walk's running summary, the checkpoint and the run's
// counters, together or not at all. A batch commits when it holds
// Options.BatchPages pages, when Options.BatchDelay has passed since its
// first page, when Options.CommitDelay (a second) has passed since its first
// page that changes something (a new, changed or returned card, a rejected
// item, a new field), or on Flush. A run that finds nothing new costs a few
// transactions, not one per page; at the API's pace a change is committed
// within about a second; after a crash at most one batch is fetched again,
// and since the checkpoint commits with the pages it covers, nothing is lost
// or applied twice. A card listed on two pages of one batch (a repeated
// page, offset drift) is compared the second time with its first
// occurrence in the batch, not with the warehouse as it was before the
// batch (Batcher, PreparedPage.ResolveRepeats): stored once, unchanged when
// equal, a new version when it differs, never counted new twice. Unchanged
// cards are never written, and no
// card row is written when a walk finishes either: the cards view derives
// last_seen_at/last_seen_run of current cards from the last complete walk,
// so during a walk they show the previous complete walk.
//
// Nothing grows with each run except sync_runs and account_snapshots: a
// complete walk that changed nothing is folded into the sync_walks row of
// the identical walk before it, walk_seen is emptied when a walk closes, and
// run_pages only records pages that changed something (and is pruned by
// PruneAudit).
//
// # Removals
//
// A card is never deleted. Offset pagination cannot prove a card is gone:
// a card removed before the cursor while another is added after it shifts
// a still-listed card out of the pages read, and the walk's total, its
// distinct ids and its duplicates all still add up. So FinishWalk marks a
// card removed (removed_at plus a closing 'removed' version) only when two
// consecutive complete, consistent walks miss it: the first miss puts it in
// removal_pending, the second confirms it. A walk of any outcome that lists
// it again clears it; an inconsistent walk adds nothing and confirms
// nothing. A removed card that is listed again gets a 'returned' version.
// A real removal therefore shows up one walk later than it could.
//
// One writer per account: a sync takes its account's run lock
// (OpenAccountLock) before Open; a whole-file operation (restore, check)
// // takes AcquireLock(path), which excludes every account's writer. Both live
// on the database file itself (flock, and a byte-range lock far beyond its
// end), so they hold for every spelling of the path (a symlink, a hard link,
// a relative path), and die with the process; path+".lock" (and
// path+".NAME.lock" for an account NAME other than DefaultAccount) only
// records the holder's pid for the "sync in progress (pid N)" message.
//
// # Accounts
//
// One file may hold several API accounts (schema 5): every row that
// belongs to one carries its name in an account column (cards keyed by
// (account, card_id), checkpoints by (account, stream)), and a Warehouse
// reads and writes only the rows of Options.Account (default
// DefaultAccount, the account of every row stored before schema 5). Two
// Warehouses of different accounts on one file share nothing but
// card_fields (the columns of the file's one cards_flat view) and
// column_docs. Each account has its own run lock (OpenAccountLock), so the
// accounts of one file sync concurrently; their write transactions take
// turns on the file (Options.BusyTimeout).
//
// # Card fields
//
// Each field has a type (card_fields.type, load/internal/cardfield), set
// by the first batch holding non-null values of it and never changed; the
// commit computes each written card's decimal fields in minor units in Go
// (cardfield.MinorJSON) into card_state.minor, which cards_flat's _minor
// columns read with json_extract (INTEGER, no SQL function of cardsync's own, so the
// sqlite3 CLI and Datasette read them). Migration 13's Go step
// (upgradeTyped) types the fields of an older file from its cards.
//
// card_fields is bounded, by rules both warehouses share (cardfield): a walk
// adds at most MaxNewFieldsPerWalk new fields over all its pages, batches
// and runs (FieldBudget; PlanFields leaves the rest out, their values stay
// in data and PageWriter.FieldsSkipped counts them), and every commit that
// records a run's fields stamps last_seen_at, so that PruneFields, called
// by the worker after a complete walk, deletes the rows StaleFields names
// (not seen for warehouse.field_retention, DefaultFieldRetention) and
// regenerates cards_flat without their columns. A field any account's
// commit saw within the retention stays.
//
// # Backups and checkpoints
//
// Every warehouse has an identity (warehouse_identity: a random 128-bit id
// created once, with the file or at the upgrade of an older one), which its
// backups carry as copies of it (ReadIdentity).
//
// Backup writes a consistent copy with VACUUM INTO on a read-only
// connection of its own (a writer and readers go on), checks it (integrity,
// application_id, user_version), fsyncs it and renames it to
// <stem>-YYYYMMDDTHHMMSSZ.db (BackupStem), then prunes older files of that
// pattern that carry the warehouse's identity only. Restore checks a
// backup, takes the writer lock, refuses without Force a file that lacks
// history the warehouse holds or is another warehouse's
// (RestoreRefusedError), keeps the current file (and its WAL) as
// <path>.before-restore-YYYYMMDDTHHMMSSZ (never replacing one;
// ListBeforeRestore), removes the current -wal and -shm and renames a
// checked copy, in WAL mode, over the path, then leaves an empty -wal and a
// -shm beside it as a writer does; an open writer adopts it in Verify. Options.WALCheckpoint "external" leaves WAL checkpoints to another
// process (Litestream): Optimize and Close run no TRUNCATE WAL checkpoint.
//
// # Redaction
//
// Before anything is stored (card_state and card_versions data,
// account_snapshots.raw, rejected_cards.data, run errors), documents and
// text go through package redact: full card numbers of every card network,
// wherever they stand (strings at any depth, inside longer text, object
// keys, JSON integers), are masked to their first 6 and last 4 digits;
// secret fields (a last word cvv, cvc, cvv2, cvc2, cvn or pin, or last two
// words security code, pin code or cvv code, plus Options.RedactFields) are
// dropped at any depth, while flags such as pin_verified stay; the top-level
// id is the card's identity and is kept as sent, unless it is or holds a
// card number: then it is stored, in every table and in the card's "id"
// member, as its masked form, '~' and a keyed hash (load.StoredID, with the
// key card_id_key holds, created once per warehouse), so the same card
// keeps one id. With Options.KeepFields only the named top-level fields
// (and id) are stored. The values of Options.Secrets (the password and the
// tokens in use) become "[REDACTED]" in every string, key and number of
// documents, in the account's fields and in stored text; the item is kept
// and sync_runs.secrets_redacted counts them. Documents are stored as
// canonical JSON (UTF-8, no needless escapes, numbers as sent, members
// sorted by key, the last of duplicate keys kept) so that every SQLite from
// 3.38 on reads every key and a card sent in another member order hashes
// the same. Migration 2 applied the policy to rows stored before it;
// migration 10 made stored documents canonical again, adding no version.
//
// # Analysts reading the file
//
// Analysts open the database read-only (sqlite3 'file:/path/warehouse.db?mode=ro',
// or OpenReadOnly) while the worker writes: WAL lets them read a stable
// snapshot without blocking the writer. During a run the only WAL checkpoints
// are PASSIVE ones (SQLite's autocheckpoint), so a long analyst transaction
// never stalls the worker; it only lets the WAL grow until the reader leaves.
// Optimize, after each run and on Close, tries a TRUNCATE WAL checkpoint with a
// 200 ms busy timeout and gives up quietly if a reader holds a snapshot.
//
// What a non-root analyst needs:
//   - read permission on the directory and on warehouse.db, -wal and -shm: the
//     files are created with Options.FileMode (default 0640) exactly, and
//     SQLite gives -wal/-shm the database file's mode; put the analysts in
//     the file's group (a setgid state directory, mode 2750, makes new files
//     inherit its group);
//   - -wal and -shm must exist, because a reader without write access to the
//     directory cannot create them. The writer therefore sets
//     SQLITE_FCNTL_PERSIST_WAL (reachable through modernc's FileControl):
//     when the worker stops, -wal (truncated to 0 bytes) and -shm stay in
//     place, and a read-only analyst can open the database whether the
//     worker is running or stopped. Do not delete them by hand.
//
// Readers never need write access; they cannot write (mode=ro).
//
// # Self-description and reports
//
// column_docs describes every public column (schema.Objects): migration 4
// fills it, and every writer open compares it with this binary's
// documentation and rewrites it only when it differs. ReportData reads what
// the HTML report (package report) shows of a period, in one read
// transaction: per-day aggregates in SQL so that a year of 15-minute
// snapshots comes back as a few thousand rows, amounts as integer cents and
// exact decimal text.
//
// # Errors and the writer lock
//
// Every error it returns wraps load.ErrWarehouse, except load.ErrLocked.
// The writer lock: OpenAccountLock (an account's run), Lock, and WaitLock
// (restore -wait waiting for a run to end). Verify is a file's check before
// a run: the same inode, writable, a deleted file written back.
package sqlite
