package sqlite

import "github.com/cardsync/cardsync/load"

// PageWriter implements Destination: NewWalkWriter as a PageWriter.
func (w *Warehouse) PageWriter(runID int64, stream string) load.PageWriter {
	return w.NewWalkWriter(runID, stream)
}

var (
	_ load.Destination = (*Warehouse)(nil)
	_ load.PageWriter  = (*WalkWriter)(nil)
	// The capabilities only a file has.
	_ load.BackupTaker = (*Warehouse)(nil)
	_ load.LocalFile   = (*Warehouse)(nil)
	_ load.FileChecker = (*Warehouse)(nil)
	_ load.FileStatus  = (*Warehouse)(nil)
	_ load.Optimizer   = (*Warehouse)(nil)
	_ load.Reporter    = (*Warehouse)(nil)
)
