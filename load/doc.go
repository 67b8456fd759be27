// Package load is the only package that opens the SQLite warehouse: it
// migrates the schema, upserts cards and versions, stores account snapshots,
// run history and page checkpoints. It never speaks HTTP and never imports
// package extract.
package load
