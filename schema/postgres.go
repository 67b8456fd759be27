package schema

import "embed"

// Postgres holds the PostgreSQL warehouse's numbered migrations,
// postgres/NNN_name.sql, applied in order by package load/postgres, each in
// its own transaction together with its row in schema_migrations. The
// public names are those of Migrations at its latest version; a shipped
// file is never edited: changes come as a new file.
//
//go:embed postgres/[0-9][0-9][0-9]_*.sql
var Postgres embed.FS
