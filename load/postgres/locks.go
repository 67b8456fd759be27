package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// LockTimeout bounds every wait of a statement for a lock (lock_timeout,
// set on each connection and in each write transaction): a table or view
// held by another session (an analyst's open transaction, a DDL, a
// VACUUM FULL) makes the statement fail with a *LockTimeoutError after
// this long instead of waiting for ever.
const LockTimeout = 5 * time.Second

// flatLockTimeout bounds the wait for cards_flat's ACCESS EXCLUSIVE lock
// when it is re-created: every reader of cards_flat queues behind a
// pending one, so it is short (and tried only when no session holds the
// view: flatHeld).
const flatLockTimeout = time.Second

// Waits for cardsync's own advisory locks, held by other replicas for the
// length of a short transaction (peerLockTimeout: card_fields, cards_flat,
// column_docs) or of a migration (migrationLockTimeout).
const (
	peerLockTimeout      = time.Minute
	migrationLockTimeout = 10 * time.Minute
)

// LockTimeoutError is a statement that gave up waiting for a lock
// (SQLSTATE 55P03, lock_timeout): What names what it waited for.
type LockTimeoutError struct {
	What   string
	Waited time.Duration
	Err    error
}

// Error implements error.
func (e *LockTimeoutError) Error() string {
	if e.Waited == 0 {
		return fmt.Sprintf("%s: %v", e.What, e.Err)
	}
	return fmt.Sprintf("gave up after %s waiting for %s: %v", e.Waited, e.What, e.Err)
}

// Unwrap returns the server's error.
func (e *LockTimeoutError) Unwrap() error { return e.Err }

// genericLockWait is what a statement of no named object waited for.
const genericLockWait = "a lock on a table of the warehouse, held or awaited by another session (an analyst's open transaction, a migration or a DDL waiting behind one?)"

// waitedFor makes a lock timeout (SQLSTATE 55P03) a *LockTimeoutError
// naming what, unless it already is one; other errors are returned as
// they are.
func waitedFor(err error, what string, waited time.Duration) error {
	var pgErr *pgconn.PgError
	var named *LockTimeoutError
	if err == nil || errors.As(err, &named) || !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
		return err
	}
	return &LockTimeoutError{What: what, Waited: waited, Err: err}
}

// millis is a duration as a lock_timeout setting (milliseconds).
func millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// advisoryLock takes the transaction-scoped advisory lock key, waiting at
// most timeout (what names it in the error), then bounds the rest of the
// transaction's waits by LockTimeout again.
func advisoryLock(ctx context.Context, tx pgx.Tx, key int64, timeout time.Duration, what string) error {
	return xactLock(ctx, tx, `SELECT pg_advisory_xact_lock($1)`, key, timeout, what)
}

// advisoryLockShared is advisoryLock taking the lock shared.
func advisoryLockShared(ctx context.Context, tx pgx.Tx, key int64, timeout time.Duration, what string) error {
	return xactLock(ctx, tx, `SELECT pg_advisory_xact_lock_shared($1)`, key, timeout, what)
}

// xactLock runs lock (a statement taking a transaction-scoped advisory
// lock on $1) for advisoryLock and advisoryLockShared.
func xactLock(ctx context.Context, tx pgx.Tx, lock string, key int64, timeout time.Duration, what string) error {
	if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, millis(timeout)); err != nil {
		return fmt.Errorf("lock %s: %w", what, err)
	}
	if _, err := tx.Exec(ctx, lock, key); err != nil {
		return fmt.Errorf("lock %s: %w", what, waitedFor(err, what, timeout))
	}
	if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, millis(LockTimeout)); err != nil {
		return fmt.Errorf("lock %s: %w", what, err)
	}
	return nil
}

// flatHeld reports whether another session holds or awaits a lock on
// cards_flat (an analyst's open transaction that read it): re-creating
// the view then would queue every reader behind its ACCESS EXCLUSIVE lock.
func flatHeld(ctx context.Context, tx pgx.Tx) (bool, error) {
	var held bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
		WHERE locktype = 'relation' AND relation = to_regclass('cards_flat') AND pid <> pg_backend_pid()
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`).Scan(&held)
	return held, err
}

// sessionSettings is the pool's AfterConnect: every connection's
// search_path is schema alone (searchPath), and it waits at most
// LockTimeout for a lock, reads included (a read queues behind a pending
// ACCESS EXCLUSIVE lock). Every transaction may sit idle between its
// statements for at most idle: a replica paused (SIGSTOP, a VM freeze)
// inside one, the re-creation of cards_flat or a lease's take say, would
// otherwise hold its locks, and stall every other replica, for as long as
// it is paused; the server ends that session instead. Set on the session
// rather than in the startup packet, which a pooler such as PgBouncer may
// refuse; write transactions set them again locally (Warehouse.write),
// and a migration lifts the idle bound for its own transaction.
func sessionSettings(schema string, idle time.Duration) func(context.Context, *pgx.Conn) error {
	return func(ctx context.Context, c *pgx.Conn) error {
		if _, err := c.Exec(ctx, `SELECT set_config('lock_timeout', $1, false), set_config('search_path', $2, false),
				set_config('idle_in_transaction_session_timeout', $3, false)`,
			millis(LockTimeout), searchPath(schema), millis(idle)); err != nil {
			return fmt.Errorf("pin search_path, lock_timeout and idle_in_transaction_session_timeout: %w", err)
		}
		return nil
	}
}
