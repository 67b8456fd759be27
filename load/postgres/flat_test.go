package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
)

// logBuffer collects a Warehouse's log lines for a test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// cardsPage is page 1 of a one-page walk holding cards (id, JSON).
func cardsPage(cards ...string) load.Page {
	p := page(1, nil, 1, len(cards)/2)
	for i := 0; i+1 < len(cards); i += 2 {
		p.Cards = append(p.Cards, load.Card{ID: cards[i], Data: []byte(cards[i+1])})
	}
	return p
}

// adminExec runs statements on url's database as the test server's
// superuser.
func adminExec(t *testing.T, url string, stmts ...string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		if _, err := conn.Exec(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestCardsFlatTypeChangeKeepsAnalystView: the finding of issue 22. An
// analyst's view on cards_flat's id and label survives cards whose id and
// label arrive as numbers, then as text: every commit succeeds, nothing is
// stale, the view reads the new values, and a new writer opens.
func TestCardsFlatTypeChangeKeepsAnalystView(t *testing.T) {
	logs := &logBuffer{}
	w, u, _ := openPG(t, Options{Common: load.Options{Logger: logs.logger()}})
	ctx := t.Context()
	run := startRun(t, w)
	commit(t, w, run, cardsPage("1", `{"id":1,"label":10}`, "2", `{"id":2,"label":20}`))
	if _, err := w.pool.Exec(ctx, `CREATE VIEW v AS SELECT card_id, id, label FROM cards_flat`); err != nil {
		t.Fatal(err)
	}
	commit(t, w, run, cardsPage("1", `{"id":1,"label":10}`, "2", `{"id":2,"label":20}`, "x-3", `{"id":"x-3","label":"three"}`))
	commit(t, w, run, cardsPage("1", `{"id":"1","label":[1]}`, "2", `{"id":2.5,"label":{"a":true}}`, "x-3", `{"id":null,"label":false}`))
	if got := joined(pgQuery(t, w, `SELECT card_id || '=' || coalesce(id, 'NULL') || '/' || label FROM v ORDER BY card_id`)); got != `1=1/[1],2=2.5/{"a": true},x-3=NULL/false` {
		t.Errorf("the analyst's view reads %q", got)
	}
	if stale, err := w.CardsFlatStale(ctx); err != nil || stale {
		t.Errorf("CardsFlatStale = %v, %v; want false", stale, err)
	}
	if sum, err := w.Summary(ctx); err != nil || sum.CardsFlatStale {
		t.Errorf("Summary.CardsFlatStale = %v, %v; want false", sum.CardsFlatStale, err)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warnings logged:\n%s", logs)
	}
	again, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatalf("Open with the analyst's view: %v", err)
	}
	again.Close()
}

// TestCardsFlatBlockedIsAWarning: when cards_flat must be dropped (a
// numeric column left by an older binary, a pruned field) and an
// analyst's view on that column blocks the DROP, Open and the run go on:
// a warning in the log, Summary's CardsFlatStale, pages and checkpoints
// committed; once the view is gone the next commit catches up.
func TestCardsFlatBlockedIsAWarning(t *testing.T) {
	logs := &logBuffer{}
	w, u, clk := openPG(t, Options{Common: load.Options{Logger: logs.logger()}})
	ctx := t.Context()
	run := startRun(t, w)
	commit(t, w, run, cardsPage("1", `{"id":1,"label":"a","extra":5}`))
	// An older binary typed a numbers-only field numeric: cards_flat as it
	// left it, with an analyst's view on it.
	adminExec(t, u, `DROP VIEW cards_flat`,
		`CREATE VIEW cards_flat AS SELECT card_id, removed_at, account, (data ->> 'id')::numeric AS id, data ->> 'label' AS label, (data ->> 'extra')::numeric AS extra FROM card_state`,
		`CREATE VIEW v AS SELECT card_id, id, label FROM cards_flat`,
		`CREATE VIEW uses_extra AS SELECT card_id, extra FROM cards_flat`)
	w.Close()

	logs2 := &logBuffer{}
	w2, err := Open(ctx, u, Options{Common: load.Options{Logger: logs2.logger(), Now: clk.Now}})
	if err != nil {
		t.Fatalf("Open with a view blocking cards_flat's re-creation: %v", err)
	}
	defer w2.Close()
	if !strings.Contains(logs2.String(), "level=WARN") || !strings.Contains(logs2.String(), "cards_flat not re-created") {
		t.Errorf("no warning logged:\n%s", logs2)
	}
	if sum, err := w2.Summary(ctx); err != nil || !sum.CardsFlatStale {
		t.Errorf("Summary.CardsFlatStale = %v, %v; want true", sum.CardsFlatStale, err)
	}
	run = startRun(t, w2)
	p := cardsPage("1", `{"id":1,"label":"a"}`, "2", `{"id":"two","label":"b","new_field":1}`)
	commit(t, w2, run, p)
	if _, err := w2.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
		t.Fatalf("FinishWalk: %v", err)
	}
	if err := w2.FinishRun(ctx, run, load.RunResult{Status: load.StatusSucceeded}); err != nil {
		t.Fatalf("FinishRun: %v", err)
	}
	if got := one(t, pgQuery(t, w2, `SELECT count(*) FROM card_state`)); got != "2" {
		t.Errorf("%s cards stored, want 2", got)
	}
	if got := joined(pgQuery(t, w2, `SELECT card_id || '/' || label FROM v ORDER BY card_id`)); got != "1/a,2/b" {
		t.Errorf("the analyst's view reads %q", got)
	}

	// A pruned field whose column a view uses: PruneFields succeeds.
	adminExec(t, u, `DROP VIEW uses_extra`, `DROP VIEW v`)
	commit(t, w2, startRun(t, w2), p)
	if stale, err := w2.CardsFlatStale(ctx); err != nil || stale {
		t.Fatalf("after the blocking views went: CardsFlatStale = %v, %v; want false", stale, err)
	}
	if typ := one(t, pgQuery(t, w2, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'cards_flat'::regclass AND attname = 'id'`)); typ != "text" {
		t.Errorf("cards_flat.id is %s, want text", typ)
	}
	adminExec(t, u, `CREATE VIEW uses_extra AS SELECT card_id, extra FROM cards_flat`)
	clk.Advance(time.Hour)
	commit(t, w2, startRun(t, w2), p) // stamps every field but extra
	n, err := w2.PruneFields(ctx, clk.Now().Add(-30*time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("PruneFields = %d, %v; want 1, nil", n, err)
	}
	if stale, err := w2.CardsFlatStale(ctx); err != nil || !stale {
		t.Errorf("a pruned column kept by a view: CardsFlatStale = %v, %v; want true", stale, err)
	}
	commit(t, w2, startRun(t, w2), p)
	adminExec(t, u, `DROP VIEW uses_extra`)
	commit(t, w2, startRun(t, w2), p)
	if stale, err := w2.CardsFlatStale(ctx); err != nil || stale {
		t.Errorf("after the view went: CardsFlatStale = %v, %v; want false", stale, err)
	}
}

// readOnlyRole creates a login role with USAGE on the schema and SELECT on
// every table and view of u's database, nothing else (CREATE on the
// schema revoked from PUBLIC), and returns its URL.
func readOnlyRole(t *testing.T, u string) string {
	t.Helper()
	role := fmt.Sprintf("analyst_%d", time.Now().UnixNano())
	adminExec(t, u, `CREATE ROLE `+role+` LOGIN PASSWORD 'analyst-pw'`,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT USAGE ON SCHEMA public TO `+role,
		`GRANT SELECT ON ALL TABLES IN SCHEMA public TO `+role)
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	parsed.User = url.User(role)
	return parsed.String()
}

// TestReadOnlyOpen: a role with only USAGE and SELECT opens the warehouse
// read-only and reads its summary (cards_flat stale included) while the
// view lags behind card_fields and column_docs differs from the binary's:
// no DDL, no write (the role could do neither); writes return
// load.ErrReadOnly. An older schema is refused with load.ErrSchemaTooOld
// and left as it is.
func TestReadOnlyOpen(t *testing.T) {
	w, u, _ := openPG(t, Options{})
	ctx := t.Context()
	run := startRun(t, w)
	commit(t, w, run, cardsPage("1", `{"id":1,"label":"a"}`))
	if err := w.FinishRun(ctx, run, load.RunResult{Status: load.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
	// What a writing open would repair: a stale view and column_docs.
	adminExec(t, u, `DROP VIEW cards_flat`, `CREATE VIEW cards_flat AS SELECT card_id, removed_at, account, data ->> 'id' AS id FROM card_state`,
		`DELETE FROM column_docs WHERE ctid = (SELECT min(ctid) FROM column_docs)`)
	before := joined(pgQuery(t, w, `SELECT pg_get_viewdef('cards_flat') || (SELECT count(*) FROM column_docs) || (SELECT max(version) FROM schema_migrations)`))
	ro := readOnlyRole(t, u)

	if _, err := Open(ctx, ro, Options{}); err == nil {
		t.Fatal("a writing Open as the read-only role succeeded")
	}
	r, err := Open(ctx, ro, Options{ReadOnly: true, Password: "analyst-pw"})
	if err != nil {
		t.Fatalf("read-only Open as the read-only role: %v", err)
	}
	defer r.Close()
	sum, err := r.Summary(ctx)
	if err != nil {
		t.Fatalf("Summary: %v", err)
	}
	if sum.Cards != 1 || sum.SchemaVersion != SchemaVersion() || !sum.CardsFlatStale {
		t.Errorf("Summary: %d cards, schema %d, cards_flat stale %v; want 1, %d, true", sum.Cards, sum.SchemaVersion, sum.CardsFlatStale, SchemaVersion())
	}
	if _, err := r.Leases(ctx); err != nil {
		t.Errorf("Leases: %v", err)
	}
	if _, err := r.StartRun(ctx, load.TriggerSchedule, "test"); !errors.Is(err, load.ErrReadOnly) {
		t.Errorf("StartRun on a read-only open: %v, want load.ErrReadOnly", err)
	}
	if after := joined(pgQuery(t, w, `SELECT pg_get_viewdef('cards_flat') || (SELECT count(*) FROM column_docs) || (SELECT max(version) FROM schema_migrations)`)); after != before {
		t.Errorf("a read-only open changed the database:\n%s\n%s", before, after)
	}

	// The database at the previous schema version.
	latest := SchemaVersion()
	adminExec(t, u, fmt.Sprintf(`DELETE FROM schema_migrations WHERE version = %d`, latest))
	_, err = Open(ctx, ro, Options{ReadOnly: true})
	var sv *load.SchemaVersionError
	if !errors.Is(err, load.ErrSchemaTooOld) || !errors.As(err, &sv) || sv.Database != latest-1 || sv.Binary != latest {
		t.Fatalf("read-only Open of an older schema: %v; want a SchemaVersionError %d < %d", err, latest-1, latest)
	}
	if !strings.Contains(err.Error(), "older than this binary") {
		t.Errorf("error %q does not say the schema is older", err)
	}
	if got := one(t, pgQuery(t, w, `SELECT max(version) FROM schema_migrations`)); got != fmt.Sprint(latest-1) {
		t.Errorf("schema version %s after a read-only open, want %d", got, latest-1)
	}
	if _, err := Open(ctx, server.NewDatabase(t), Options{ReadOnly: true}); !errors.Is(err, load.ErrNotMigrated) {
		t.Errorf("read-only Open of an empty database: %v, want load.ErrNotMigrated", err)
	}
}
