// Package schema holds what the warehouse is: the numbered SQL migrations
// and the views (embedded; package load applies them) and the documentation of every
// table, view and column (Objects, from docs.json: meaning, unit, example). From
// that one source come the column_docs table (filled by package load, and
// by load/postgres in PostgreSQL's words with COMMENTs: ObjectsIn), the
// schema reference docs/schema.md and datasette/metadata.json (written by
// `go generate ./schema`, checked by tests). It never opens a database and
// holds no logic about the data; a shipped migration must never be edited:
// a change is a new numbered file.
//
// views.sql is the one home of every view's current definition, made again
// after every migration; Postgres holds the PostgreSQL migrations.
// dialect.go says storage forms such as {time} in each dialect's words, and
// DatasetteFor builds a warehouse's Datasette metadata from what it says of
// itself (its column_docs and card_fields, read by a dialect's
// load.DocsReader).
package schema
