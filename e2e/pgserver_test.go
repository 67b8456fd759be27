package e2e

import (
	"testing"

	"github.com/cardsync/cardsync/load/postgres/pgtest"
)

// pg is the PostgreSQL server of the package's tests, started by the first
// test that needs one and stopped by TestMain.
var pg pgtest.Lazy

// pgServer returns the PostgreSQL server, starting it on first use; the
// test skips without one (fails with CARDSYNC_REQUIRE_TOOLS set).
func pgServer(t *testing.T) *pgtest.Server {
	t.Helper()
	return pg.Get(t)
}
