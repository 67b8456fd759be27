package metrics

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load/postgres/pgtest"
)

// pg is the PostgreSQL server of this package's tests, started by the
// first test that needs one (pgServer) and stopped by TestMain.
var pg struct {
	once sync.Once
	srv  *pgtest.Server
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg.srv != nil {
		if err := pg.srv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		}
	}
	os.Exit(code)
}

// pgServer returns the PostgreSQL server, starting it on first use; the
// test skips without one (fails with pgtest.EnvRequire set).
func pgServer(t *testing.T) *pgtest.Server { return pgServerTB(t) }

// pgServerTB is pgServer for a test or a benchmark.
func pgServerTB(t testing.TB) *pgtest.Server {
	t.Helper()
	pg.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		pg.srv, pg.err = pgtest.Start(ctx)
	})
	if pg.err != nil {
		if errors.Is(pg.err, pgtest.ErrNoServer) && os.Getenv(pgtest.EnvRequire) == "" {
			t.Skip(pg.err)
		}
		t.Fatal(pg.err)
	}
	return pg.srv
}
