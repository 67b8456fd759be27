package postgres

import (
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/boundary"
)

// classify wraps *err with load.ErrWarehouse, once (boundary.Classify), a
// lock timeout not named yet as a *LockTimeoutError saying so (waitedFor);
// exported functions defer it on their named error.
func classify(err *error) {
	*err = waitedFor(*err, genericLockWait, LockTimeout)
	boundary.Classify(err)
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
