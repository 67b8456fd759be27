// Package pgrules holds the PostgreSQL warehouse's rules that the
// configuration checks before anything is opened: the schema name a
// database may have and the connections a shared pool keeps for leases.
// It imports no driver, so config (and whatever imports config) stays
// free of pgx; load/postgres uses the same values.
package pgrules

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// LeaseConns is the size of a shared pool's lease pool: the connections
// kept for lease renewals and releases and replica heartbeats (one short
// statement each), so they never wait for a connection behind the
// accounts' write transactions (a renewal that waited most of a lease TTL
// would lose the lease).
const LeaseConns = 2

// MinSharedConns is the least a shared pool accepts as its bound:
// LeaseConns plus one connection to write with.
const MinSharedConns = LeaseConns + 1

// CheckSchemaName refuses a schema name PostgreSQL cannot have: empty,
// longer than 63 bytes, not UTF-8 or holding NUL.
func CheckSchemaName(name string) error {
	if name == "" || len(name) > 63 || !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("schema name %q: want 1 to 63 bytes of UTF-8 text", name)
	}
	return nil
}
