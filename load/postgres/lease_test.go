package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/jackc/pgx/v5"
)

// expire makes account's lease expire now by the server's clock, as if its
// TTL had passed (no sleep).
func expire(t *testing.T, w *Warehouse, account string) {
	t.Helper()
	if _, err := w.pool.Exec(context.Background(), `UPDATE sync_leases SET expires_at = now() - interval '1 second' WHERE account = $1`, account); err != nil {
		t.Fatal(err)
	}
}

// openReplica opens a second Warehouse of the same account on url, as
// another replica would.
func openReplica(t *testing.T, url string) *Warehouse {
	t.Helper()
	w, err := Open(t.Context(), url, Options{RequireLease: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestLeaseAcquireRenewSteal: a free lease is taken, renewed by its holder
// with the same token, refused to another holder while live, and taken
// over (new token) once expired; Leases lists it.
func TestLeaseAcquireRenewSteal(t *testing.T) {
	a, url, _ := openPG(t, Options{RequireLease: true})
	b := openReplica(t, url)
	ctx := t.Context()
	tok, err := a.AcquireLease(ctx, "default", "replica-a", time.Minute)
	if err != nil || tok != 1 {
		t.Fatalf("first acquire = %d, %v; want token 1", tok, err)
	}
	if tok, err = a.AcquireLease(ctx, "default", "replica-a", time.Minute); err != nil || tok != 1 {
		t.Fatalf("renewal = %d, %v; want token 1", tok, err)
	}
	var held *LeaseHeldError
	if _, err := b.AcquireLease(ctx, "default", "replica-b", time.Minute); !errors.As(err, &held) || held.Holder != "replica-a" || !errors.Is(err, load.ErrWarehouse) {
		t.Fatalf("acquire of a live lease = %v, want LeaseHeldError naming replica-a", err)
	}
	expire(t, a, "default")
	if tok, err = b.AcquireLease(ctx, "default", "replica-b", time.Minute); err != nil || tok != 2 {
		t.Fatalf("take-over after expiry = %d, %v; want token 2", tok, err)
	}
	if _, err := a.AcquireLease(ctx, "default", "replica-a", time.Minute); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("old holder's renewal = %v, want ErrLeaseHeld", err)
	}
	if _, err := a.AcquireLease(ctx, "other", "replica-a", time.Minute); err != nil {
		t.Fatal(err)
	}
	ls, err := a.Leases(ctx)
	if err != nil || len(ls) != 2 || ls[0].Account != "default" || ls[0].Holder != "replica-b" || ls[0].FencingToken != 2 || ls[0].Expired ||
		ls[1].Account != "other" || ls[1].Holder != "replica-a" {
		t.Fatalf("Leases = %+v, %v", ls, err)
	}
	if err := b.ReleaseLease(ctx, "default", "replica-b"); err != nil {
		t.Fatal(err)
	}
	if tok, err = a.AcquireLease(ctx, "default", "replica-a", time.Minute); err != nil || tok != 3 {
		t.Fatalf("acquire after release = %d, %v; want token 3", tok, err)
	}
}

// TestStaleFencingTokenRefused: a replica paused past its lease's expiry,
// whose account another replica took over, has its page commit, run start
// and run finish refused with ErrLeaseLost, and nothing of them is stored;
// the new holder writes.
func TestStaleFencingTokenRefused(t *testing.T) {
	a, url, _ := openPG(t, Options{RequireLease: true})
	b := openReplica(t, url)
	ctx := t.Context()
	if _, err := a.StartRun(ctx, load.TriggerSchedule, "test"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("StartRun without a lease = %v, want ErrLeaseLost", err)
	}
	if _, err := a.AcquireLease(ctx, "default", "replica-a", time.Minute); err != nil {
		t.Fatal(err)
	}
	run := startRun(t, a)
	ww := a.NewWalkWriter(run, "")
	if _, err := ww.Add(ctx, page(1, idRange(1, 15), 1, 45)); err != nil {
		t.Fatal(err)
	}
	if err := ww.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// replica-a pauses; its lease expires and replica-b takes the account.
	expire(t, a, "default")
	if _, err := b.AcquireLease(ctx, "default", "replica-b", time.Minute); err != nil {
		t.Fatal(err)
	}
	before := pgQuery(t, a, `SELECT (SELECT count(*) FROM card_state)::text || '/' || (SELECT next_page FROM sync_checkpoints)::text || '/' || (SELECT pages FROM sync_runs WHERE run_id = $1)::text`, run)
	if _, err := ww.Add(ctx, page(2, idRange(16, 30), 1, 45)); err != nil {
		t.Fatal(err) // buffered: the test clock stands still, CommitDelay never passes
	}
	var lost *LeaseLostError
	if err := ww.Flush(ctx); !errors.As(err, &lost) || lost.Holder != "replica-a" || lost.Token != 1 {
		t.Fatalf("Flush with a stale token = %v, want LeaseLostError for replica-a token 1", err)
	}
	if _, err := a.CommitPage(ctx, run, page(2, idRange(16, 30), 1, 45)); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("CommitPage with a stale token = %v, want ErrLeaseLost", err)
	}
	if err := a.FinishRun(ctx, run, load.RunResult{Status: load.StatusSucceeded}); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("FinishRun with a stale token = %v, want ErrLeaseLost", err)
	}
	if _, err := a.StartRun(ctx, load.TriggerSchedule, "test"); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("StartRun with a stale token = %v, want ErrLeaseLost", err)
	}
	if _, err := a.FinishWalk(ctx, run, "", load.WalkEnd{Consistent: true}); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("FinishWalk with a stale token = %v, want ErrLeaseLost", err)
	}
	after := pgQuery(t, a, `SELECT (SELECT count(*) FROM card_state)::text || '/' || (SELECT next_page FROM sync_checkpoints)::text || '/' || (SELECT pages FROM sync_runs WHERE run_id = $1)::text`, run)
	if joined(after) != joined(before) {
		t.Errorf("refused writes stored something: %s -> %s", joined(before), joined(after))
	}
	// The new holder marks the paused replica's run abandoned and resumes
	// the walk from its checkpoint.
	stale, err := b.AbandonStaleRuns(ctx, 0)
	if err != nil || len(stale) != 1 || stale[0].ID != run {
		t.Fatalf("AbandonStaleRuns = %+v, %v; want run %d", stale, err, run)
	}
	run2 := startRun(t, b)
	cp, err := b.Checkpoint(ctx, "")
	if err != nil || cp.NextPage != 2 {
		t.Fatalf("checkpoint %+v, %v; want next page 2", cp, err)
	}
	if got := commit(t, b, run2, page(2, idRange(16, 30), 1, 45)); got != (counts{New: 15}) {
		t.Errorf("new holder's commit %+v", got)
	}
}

