package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
	"github.com/cardsync/cardsync/redact"
)

// DefaultMaxConns is Options.MaxConns's default: a writer needs one
// connection at a time, the rest serve status readers and lease renewals.
const DefaultMaxConns = 4

// Options configures Open. The zero value is usable.
type Options struct {
	// Common are the options both warehouses take, with load.Options'
	// meaning, rules and defaults (load.Options.Settings): Account, Now,
	// Logger, RedactFields, MaxRemovedFraction, BatchPages, BatchDelay and
	// CommitDelay. Now stamps every time written; lease expiry uses the
	// server's clock instead. Its SQLite-only fields (FileMode,
	// Synchronous, Checkpoint) are not used.
	Common load.Options
	// Password is used when the URL carries none: read by the caller from
	// a file or a systemd credential, so that the URL (which may be logged)
	// never holds it.
	Password string
	// RequireLease refuses every write (ErrLeaseLost) until AcquireLease
	// has taken the lease of Account: set it when replicas share the
	// database.
	RequireLease bool
	// MaxConns bounds the pool (default DefaultMaxConns). It is not used
	// with Pools, whose bound is the shared pool's.
	MaxConns int32
	// Pools, when set, gives the Warehouse the shared pool of its
	// database (same URL, password, schema and ReadOnly) instead of a pool
	// of its own: the accounts of one process then hold at most
	// Pools.MaxConns connections together.
	Pools *Pools
	// ReadOnly opens the warehouse to read (status, check): Open runs no
	// DDL and writes nothing (no migration, no column_docs, no cards_flat),
	// so a role with only USAGE on the schema and SELECT on its tables may
	// use it, and every write method returns load.ErrReadOnly. A database
	// whose schema is older than this binary's is refused with a
	// *load.SchemaVersionError wrapping load.ErrSchemaTooOld (the next
	// sync, serve or backfill, upgrades it); one without cardsync's tables
	// with load.ErrNotMigrated.
	ReadOnly bool
	// IdleInTransaction bounds how long a write transaction may sit idle
	// between statements before the server ends its session (default
	// DefaultIdleInTransaction). Every write transaction holds its lease
	// row FOR SHARE, so a replica paused inside one (SIGSTOP, a VM freeze)
	// would otherwise keep the lease from being taken over for as long as
	// it is paused: it is kept below the lease TTL (LeaseTTL).
	IdleInTransaction time.Duration
	// LeaseTTL is how long an account's lease lasts without renewal
	// ([cluster] lease_ttl; 0: load.DefaultLeaseTTL). Unless
	// IdleInTransaction is set, a write transaction idle for half of it
	// (at most DefaultIdleInTransaction) ends its session, so a paused
	// replica's lease can move on.
	LeaseTTL time.Duration
	// Schema is the schema the warehouse lives in ("": DefaultSchema,
	// public). Every connection's search_path is pinned to it alone, so
	// a schema named after the role ("$user") changes nothing. It must
	// exist; see checkSchema for one holding no warehouse.
	Schema string
}

// DefaultIdleInTransaction is Options.IdleInTransaction's default.
const DefaultIdleInTransaction = 10 * time.Second

// idleInTx is IdleInTransaction or, unset, half the lease TTL, never
// above DefaultIdleInTransaction: a replica paused inside a write
// transaction holds its lease row, so its session ends well before the
// lease would lapse.
func (o Options) idleInTx() time.Duration {
	if o.IdleInTransaction > 0 {
		return o.IdleInTransaction
	}
	ttl := o.LeaseTTL
	if ttl <= 0 {
		ttl = load.DefaultLeaseTTL
	}
	return min(DefaultIdleInTransaction, ttl/2)
}

// Warehouse is the PostgreSQL warehouse of one account. It is safe for
// concurrent use; its WalkWriters are not.
type Warehouse struct {
	pool *pgxpool.Pool
	// leasePool runs lease renewals and releases and replica heartbeats:
	// pool itself, or a shared pool's LeaseConns kept for them (Pools). A
	// takeover (AcquireLease) may wait on a row lock, so it uses pool.
	leasePool *pgxpool.Pool
	release   func() // closes pool, or drops this Warehouse's share of it
	url       string // redacted
	schema    string // the schema it lives in
	account   string
	instance  string // this open's id in the leases it takes (sync_leases.instance)
	now       func() time.Time
	log       *slog.Logger
	policy    *redact.Policy
	rules     load.ItemRules // policy, the card id key (read at open) and keep_fields
	fraction  float64
	batch     load.BatchLimits
	// amounts are the scales of card money (Options.AmountScale,
	// CurrencyField).
	amounts  load.AmountRules
	idleInTx time.Duration
	require  bool
	readOnly bool

	// flatStale is set when cards_flat could not follow card_fields after
	// a commit: the next commit tries again.
	flatStale atomic.Bool

	mu    sync.Mutex
	fence fence // the lease this Warehouse writes under (zero: none)

	closeOnce sync.Once
}

