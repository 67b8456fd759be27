// Package contract holds the tests every warehouse dialect passes: each
// runs the same pages and walks against the SQLite warehouse (load/sqlite)
// and the PostgreSQL one (load/postgres, on a throwaway server from
// load/postgres/pgtest) and compares what they store, so a rule of package
// load is proved once for both. It has no code of its own.
package contract
