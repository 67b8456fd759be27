package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
)

var _ load.Replicas = (*Warehouse)(nil)

// ReplicaHeartbeat marks holder's process instance live for ttl from now, by the
// server's clock (sync_replicas): it registers the process at its first
// call and renews it after. A live row of holder with another instance is
// refused with a *load.HolderInUseError naming both; a row whose process
// stopped or died (expired) is taken over.
func (w *Warehouse) ReplicaHeartbeat(ctx context.Context, holder, instance string, ttl time.Duration) (err error) {
	defer classify(&err)
	if holder == "" || instance == "" || ttl <= 0 {
		return fmt.Errorf("heartbeat: want a holder, an instance and a positive TTL, got %q, %q and %v", holder, instance, ttl)
	}
	err = pgx.BeginFunc(ctx, w.leasePool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO sync_replicas AS r (holder, instance, started_at, seen_at, expires_at)
			VALUES ($1, $2, now(), now(), now() + $3 * interval '1 microsecond')
			ON CONFLICT (holder) DO UPDATE SET
				started_at = CASE WHEN r.instance = excluded.instance THEN r.started_at ELSE now() END,
				instance = excluded.instance, seen_at = now(), expires_at = excluded.expires_at
			WHERE r.instance = excluded.instance OR r.expires_at <= now()`, holder, instance, ttl.Microseconds())
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		in := &load.HolderInUseError{Holder: holder, Instance: instance}
		o := &in.Other
		if err := tx.QueryRow(ctx, `SELECT holder, instance, started_at, seen_at, expires_at FROM sync_replicas WHERE holder = $1`, holder).
			Scan(&o.Holder, &o.Instance, &o.StartedAt, &o.SeenAt, &o.ExpiresAt); err != nil {
			return err
		}
		return in
	})
	if err != nil {
		return fmt.Errorf("heartbeat of %s: %w", holder, err)
	}
	return nil
}

// LeaveReplicas ends the row of holder's instance now, so the other replicas stop
// counting it at once (a clean stop).
func (w *Warehouse) LeaveReplicas(ctx context.Context, holder, instance string) (err error) {
	defer classify(&err)
	if _, err := w.leasePool.Exec(ctx, `UPDATE sync_replicas SET expires_at = least(expires_at, now())
		WHERE holder = $1 AND instance = $2`, holder, instance); err != nil {
		return fmt.Errorf("leave replicas: %w", err)
	}
	return nil
}

// LiveReplicas lists the replicas whose heartbeat has not expired by the
// server's clock, by holder.
func (w *Warehouse) LiveReplicas(ctx context.Context) (_ []load.Replica, err error) {
	defer classify(&err)
	rows, err := w.pool.Query(ctx, `SELECT holder, instance, started_at, seen_at, expires_at
		FROM sync_replicas WHERE expires_at > now() ORDER BY holder`)
	if err != nil {
		return nil, fmt.Errorf("list replicas: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (load.Replica, error) {
		var p load.Replica
		err := r.Scan(&p.Holder, &p.Instance, &p.StartedAt, &p.SeenAt, &p.ExpiresAt)
		p.StartedAt, p.SeenAt, p.ExpiresAt = utc(p.StartedAt), utc(p.SeenAt), utc(p.ExpiresAt)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list replicas: %w", err)
	}
	return out, nil
}
