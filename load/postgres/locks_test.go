package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
)

// analyst opens a session on url that begins a transaction and runs stmt
// in it, and keeps it open until the test ends (or end is called).
func analyst(t *testing.T, url, stmt string) (end func()) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	done := false
	end = func() {
		if !done {
			done = true
			// ROLLBACK releases the transaction's locks before it
			// returns; a bare Close ends the session while the server
			// may still hold them for a moment.
			if _, err := conn.Exec(context.Background(), "ROLLBACK"); err != nil {
				t.Errorf("analyst ROLLBACK: %v", err)
			}
			conn.Close(context.Background())
		}
	}
	t.Cleanup(end)
	return end
}

// TestAnalystHoldingCardsFlat: while an analyst's open transaction has
// read cards_flat, a commit that adds a field stores its page and leaves
// the view stale with a warning naming the analyst's hold (no ACCESS
// EXCLUSIVE lock asked for, so other readers of the view never queue); a
// read-only open reads the summary, and a writing open starts. Once the
// analyst ends, the next commit re-creates the view.
func TestAnalystHoldingCardsFlat(t *testing.T) {
	logs := &logBuffer{}
	w, u, clk := openPG(t, Options{Common: load.Options{Logger: logs.logger()}})
	ctx := t.Context()
	commit(t, w, startRun(t, w), cardsPage("1", `{"id":1,"label":"a"}`))
	end := analyst(t, u, `SELECT * FROM cards_flat LIMIT 1`)

	p := cardsPage("1", `{"id":1,"label":"a"}`, "2", `{"id":2,"label":"b","added":true}`)
	if got := commit(t, w, startRun(t, w), p); got.New != 1 {
		t.Fatalf("commit while an analyst holds cards_flat: %+v", got)
	}
	if !strings.Contains(logs.String(), "cards_flat not re-created") || !strings.Contains(logs.String(), "held by another session (an analyst's open transaction?)") {
		t.Errorf("no warning naming the analyst's hold:\n%s", logs)
	}
	if stale, err := w.CardsFlatStale(ctx); err != nil || !stale {
		t.Errorf("CardsFlatStale = %v, %v; want true", stale, err)
	}
	ro, err := Open(ctx, u, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open: %v", err)
	}
	defer ro.Close()
	if sum, err := ro.Summary(ctx); err != nil || !sum.CardsFlatStale {
		t.Errorf("read-only Summary: stale %v, %v", sum.CardsFlatStale, err)
	}
	w2, err := Open(ctx, u, Options{Common: load.Options{Now: clk.Now}})
	if err != nil {
		t.Fatalf("writing Open while an analyst holds cards_flat: %v", err)
	}
	w2.Close()

	end()
	commit(t, w, startRun(t, w), cardsPage("3", `{"id":3}`))
	if stale, err := w.CardsFlatStale(ctx); err != nil || stale {
		t.Errorf("after the analyst ended: CardsFlatStale = %v, %v; want false", stale, err)
	}
	if got := one(t, pgQuery(t, w, `SELECT count(added) FROM cards_flat`)); got != "1" {
		t.Errorf("cards_flat.added holds %s values, want 1", got)
	}
}

// TestLockTimeoutSaysWhat: a table held by another session makes a read
// give up after LockTimeout with an error saying what it waited for,
// instead of waiting for ever.
func TestLockTimeoutSaysWhat(t *testing.T) {
	w, u, _ := openPG(t, Options{})
	analyst(t, u, `LOCK TABLE sync_runs IN ACCESS EXCLUSIVE MODE`)
	_, err := w.Summary(t.Context())
	var lt *LockTimeoutError
	if !errors.As(err, &lt) || !errors.Is(err, load.ErrWarehouse) || !strings.Contains(err.Error(), "held or awaited by another session") {
		t.Errorf("Summary while sync_runs is locked: %v; want a *LockTimeoutError saying what it waited for", err)
	}
}

// TestCardsFlatNotOwner: a role that may write every table but does not
// own cards_flat opens, commits a page with a new field and is told, once
// as a warning, who owns the view; the page is stored.
func TestCardsFlatNotOwner(t *testing.T) {
	w, u, clk := openPG(t, Options{})
	commit(t, w, startRun(t, w), cardsPage("1", `{"id":1}`))
	ro := readOnlyRole(t, u)
	role := strings.Split(strings.TrimPrefix(ro, "postgres://"), "@")[0]
	adminExec(t, u, `GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO `+role)
	logs := &logBuffer{}
	rw, err := Open(t.Context(), ro, Options{Password: "analyst-pw", Common: load.Options{Logger: logs.logger(), Now: clk.Now}})
	if err != nil {
		t.Fatalf("Open as a role that does not own cards_flat: %v", err)
	}
	defer rw.Close()
	if got := commit(t, rw, startRun(t, rw), cardsPage("2", `{"id":2,"added":1}`)); got.New != 1 {
		t.Fatalf("commit: %+v", got)
	}
	if s := logs.String(); strings.Contains(s, "must be owner") || !strings.Contains(s, "cards_flat is owned by role") {
		t.Errorf("want a warning naming cards_flat's owner, not a refusal:\n%s", s)
	}
}

// TestMigrationLockTimeout: a migration whose table an analyst's open
// transaction holds fails the open after LockTimeout, naming the
// migration, instead of waiting for ever (and queueing every reader of
// the table behind it); once the analyst ends, the next open applies it.
func TestMigrationLockTimeout(t *testing.T) {
	_, u, clk := openPG(t, Options{})
	adminExec(t, u, `DELETE FROM schema_migrations WHERE version = 9`)
	end := analyst(t, u, `SELECT * FROM account_snapshots LIMIT 1`)
	_, err := Open(t.Context(), u, Options{Common: load.Options{Now: clk.Now}})
	var lt *LockTimeoutError
	if !errors.As(err, &lt) || !strings.Contains(err.Error(), "009_raw_text.sql") || !strings.Contains(err.Error(), "an analyst's open transaction?") {
		t.Fatalf("Open while an analyst holds account_snapshots: %v; want a *LockTimeoutError naming the migration", err)
	}
	end()
	w, err := Open(t.Context(), u, Options{Common: load.Options{Now: clk.Now}})
	if err != nil {
		t.Fatalf("Open once the analyst ended: %v", err)
	}
	w.Close()
}

// TestEveryTransactionIdleBounded: every connection of the pool bounds an
// idle transaction (idle_in_transaction_session_timeout), not only the
// write transactions: a replica paused inside the re-creation of
// cards_flat held its advisory lock and stalled another replica's open
// for as long as it was paused (found by an e2e test of a paused replica).
func TestEveryTransactionIdleBounded(t *testing.T) {
	w, _, _ := openPG(t, Options{IdleInTransaction: 1500 * time.Millisecond})
	var got string
	if err := w.pool.QueryRow(t.Context(), `SHOW idle_in_transaction_session_timeout`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "1500ms" {
		t.Errorf("idle_in_transaction_session_timeout = %s, want 1500ms", got)
	}
}
