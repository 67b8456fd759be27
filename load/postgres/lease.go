package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
)

// DefaultLeaseTTL is load.DefaultLeaseTTL.
const DefaultLeaseTTL = load.DefaultLeaseTTL

// Lease is load.Lease: one row of sync_leases.
type Lease = load.Lease

// AcquireLease takes account's lease for holder for ttl, in one
// transaction, and returns its fencing token: a free or expired lease is
// taken over (the token goes up by one), a live lease of holder's renewed
// (same token). A live lease of another holder is refused with a
// *LeaseHeldError. Expiry is judged by the server's clock. When account is
// this Warehouse's, its later writes are fenced by the token.
func (w *Warehouse) AcquireLease(ctx context.Context, account, holder string, ttl time.Duration) (_ int64, err error) {
	defer classify(&err)
	if err := load.CheckAccountName(account); err != nil {
		return 0, fmt.Errorf("acquire lease: %w", err)
	}
	if holder == "" || ttl <= 0 {
		return 0, fmt.Errorf("acquire lease of %s: want a holder and a positive TTL, got %q and %v", account, holder, ttl)
	}
	var token int64
	err = pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		// The lease is kept (same token) only by the process that took
		// it: the same holder in another process (instance) is refused
		// while the lease is live, and bumps the token once it lapsed.
		err := tx.QueryRow(ctx, `INSERT INTO sync_leases AS l (account, holder, instance, fencing_token, expires_at, acquired_at, renewed_at)
			VALUES ($1, $2, $4, 1, now() + $3 * interval '1 microsecond', now(), now())
			ON CONFLICT (account) DO UPDATE SET
				fencing_token = CASE WHEN l.holder = excluded.holder AND l.instance IS NOT DISTINCT FROM excluded.instance AND l.expires_at > now()
					THEN l.fencing_token ELSE l.fencing_token + 1 END,
				acquired_at = CASE WHEN l.holder = excluded.holder AND l.instance IS NOT DISTINCT FROM excluded.instance AND l.expires_at > now()
					THEN l.acquired_at ELSE now() END,
				holder = excluded.holder,
				instance = excluded.instance,
				expires_at = excluded.expires_at,
				renewed_at = now()
			WHERE l.holder = excluded.holder AND l.instance IS NOT DISTINCT FROM excluded.instance OR l.expires_at <= now()
			RETURNING fencing_token`, account, holder, ttl.Microseconds(), w.instance).Scan(&token)
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		held := &LeaseHeldError{Account: account}
		if err := tx.QueryRow(ctx, `SELECT holder, expires_at FROM sync_leases WHERE account = $1`, account).
			Scan(&held.Holder, &held.ExpiresAt); err != nil {
			return err
		}
		held.SameHolder = held.Holder == holder
		return held
	})
	if err != nil {
		return 0, fmt.Errorf("acquire lease of %s: %w", account, err)
	}
	if account == w.account {
		w.mu.Lock()
		w.fence = fence{holder: holder, token: token}
		w.mu.Unlock()
	}
	return token, nil
}

// ReleaseLease ends holder's lease of account now, so another replica can
// take it at once (a clean shutdown, or a hand-over to spread the
// accounts). A live lease released has renewed_at = expires_at, which
// tells it from one that lapsed (Lease.Released). A lease holder no longer
// holds is left alone.
func (w *Warehouse) ReleaseLease(ctx context.Context, account, holder string) (err error) {
	defer classify(&err)
	if _, err := w.leasePool.Exec(ctx, `UPDATE sync_leases SET expires_at = least(expires_at, now()),
			renewed_at = CASE WHEN expires_at > now() THEN now() ELSE renewed_at END
		WHERE account = $1 AND holder = $2 AND instance IS NOT DISTINCT FROM $3`, account, holder, w.instance); err != nil {
		return fmt.Errorf("release lease of %s: %w", account, err)
	}
	if account == w.account {
		w.mu.Lock()
		if w.fence.holder == holder {
			w.fence.token = -w.fence.token // keep fencing: no write until taken again
		}
		w.mu.Unlock()
	}
	return nil
}

// Leases lists every account's lease, by account: who syncs what.
func (w *Warehouse) Leases(ctx context.Context) (_ []Lease, err error) {
	defer classify(&err)
	rows, err := w.pool.Query(ctx, `SELECT account, holder, fencing_token, expires_at, acquired_at, renewed_at, expires_at <= now()
		FROM sync_leases ORDER BY account`)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Lease, error) {
		var l Lease
		err := r.Scan(&l.Account, &l.Holder, &l.FencingToken, &l.ExpiresAt, &l.AcquiredAt, &l.RenewedAt, &l.Expired)
		l.ExpiresAt, l.AcquiredAt, l.RenewedAt = utc(l.ExpiresAt), utc(l.AcquiredAt), utc(l.RenewedAt)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	return out, nil
}

// checkLease is the fence of every write transaction: when this Warehouse
// writes under a lease (it took one, or Options.RequireLease), the lease
// row must still name its holder and token and not have expired by the
// server's clock. The row is read FOR SHARE, so a take-over waits for this
// transaction to end instead of overlapping it.
func (w *Warehouse) checkLease(ctx context.Context, tx pgx.Tx) error {
	w.mu.Lock()
	f := w.fence
	w.mu.Unlock()
	if f.holder == "" && !w.require {
		return nil
	}
	lost := &LeaseLostError{Account: w.account, Holder: f.holder, Token: max(f.token, 0)}
	if f.token <= 0 {
		return lost
	}
	var live bool
	err := tx.QueryRow(ctx, `SELECT expires_at > now() FROM sync_leases
		WHERE account = $1 AND holder = $2 AND fencing_token = $3 FOR SHARE`, w.account, f.holder, f.token).Scan(&live)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !live {
		return lost
	}
	if err != nil {
		return fmt.Errorf("check lease: %w", err)
	}
	return nil
}

// RenewLease extends holder's lease of account, taken with token, by ttl
// from now (the server's clock). Unlike AcquireLease it never takes a
// lease back: a lease that expired or changed hands since is refused with
// a *LeaseLostError, because the walk in memory may no longer match the
// checkpoint another holder moved on.
func (w *Warehouse) RenewLease(ctx context.Context, account, holder string, token int64, ttl time.Duration) (err error) {
	defer classify(&err)
	if ttl <= 0 {
		return fmt.Errorf("renew lease of %s: want a positive TTL, got %v", account, ttl)
	}
	tag, err := w.leasePool.Exec(ctx, `UPDATE sync_leases SET expires_at = now() + $4 * interval '1 microsecond', renewed_at = now()
		WHERE account = $1 AND holder = $2 AND fencing_token = $3 AND expires_at > now()`, account, holder, token, ttl.Microseconds())
	if err != nil {
		return fmt.Errorf("renew lease of %s: %w", account, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("renew lease: %w", &LeaseLostError{Account: account, Holder: holder, Token: token})
	}
	return nil
}

// MinLeaseTTL is load.MinLeaseTTL.
const MinLeaseTTL = load.MinLeaseTTL

// CheckLeaseTTL is load.CheckLeaseTTL, the rule of [cluster] lease_ttl.
func CheckLeaseTTL(ttl time.Duration) error { return load.CheckLeaseTTL(ttl) }

// CheckHolder is load.CheckHolder, the rule of a lease holder's name.
func CheckHolder(holder string) error { return load.CheckHolder(holder) }

// newInstance is a random id told apart from every other open warehouse's:
// the instance of the leases it takes.
func newInstance() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
