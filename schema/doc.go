// Package schema holds what the warehouse is: the numbered SQL migrations
// and the views (embedded; package load applies them) and the documentation of every
// table, view and column (Objects, from docs.json: meaning, unit, example). From
// that one source come the column_docs table (filled by package load, and
// by load/postgres in PostgreSQL's words with COMMENTs: ObjectsIn), the
// schema reference docs/schema.md and datasette/metadata.json (written by
// `go generate ./schema`, checked by tests). It never opens a database and
// holds no logic about the data; a shipped migration must never be edited:
// a change is a new numbered file.
package schema