// fence is a lease taken by AcquireLease.
type fence struct {
	holder string
	token  int64
}

// Open connects to the PostgreSQL database of url (postgres://…), migrates
// it (unless opts.ReadOnly: then it only checks the schema version) and
// returns the Warehouse of opts.Account. The URL's password, if
// any, never appears in an error or a log line. With opts.Pools, the
// Warehouse uses that database's shared pool (Pools), and the checks and
// migration above run once per pool.
func Open(ctx context.Context, url string, opts Options) (_ *Warehouse, err error) {
	defer classify(&err)
	shown := RedactURL(url)
	set := opts.Common.Settings()
	if err := load.CheckAccountName(set.Account); err != nil {
		return nil, fmt.Errorf("open warehouse %s: Account: %w", shown, err)
	}
	if err := load.CheckMaxRemovedFraction(set.MaxRemovedFraction); err != nil {
		return nil, fmt.Errorf("open warehouse %s: MaxRemovedFraction: %w", shown, err)
	}
	if err := load.CheckCardAmountScale(set.Amounts.Scale); err != nil {
		return nil, fmt.Errorf("open warehouse %s: AmountScale: %w", shown, err)
	}
	if err := load.CheckCurrencyField(set.Amounts.CurrencyField); err != nil {
		return nil, fmt.Errorf("open warehouse %s: CurrencyField: %w", shown, err)
	}
	schema := cmp.Or(opts.Schema, DefaultSchema)
	if err := CheckSchemaName(schema); err != nil {
		return nil, fmt.Errorf("open warehouse %s: Schema: %w", shown, err)
	}
	cfg, err := poolConfig(url, opts, schema)
	if err != nil {
		return nil, fmt.Errorf("open warehouse %s: %w", shown, err)
	}
	password := cfg.ConnConfig.Password
	w := &Warehouse{
		url: shown, schema: schema, account: set.Account, now: set.Now, log: set.Logger,
		policy: set.Policy, fraction: set.MaxRemovedFraction, batch: set.Batch, amounts: set.Amounts, idleInTx: opts.idleInTx(),
		require: opts.RequireLease, readOnly: opts.ReadOnly, instance: newInstance(),
	}
	sp, err := w.connect(ctx, cfg, opts.Pools, poolKey{url: url, password: password, schema: schema, readOnly: opts.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("open warehouse %s: %w", shown, scrub(err, password))
	}
	if err := w.prepareOnce(ctx, sp, opts, set.Logger, set.Policy); err != nil {
		w.Close()
		return nil, fmt.Errorf("open warehouse %s: %w", shown, scrub(err, password))
	}
	w.rules = set.ItemRules(nil)
	if !opts.ReadOnly {
		key, err := readIDKey(ctx, w.pool)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("open warehouse %s: %w", shown, scrub(err, password))
		}
		w.rules = set.ItemRules(key)
		// A cards_flat that cannot follow (a view built on it, a lock, a
		// permission) is a warning, never a failed start; each account's
		// Warehouse learns whether it is stale.
		w.followFlat(ctx)
	}
	return w, nil
}

// poolConfig is the pool configuration of url: opts.Password when the URL
// carries none, cardsync's session settings and search_path pinned to
// schema, opts.MaxConns connections.
func poolConfig(url string, opts Options, schema string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's parse errors quote the connection string: say only where.
		return nil, errors.New("the URL does not parse as a PostgreSQL connection string")
	}
	if cfg.ConnConfig.Password == "" {
		cfg.ConnConfig.Password = opts.Password
	}
	cfg.MaxConns = DefaultMaxConns
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "cardsync"
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	cfg.AfterConnect = sessionSettings(schema, opts.idleInTx())
	return cfg, nil
}

// connect gives w its pools: the shared pool of key in pools, or one of
// its own (nil pools; its lease statements then share it), and checks
// that the server answers. It returns the shared pool (nil: its own).
func (w *Warehouse) connect(ctx context.Context, cfg *pgxpool.Config, pools *Pools, key poolKey) (*sharedPool, error) {
	var sp *sharedPool
	if pools == nil {
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, err
		}
		w.pool, w.leasePool, w.release = pool, pool, pool.Close
	} else {
		var err error
		if sp, err = pools.acquire(ctx, key, cfg); err != nil {
			return nil, err
		}
		w.pool, w.leasePool, w.release = sp.main, sp.lease, func() { pools.release(key) }
	}
	if err := w.pool.Ping(ctx); err != nil {
		w.Close()
		return nil, err
	}
	return sp, nil
}

