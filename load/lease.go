package load

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrLeaseLost is wrapped by *LeaseLostError: the write was refused, and
// nothing of it stored, because the warehouse no longer holds its
// account's lease (it expired by the server's clock, or another replica
// took it over). Callers stop the walk and try AcquireLease again later.
var ErrLeaseLost = errors.New("lease lost")

// LeaseLostError says which lease a refused write was fenced by.
type LeaseLostError struct {
	Account string
	Holder  string
	// Token is the fencing token the write carried (0: no lease taken).
	Token int64
}

// Error implements error.
func (e *LeaseLostError) Error() string {
	if e.Token == 0 {
		return fmt.Sprintf("lease lost: account %s: no lease taken (AcquireLease first)", e.Account)
	}
	return fmt.Sprintf("lease lost: account %s is no longer held by %s with fencing token %d", e.Account, e.Holder, e.Token)
}

// Unwrap makes errors.Is(err, ErrLeaseLost) true.
func (e *LeaseLostError) Unwrap() error { return ErrLeaseLost }

// ErrLeaseHeld is wrapped by *LeaseHeldError: AcquireLease found the
// account's lease held by another holder and not expired.
var ErrLeaseHeld = errors.New("lease held by another replica")

// LeaseHeldError names the holder of a lease AcquireLease could not take.
type LeaseHeldError struct {
	Account   string
	Holder    string
	ExpiresAt time.Time
	// SameHolder: the lease names the holder that asked for it, taken by
	// another process (two processes given one [cluster] holder).
	SameHolder bool
}

// Error implements error.
func (e *LeaseHeldError) Error() string {
	if e.SameHolder {
		return fmt.Sprintf("account %s: lease held by another process with this same holder %s until %s (a lease is never shared between processes)",
			e.Account, e.Holder, e.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("account %s: lease held by %s until %s", e.Account, e.Holder, e.ExpiresAt.UTC().Format(time.RFC3339))
}

// Unwrap makes errors.Is(err, ErrLeaseHeld) true.
func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// DefaultLeaseTTL is how long a lease lasts without renewal ([cluster]
// lease_ttl): a dead replica's accounts move to another within it.
const DefaultLeaseTTL = 60 * time.Second

// MinLeaseTTL is the shortest lease_ttl accepted: a replica renews every
// TTL/3 and stops a quarter of the TTL early, and both need room for a
// round trip to the server.
const MinLeaseTTL = 2 * time.Second

// CheckLeaseTTL is the rule of [cluster] lease_ttl.
func CheckLeaseTTL(ttl time.Duration) error {
	if ttl < MinLeaseTTL {
		return fmt.Errorf("%s is shorter than %s: a replica renews its leases every third of it", ttl, MinLeaseTTL)
	}
	return nil
}

// CheckHolder is the rule of a lease holder's name ([cluster] holder).
func CheckHolder(holder string) error {
	if holder == "" || len(holder) > 200 {
		return fmt.Errorf("%q: want 1 to 200 bytes", holder)
	}
	for _, r := range holder {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%q: control characters are not allowed", holder)
		}
	}
	return nil
}

// Leaser is the part of a Cluster the worker's lease lock
// (worker.LeaseLock) uses: an account's lease with a fencing token, taken,
// renewed and released.
type Leaser interface {
	// AcquireLease takes account's lease for holder for ttl, or renews the
	// one holder still has; a live lease of another holder is refused with
	// a *LeaseHeldError. It returns the fencing token.
	AcquireLease(ctx context.Context, account, holder string, ttl time.Duration) (int64, error)
	// RenewLease extends the lease holder took with token; a lapsed or
	// lost lease is refused with a *LeaseLostError, never taken back.
	RenewLease(ctx context.Context, account, holder string, token int64, ttl time.Duration) error
	// ReleaseLease ends holder's lease of account now.
	ReleaseLease(ctx context.Context, account, holder string) error
	// Account is the account the warehouse is scoped to.
	Account() string
}

// Lease is an account's lease: one row of sync_leases (PostgreSQL).
type Lease struct {
	Account      string    `json:"account"`
	Holder       string    `json:"holder"`
	FencingToken int64     `json:"fencing_token"`
	ExpiresAt    time.Time `json:"expires_at"`
	AcquiredAt   time.Time `json:"acquired_at"` // when Holder took it over
	RenewedAt    time.Time `json:"renewed_at"`
	// Expired: expires_at has passed by the server's clock.
	Expired bool `json:"expired"`
}

// Released reports whether the lease ended by its holder's release (a
// clean stop, a hand-over) rather than lapsing: a release sets renewed_at
// to expires_at.
func (l Lease) Released() bool { return l.RenewedAt.Equal(l.ExpiresAt) }

// LeaseLister is the part of a Cluster that lists every account's lease
// (the daemon's replicas; status and check read them as WriterFacts).
type LeaseLister interface {
	Leases(ctx context.Context) ([]Lease, error)
}

// Replica is one serve process sharing a warehouse: a row of
// sync_replicas (PostgreSQL).
type Replica struct {
	Holder    string    `json:"holder"`
	Instance  string    `json:"instance"`
	StartedAt time.Time `json:"started_at"`
	SeenAt    time.Time `json:"seen_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// HolderInUseError is the refusal of a process whose [cluster] holder a
// live process of another instance already has: two processes with one
// holder would share each other's leases. It wraps ErrLocked (exit 4).
type HolderInUseError struct {
	// Holder is the holder both processes were given.
	Holder string
	// Instance is the refused process's instance id.
	Instance string
	// Other is the live process that has the holder.
	Other Replica
}

// Error implements error.
func (e *HolderInUseError) Error() string {
	return fmt.Sprintf("[cluster] holder %q is in use by another live process (instance %s, started %s, last seen %s); this process is instance %s: give each replica its own holder, or leave it unset (the host name and a random instance id)",
		e.Holder, e.Other.Instance, e.Other.StartedAt.UTC().Format(time.RFC3339), e.Other.SeenAt.UTC().Format(time.RFC3339), e.Instance)
}

// Unwrap makes errors.Is(err, ErrLocked) true: the same exit code as a
// warehouse another process holds.
func (e *HolderInUseError) Unwrap() error { return ErrLocked }

// Replicas is the part of a Cluster that keeps a heartbeat per holder,
// so each serve process knows how many live replicas split the accounts,
// and no two live processes have one holder.
type Replicas interface {
	// ReplicaHeartbeat marks holder's process instance live for ttl from now (the
	// server's clock): the first call registers it, later ones renew it. A
	// live row of holder with another instance is refused with a
	// *HolderInUseError.
	ReplicaHeartbeat(ctx context.Context, holder, instance string, ttl time.Duration) error
	// LeaveReplicas ends holder's row of instance now (a clean stop).
	LeaveReplicas(ctx context.Context, holder, instance string) error
	// LiveReplicas lists the live replicas, by holder.
	LiveReplicas(ctx context.Context) ([]Replica, error)
}
