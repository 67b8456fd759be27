package sqlite

import (
	"github.com/cardsync/cardsync/load"
)

// classify wraps *err with load.ErrWarehouse, once, at the boundary of the
// package (load.Classify); a lock held by another process is its own
// condition (load.ErrLocked) and left alone. Exported functions defer it on
// their named error.
func classify(err *error) { load.Classify(err, load.ErrLocked) }
