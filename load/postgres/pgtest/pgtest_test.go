package pgtest

import (
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

var server *Server

func TestMain(m *testing.M) { os.Exit(Main(m, func(s *Server) { server = s })) }

// TestNewDatabase: each call gives an empty database of its own that
// accepts connections.
func TestNewDatabase(t *testing.T) {
	Need(t, server)
	a, b := server.NewDatabase(t), server.NewDatabase(t)
	if a == b {
		t.Fatalf("two databases share the URL %s", a)
	}
	for _, u := range []string{a, b} {
		conn, err := pgx.Connect(t.Context(), u)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d tables, %v; want an empty database", u, n, err)
		}
		conn.Close(t.Context())
	}
}
