// Package boundary makes a dialect's errors load.ErrWarehouse errors at
// its package's boundary, once (Classify, deferred by each exported
// function on its named error), or wraps one error so (WarehouseError). Only load/sqlite and load/postgres
// import it.
package boundary

import (
	"errors"

	"github.com/cardsync/cardsync/load"
)

// warehouseError makes an error of a dialect an ErrWarehouse, so callers
// branch on ErrWarehouse whatever the warehouse.
type warehouseError struct{ err error }

// Error implements error: "warehouse error: <cause>".
func (e *warehouseError) Error() string { return "warehouse error: " + e.err.Error() }

// Unwrap makes errors.Is find both ErrWarehouse and the cause.
func (e *warehouseError) Unwrap() []error { return []error{load.ErrWarehouse, e.err} }

// WarehouseError wraps err with ErrWarehouse ("warehouse error: …").
func WarehouseError(err error) error { return &warehouseError{err: err} }

// Classify wraps *err with ErrWarehouse, once, at the boundary of a
// dialect's package: exported functions defer it on their named error. An
// error that is one of keep (SQLite: ErrLocked, a lock another process
// holds, its own condition) is left alone.
func Classify(err *error, keep ...error) {
	if *err == nil || errors.Is(*err, load.ErrWarehouse) {
		return
	}
	for _, k := range keep {
		if errors.Is(*err, k) {
			return
		}
	}
	*err = &warehouseError{err: *err}
}
