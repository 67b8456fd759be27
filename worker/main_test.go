package worker

import (
	"os"
	"testing"

	"github.com/cardsync/cardsync/load/postgres/pgtest"
)

// pg is the PostgreSQL server of this package's tests, started by the
// first test that needs one (pgServer) and stopped by TestMain.
var pg pgtest.Lazy

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}

// pgServer returns the PostgreSQL server, starting it on first use; the
// test skips without one (fails with pgtest.EnvRequire set).
func pgServer(t *testing.T) *pgtest.Server {
	t.Helper()
	return pg.Get(t)
}