// TestLeaseCheckWaitsForCommitInFlight: a take-over waits for a page commit
// that checked the lease before the lease expired, instead of overlapping
// it (the commit's transaction reads the lease row FOR SHARE), and
// succeeds once that commit ends.
func TestLeaseCheckWaitsForCommitInFlight(t *testing.T) {
	a, url, _ := openPG(t, Options{RequireLease: true})
	b := openReplica(t, url)
	ctx := t.Context()
	const ttl = 300 * time.Millisecond
	if _, err := a.AcquireLease(ctx, "default", "replica-a", ttl); err != nil {
		t.Fatal(err)
	}
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := a.checkLease(ctx, tx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		// Retry while the lease is live; the attempt after expiry blocks
		// on the commit in flight.
		for {
			_, err := b.AcquireLease(ctx, "default", "replica-b", time.Minute)
			if !errors.Is(err, ErrLeaseHeld) {
				done <- err
				return
			}
			select {
			case <-ctx.Done():
				done <- ctx.Err()
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	select {
	case err := <-done:
		t.Fatalf("take-over finished while a fenced transaction was open: %v", err)
	case <-time.After(3 * ttl):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("take-over after the commit: %v", err)
	}
	if ls, err := b.Leases(ctx); err != nil || ls[0].Holder != "replica-b" || ls[0].FencingToken != 2 {
		t.Fatalf("Leases = %+v, %v; want replica-b with token 2", ls, err)
	}
}

// TestIdleInTransaction: half a lease TTL, never above
// DefaultIdleInTransaction, the default TTL when none is set; a set
// IdleInTransaction wins.
func TestIdleInTransaction(t *testing.T) {
	secs := func(n int64) time.Duration { return time.Duration(n) * time.Second }
	for _, tt := range []struct{ ttl, want int64 }{{0, 10}, {60, 10}, {10, 5}} {
		if got := (Options{LeaseTTL: secs(tt.ttl)}).idleInTx(); got != secs(tt.want) {
			t.Errorf("lease TTL %ds: idle in transaction %v, want %ds", tt.ttl, got, tt.want)
		}
	}
	if got := (Options{LeaseTTL: secs(10), IdleInTransaction: secs(2)}).idleInTx(); got != secs(2) {
		t.Errorf("IdleInTransaction 2s: %v, want 2s", got)
	}
}

// TestPausedWriterDoesNotHoldTheLease: a replica paused inside a write
// transaction (SIGSTOP, a VM freeze) holds its lease row FOR SHARE; the
// server ends its idle session after Options.IdleInTransaction, so the
// lease is taken over once expired instead of waiting for the pause to end,
// and the paused transaction writes nothing.
func TestPausedWriterDoesNotHoldTheLease(t *testing.T) {
	// The idle limit applies to a's every transaction: 2 s, not less, or a
	// busy machine that descheduled the test between two statements of
	// AcquireLease's own transaction ends its session too.
	a, url, _ := openPG(t, Options{RequireLease: true, IdleInTransaction: 2 * time.Second})
	b := openReplica(t, url)
	ctx := t.Context()
	const ttl = 2 * time.Second
	if _, err := a.AcquireLease(ctx, "default", "replica-a", ttl); err != nil {
		t.Fatal(err)
	}
	inside, resume := make(chan struct{}), make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		wrote <- a.write(ctx, func(tx pgx.Tx) error {
			close(inside)
			<-resume // paused between two statements of the transaction
			_, err := tx.Exec(ctx, `UPDATE sync_leases SET holder = holder WHERE account = 'default'`)
			return err
		})
	}()
	<-inside
	deadline := time.Now().Add(30 * time.Second)
	actx, cancel := context.WithDeadline(ctx, deadline) // without the bound, AcquireLease waits forever
	defer cancel()
	for {
		_, err := b.AcquireLease(actx, "default", "replica-b", time.Minute)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrLeaseHeld) || time.Now().After(deadline) {
			t.Fatalf("take-over while the holder is paused in a transaction: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(resume)
	if err := <-wrote; err == nil {
		t.Fatal("the paused transaction committed after its session was ended")
	}
	if ls, err := b.Leases(ctx); err != nil || ls[0].Holder != "replica-b" {
		t.Fatalf("Leases = %+v, %v; want replica-b", ls, err)
	}
}

// TestLeaseNeverSharedBySameHolder: two processes given one [cluster]
// holder (a backfill beside a serve, a second serve) never share a lease:
// the second is refused while the first's lease is live, its release
// cannot end the first's lease, and once the lease lapses it takes it
// with a new fencing token, so the first's writes are fenced off.
func TestLeaseNeverSharedBySameHolder(t *testing.T) {
	a, url, _ := openPG(t, Options{RequireLease: true})
	b := openReplica(t, url)
	ctx := t.Context()
	tokA, err := a.AcquireLease(ctx, "default", "db1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var held *LeaseHeldError
	if _, err := b.AcquireLease(ctx, "default", "db1", time.Minute); !errors.As(err, &held) || !held.SameHolder {
		t.Fatalf("the same holder in another process was not refused: %v", err)
	}
	if err := b.ReleaseLease(ctx, "default", "db1"); err != nil {
		t.Fatal(err)
	}
	if tok, err := a.AcquireLease(ctx, "default", "db1", time.Minute); err != nil || tok != tokA {
		t.Fatalf("the other process's release ended the lease: token %d, %v (want %d)", tok, err, tokA)
	}
	expire(t, a, "default")
	tokB, err := b.AcquireLease(ctx, "default", "db1", time.Minute)
	if err != nil || tokB != tokA+1 {
		t.Fatalf("a lapsed lease taken by the same holder in another process: token %d, %v (want %d)", tokB, err, tokA+1)
	}
	if err := a.RenewLease(ctx, "default", "db1", tokA, time.Minute); !errors.Is(err, load.ErrLeaseLost) {
		t.Fatalf("the first process renewed a lease the second took over: %v", err)
	}
}
