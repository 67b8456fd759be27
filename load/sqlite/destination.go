package sqlite

import "github.com/cardsync/cardsync/load"

// PageWriter implements Destination: NewWalkWriter as a PageWriter.
func (w *Warehouse) PageWriter(runID int64, stream string) load.PageWriter {
	return w.NewWalkWriter(runID, stream)
}

var (
	_ load.Destination = (*Warehouse)(nil)
	_ load.PageWriter  = (*WalkWriter)(nil)
	_ load.RunLock     = (*Lock)(nil)
)
