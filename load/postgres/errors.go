package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/cardsync/cardsync/load"
)

// ErrLeaseLost is wrapped by *LeaseLostError: the write was refused, and
// nothing of it stored, because this Warehouse no longer holds its
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
}

// Error implements error.
func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("account %s: lease held by %s until %s", e.Account, e.Holder, e.ExpiresAt.UTC().Format(time.RFC3339))
}

// Unwrap makes errors.Is(err, ErrLeaseHeld) true.
func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// warehouseError makes every error of the package an ErrWarehouse, as
// package load's are, so callers branch on load.ErrWarehouse for both
// destinations.
type warehouseError struct{ err error }

// Error implements error: "warehouse error: <cause>".
func (e *warehouseError) Error() string { return "warehouse error: " + e.err.Error() }

// Unwrap makes errors.Is find both load.ErrWarehouse and the cause.
func (e *warehouseError) Unwrap() []error { return []error{load.ErrWarehouse, e.err} }

// classify wraps *err with load.ErrWarehouse, once; exported functions
// defer it on their named error.
func classify(err *error) {
	if *err == nil || errors.Is(*err, load.ErrWarehouse) {
		return
	}
	*err = &warehouseError{err: *err}
}
