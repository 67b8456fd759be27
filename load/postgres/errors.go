package postgres

import (
	"errors"

	"github.com/cardsync/cardsync/load"
)

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

// The lease errors are package load's (the worker reads them without
// knowing the dialect); these names keep this package's spelling.
var (
	// ErrLeaseLost is load.ErrLeaseLost.
	ErrLeaseLost = load.ErrLeaseLost
	// ErrLeaseHeld is load.ErrLeaseHeld.
	ErrLeaseHeld = load.ErrLeaseHeld
)

// LeaseLostError is load.LeaseLostError.
type LeaseLostError = load.LeaseLostError

// LeaseHeldError is load.LeaseHeldError.
type LeaseHeldError = load.LeaseHeldError
