package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres/pgtest"
	"github.com/cardsync/cardsync/sim"
)

// cardsyncConns counts the server connections of cardsync (application
// name) on url's database, seen from a connection of another name.
func cardsyncConns(t *testing.T, conn *pgx.Conn) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'cardsync'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSharedPoolBoundsConnections: N accounts opened on one database with
// one Pools write at the same time (leases taken and renewed, replica
// heartbeats, runs, commits) and never hold more than its MaxConns server
// connections together; each account's data stays its own, and the pool
// outlives every Warehouse but the last.
func TestSharedPoolBoundsConnections(t *testing.T) {
	pgtest.Need(t, server)
	const accounts, maxConns = 12, 5
	url := server.NewDatabase(t)
	ctx := t.Context()
	pools := NewPools(maxConns)
	clk := sim.NewClock()
	whs := make([]*Warehouse, accounts)
	for i := range whs {
		w, err := Open(ctx, url, Options{Common: load.Options{Account: fmt.Sprintf("acct%02d", i), Now: clk.Now}, RequireLease: true, Pools: pools})
		if err != nil {
			t.Fatalf("Open account %d: %v", i, err)
		}
		whs[i] = w
	}
	watch, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(context.Background())

	var wg sync.WaitGroup
	errs := make(chan error, accounts)
	for i, w := range whs {
		wg.Go(func() { errs <- syncAccount(ctx, w, i) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	most := 0
	for watching := true; watching; {
		select {
		case <-done:
			watching = false
		default:
		}
		most = max(most, cardsyncConns(t, watch))
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d accounts held at most %d connections", accounts, most)
	if most == 0 {
		t.Error("pg_stat_activity showed no cardsync connection")
	}
	if most > maxConns {
		t.Errorf("%d accounts held %d connections at once, want at most %d", accounts, most, maxConns)
	}
	if got := one(t, pgQuery(t, whs[0], `SELECT count(DISTINCT account)::text || '/' || count(*)::text FROM card_state`)); got != fmt.Sprintf("%d/%d", accounts, accounts*15) {
		t.Errorf("card_state accounts/cards = %s, want %d/%d", got, accounts, accounts*15)
	}
	for _, w := range whs[1:] {
		w.Close()
	}
	if _, err := whs[0].Summary(ctx); err != nil {
		t.Errorf("the last Warehouse open lost its pool: %v", err)
	}
	whs[0].Close()
	if len(pools.open) != 0 {
		t.Errorf("the last Close left %d pools open", len(pools.open))
	}
}

// syncAccount is one account's run on w: its lease taken and renewed, a
// replica heartbeat, a run with one page of 15 cards.
func syncAccount(ctx context.Context, w *Warehouse, i int) error {
	holder := "replica-" + w.Account()
	token, err := w.AcquireLease(ctx, w.Account(), holder, time.Minute)
	if err != nil {
		return err
	}
	if err := w.ReplicaHeartbeat(ctx, holder, "i1", time.Minute); err != nil {
		return err
	}
	run, err := w.StartRun(ctx, load.TriggerSchedule, "test")
	if err != nil {
		return err
	}
	if err := w.RenewLease(ctx, w.Account(), holder, token, time.Minute); err != nil {
		return err
	}
	if _, err := w.CommitPage(ctx, run, page(1, idRange(i*100, i*100+14), 1, 15)); err != nil {
		return err
	}
	return w.FinishRun(ctx, run, load.RunResult{Status: load.StatusSucceeded})
}
