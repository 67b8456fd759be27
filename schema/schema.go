package schema

import "embed"

// Migrations holds the numbered migration files NNN_name.sql, applied in
// order by package load, each in its own transaction together with the
// PRAGMA user_version bump. A shipped file is never edited: changes come as a
// new file.
//
//go:embed [0-9][0-9][0-9]_*.sql
var Migrations embed.FS
