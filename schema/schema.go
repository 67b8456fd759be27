package schema

import "embed"

// Migrations holds the numbered migration files NNN_name.sql, applied in
// order by package load, all pending ones in one transaction, each followed
// by its PRAGMA user_version bump. A migration changes tables and moves
// data; it creates no view (Views does). A shipped file is never edited:
// changes come as a new file.
//
//go:embed [0-9][0-9][0-9]_*.sql
var Migrations embed.FS

// Views is views.sql: the CREATE VIEW statement of every view but cards_flat
// (package load generates that one), for the latest schema. Package load
// drops every view before it applies pending migrations and runs Views after
// them, in the same transaction, so a view changes by an edit of this file.
//
//go:embed views.sql
var Views string
