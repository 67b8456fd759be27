package sqlite

import (
	"errors"

	"github.com/cardsync/cardsync/load"
)

// warehouseError makes every error of the package an ErrWarehouse, as
// load/postgres's are, so callers branch on load.ErrWarehouse for both
// warehouses.
type warehouseError struct{ err error }

// Error implements error: "warehouse error: <cause>".
func (e *warehouseError) Error() string { return "warehouse error: " + e.err.Error() }

// Unwrap makes errors.Is find both load.ErrWarehouse and the cause.
func (e *warehouseError) Unwrap() []error { return []error{load.ErrWarehouse, e.err} }

// classify wraps *err with load.ErrWarehouse, once, at the boundary of the
// package; a lock held by another process is its own condition
// (load.ErrLocked) and left alone. Exported functions defer it on their
// named error.
func classify(err *error) {
	if *err == nil || errors.Is(*err, load.ErrWarehouse) || errors.Is(*err, load.ErrLocked) {
		return
	}
	*err = &warehouseError{err: *err}
}
