package postgres

import "github.com/cardsync/cardsync/load"

// PageWriter implements load.Destination: NewWalkWriter as a
// load.PageWriter.
func (w *Warehouse) PageWriter(runID int64, stream string) load.PageWriter {
	return w.NewWalkWriter(runID, stream)
}

var (
	_ load.Destination = (*Warehouse)(nil)
	_ load.PageWriter  = (*WalkWriter)(nil)
	// The capabilities only a shared server has, and the report.
	_ load.Leaser      = (*Warehouse)(nil)
	_ load.LeaseLister = (*Warehouse)(nil)
	_ load.Reporter    = (*Warehouse)(nil)
)