// prepareOnce is prepare, run once per shared pool (sp; nil: every time):
// a failed preparation is tried again by the next Open.
func (w *Warehouse) prepareOnce(ctx context.Context, sp *sharedPool, opts Options, log *slog.Logger, policy *redact.Policy) error {
	if sp == nil {
		return w.prepare(ctx, opts, log, policy)
	}
	sp.setup.Lock()
	defer sp.setup.Unlock()
	if sp.ready {
		return nil
	}
	if err := w.prepare(ctx, opts, log, policy); err != nil {
		return err
	}
	sp.ready = true
	return nil
}

// prepare checks the schema and migrates it (a read-only open checks its
// version instead), then, to write, checks the role may and refreshes
// column_docs.
func (w *Warehouse) prepare(ctx context.Context, opts Options, log *slog.Logger, policy *redact.Policy) error {
	migrated, err := checkSchema(ctx, w.pool, w.schema, opts.Schema != "", opts.ReadOnly, log)
	if err != nil {
		return err
	}
	if opts.ReadOnly {
		return checkVersion(ctx, w.pool)
	}
	if !migrated {
		// The first migration creates the tables: a role that may not is
		// told which GRANT it lacks, not "permission denied for schema".
		if err := checkCreatable(ctx, w.pool, w.schema, w.url); err != nil {
			return err
		}
	}
	applied, err := Migrate(ctx, w.pool, policy, w.amounts)
	if err != nil {
		return err
	}
	for _, v := range applied {
		log.Debug("schema migration applied", "version", v)
	}
	if len(applied) > 0 {
		sqlshare.LogMigrated(log, applied[0]-1, applied[len(applied)-1], len(applied))
	}
	// A role that may read but not write an up-to-date database (Migrate
	// had nothing to do) is refused here, by name, before any write.
	if err := checkWritable(ctx, w.pool, w.url, w.schema); err != nil {
		return err
	}
	// The shared objects a migration cannot fill: column_docs from this
	// binary's documentation (cards_flat follows in Open).
	return w.refreshColumnDocs(ctx)
}

// checkVersion is a read-only open's check of the schema: it reads
// schema_migrations (never creating it) and refuses a database without
// cardsync's tables (load.ErrNotMigrated) or at another version than this
// binary's (*load.SchemaVersionError: older, the next sync upgrades it;
// newer, upgrade cardsync).
func checkVersion(ctx context.Context, pool *pgxpool.Pool) error {
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	if !exists {
		return load.ErrNotMigrated
	}
	var have int
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	if latest := SchemaVersion(); have != latest {
		return &load.SchemaVersionError{Database: have, Binary: latest}
	}
	return nil
}

// scrub removes password from err's text, should a driver ever quote it.
func scrub(err error, password string) error {
	if err == nil || password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), password, "xxxxx"))
}

// Path returns the database's URL without its password, for messages.
func (w *Warehouse) Path() string { return w.url }

// Schema is the schema the warehouse lives in (Options.Schema).
func (w *Warehouse) Schema() string { return w.schema }

// Account is the account the Warehouse reads and writes.
func (w *Warehouse) Account() string { return w.account }

// Pool returns the underlying pool, for tests and read-only diagnostics.
// Do not write through it.
func (w *Warehouse) Pool() *pgxpool.Pool { return w.pool }

// Close closes the pool (a shared pool: when the last Warehouse using it
// closes). It does not release a lease: AcquireLease's holder may call
// ReleaseLease first to hand its accounts over at once.
func (w *Warehouse) Close() error {
	w.closeOnce.Do(w.release)
	return nil
}

// Writable implements load.Reader: the database answers, accepts
// writes (a standby promoted away from us does not) and the role may write
// every table a sync writes (writePrivileges), in one query. A refusal wraps
// load.ErrNotWritable and names the role and the first privilege it lacks.
// cards_flat's re-creation and the COMMENTs need the objects' owner; without
// it they are warnings (followFlat, refreshColumnDocs), so they are not
// checked here.
func (w *Warehouse) Writable(ctx context.Context) (err error) {
	defer classify(&err)
	return checkWritable(ctx, w.pool, w.url, w.schema)
}

