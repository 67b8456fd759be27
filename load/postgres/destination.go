package postgres

import (
	"context"

	"github.com/cardsync/cardsync/load"
)

// PageWriter implements load.Destination: NewWalkWriter as a
// load.PageWriter.
func (w *Warehouse) PageWriter(runID int64, stream string) load.PageWriter {
	return w.NewWalkWriter(runID, stream)
}

// Verify implements load.Destination: a server's check before a run is
// Writable; there is no file to follow (load.FileOK).
func (w *Warehouse) Verify(ctx context.Context) (load.FileEvent, string, error) {
	return load.FileOK, "", w.Writable(ctx)
}

// Optimize implements load.Destination: it does nothing, PostgreSQL's
// autovacuum tidying the tables on its own.
func (w *Warehouse) Optimize(context.Context) error { return nil }

// File implements load.Destination: a server keeps no file on this
// machine (""), so results it refused to record stay in memory.
func (w *Warehouse) File() string { return "" }

// WriterFacts implements load.Reader: the warehouse is shared, and every
// account's lease says who syncs it.
func (w *Warehouse) WriterFacts(ctx context.Context, _ bool) (load.WriterFacts, error) {
	leases, err := w.Leases(ctx)
	if err != nil {
		return load.WriterFacts{}, err
	}
	return load.WriterFacts{Shared: true, Leases: leases}, nil
}

var (
	_ load.Destination = (*Warehouse)(nil)
	_ load.PageWriter  = (*WalkWriter)(nil)
	// What a shared server adds: leases and replicas.
	_ load.Cluster = (*Warehouse)(nil)
)
