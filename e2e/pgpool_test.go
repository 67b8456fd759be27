//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/sim"
)

// TestPostgresServeSharesOnePool: one `cardsync serve` syncs eight
// accounts into one PostgreSQL warehouse with [warehouse] max_connections
// 4: its connections (pg_stat_activity, application_name cardsync),
// sampled until every account has a successful run, never exceed 4 (a
// pool per account held up to 4 each), and every account's rows equal
// its simulator's.
func TestPostgresServeSharesOnePool(t *testing.T) {
	const maxConns = 4
	url := pgServer(t).NewDatabase(t)
	db, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	d := newDeployment(t, nil)
	names := []string{"p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"}
	var accounts []account
	for i, n := range names {
		up := newUpstream(t, sim.Options{Seed: int64(300 + i), Cards: 200})
		accounts = append(accounts, account{n, up.URL})
	}
	d.useAccounts(t, accounts...)
	delete(d.env, "CARDSYNC_WAREHOUSE_PATH")
	d.env["CARDSYNC_WAREHOUSE_URL"] = url
	d.env["CARDSYNC_WAREHOUSE_MAX_CONNECTIONS"] = fmt.Sprint(maxConns)
	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1s"
	d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
	serve := d.startBG("serve")

	most := int64(0)
	pollUntil(t, 90*time.Second, "a successful run of every account", func() bool {
		most = max(most, pgInt(t, db, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = 'cardsync'`))
		// Before serve migrated the database, no sync_runs.
		var n int64
		err := db.QueryRow(t.Context(), `SELECT count(DISTINCT account) FROM sync_runs WHERE status = 'succeeded'`).Scan(&n)
		return err == nil && n == int64(len(names))
	}, serve)
	t.Logf("%d accounts held at most %d connections (max_connections %d)", len(names), most, maxConns)
	if most == 0 || most > maxConns {
		t.Errorf("serve of %d accounts held at most %d connections, want 1..%d", len(names), most, maxConns)
	}
	_ = serve.cmd.Process.Signal(syscall.SIGTERM)
	if code := serve.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, lastLines(serve.stderr.String()))
	}
	if n := pgInt(t, db, `SELECT count(*) FROM card_state WHERE removed_at IS NULL`); n != int64(200*len(names)) {
		t.Errorf("%d live cards, want %d", n, 200*len(names))
	}
}