// writePrivileges are the privileges a sync uses on each table it writes,
// in the order checkWritable reports the first one missing (SELECT ... FOR
// UPDATE and FOR SHARE need UPDATE; INSERT ... ON CONFLICT DO UPDATE needs
// both).
var writePrivileges = []struct{ table, privileges string }{
	{"sync_runs", "SELECT,INSERT,UPDATE"},
	{"sync_leases", "SELECT,INSERT,UPDATE"},
	{"sync_replicas", "SELECT,INSERT,UPDATE"},
	{"card_state", "SELECT,INSERT,UPDATE"},
	{"card_versions", "SELECT,INSERT,UPDATE"},
	{"account_snapshots", "SELECT,INSERT"},
	{"sync_checkpoints", "SELECT,INSERT,UPDATE"},
	{"sync_walks", "SELECT,INSERT,UPDATE,DELETE"},
	{"removal_pending", "SELECT,INSERT,DELETE"},
	{"walk_seen", "SELECT,INSERT,DELETE"},
	{"run_pages", "SELECT,INSERT,UPDATE,DELETE"},
	{"rejected_cards", "SELECT,INSERT,UPDATE"},
	{"card_fields", "SELECT,INSERT,UPDATE,DELETE"},
	{"column_docs", "SELECT,INSERT,UPDATE,DELETE"},
}

// notWritableError is a role's refusal to write: it reads as msg (then
// err, if any) and wraps load.ErrNotWritable (whose text speaks of a file)
// and err.
type notWritableError struct {
	msg string
	err error
}

// Error implements error.
func (e *notWritableError) Error() string {
	if e.err == nil {
		return e.msg
	}
	return e.msg + ": " + e.err.Error()
}

// Unwrap makes errors.Is find load.ErrNotWritable and the cause.
func (e *notWritableError) Unwrap() []error { return []error{load.ErrNotWritable, e.err} }

// checkWritable is Writable's query: whether the session is read-only (a
// standby), the role, and the first of writePrivileges it lacks (a table
// missing counts as lacking it). A privilege missing is a
// *load.PrivilegeError whose Grant gives the role every privilege a sync
// uses on the tables of schema.
func checkWritable(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, shown, schema string) error {
	var tables, privileges []string
	for _, p := range writePrivileges {
		for priv := range strings.SplitSeq(p.privileges, ",") {
			tables, privileges = append(tables, p.table), append(privileges, priv)
		}
	}
	var ro, role string
	var missing *string
	if err := q.QueryRow(ctx, `SELECT current_setting('transaction_read_only'), current_user::text,
		(SELECT p || ' on table ' || t FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(t, p, o)
			WHERE NOT coalesce(has_table_privilege(to_regclass(t)::oid, p), false) ORDER BY o LIMIT 1)`,
		tables, privileges).Scan(&ro, &role, &missing); err != nil {
		return fmt.Errorf("check the warehouse %s: %w", shown, err)
	}
	if ro == "on" {
		return &notWritableError{msg: fmt.Sprintf("the warehouse database %s is read-only for role %s (default_transaction_read_only is on, or the server is a standby)", shown, role)}
	}
	if missing != nil {
		// Identity columns need no privilege on their sequences: the
		// tables' privileges are all a sync uses.
		return &load.PrivilegeError{Role: role, Warehouse: shown, Action: "write the warehouse", Lacks: *missing,
			Grant: fmt.Sprintf("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %s TO %s", pgx.Identifier{schema}.Sanitize(), pgx.Identifier{role}.Sanitize())}
	}
	return nil
}

// stamp is the time written now: Options.Now in UTC, whole seconds (as the
// SQLite warehouse stores them).
func (w *Warehouse) stamp() time.Time { return w.now().UTC().Truncate(time.Second) }

// write runs fn in one transaction, after checking the lease this
// Warehouse writes under (checkLease).
func (w *Warehouse) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if w.readOnly {
		return load.ErrReadOnly
	}
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		// Per transaction (SET LOCAL), so they hold behind a pooler in
		// transaction mode too.
		if _, err := tx.Exec(ctx, "SELECT set_config('idle_in_transaction_session_timeout', $1, true), set_config('lock_timeout', $2, true), set_config('search_path', $3, true)",
			millis(w.idleInTx), millis(LockTimeout), searchPath(w.schema)); err != nil {
			return fmt.Errorf("bound idle transactions: %w", err)
		}
		if err := w.checkLease(ctx, tx); err != nil {
			return err
		}
		return fn(tx)
	})
}

// exec runs one statement in a write transaction (see write).
func (w *Warehouse) exec(ctx context.Context, query string, args ...any) error {
	return w.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, query, args...)
		return err
	})
}

// utc converts a time read from the server (pgx gives local times) to UTC.
func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ItemRules are the rules this warehouse stores a page's items by (its
// policy, card id key and keep_fields): what a tool that rewrites stored
// rows applies to match what a sync writes.
func (w *Warehouse) ItemRules() load.ItemRules { return w.rules }
