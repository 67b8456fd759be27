//go:build e2e

package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// The PostgreSQL halts and stalls of issue 24, through the binary against
// a real server: a card (or an /account body) jsonb cannot hold, an
// analyst's open transaction on cards_flat, a schema named after the role.

// poisonProxy serves the upstream with, on page 2 of /cards, its first
// card given a value holding a lone surrogate escape, its second a key
// holding a lone low surrogate and its third a number beyond numeric's
// range; once extraField is
// set, every card gets a new top-level field. /account gets both poisons
// too.
type poisonProxy struct {
	URL        string
	extraField atomic.Bool
}

var cardStart = regexp.MustCompile(`\{"id":([0-9]+),`)

func newPoisonProxy(t *testing.T, up *upstream) *poisonProxy {
	t.Helper()
	p := &poisonProxy{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		up.Server.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if rec.Code == http.StatusOK {
			body = p.rewrite(r, body)
		}
		for k, vs := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = vs
			}
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(ts.Close)
	p.URL = ts.URL
	return p
}

func (p *poisonProxy) rewrite(r *http.Request, body []byte) []byte {
	switch r.URL.Path {
	case "/account":
		return []byte(strings.Replace(string(body), `{"data":{`, `{"data":{"note":"\ud800","huge":1e1000000,"hundred":1e2,`, 1))
	case "/cards":
		if p.extraField.Load() {
			body = cardStart.ReplaceAll(body, []byte(`{"id":$1,"added_later":"x",`))
		}
		if r.URL.Query().Get("page") != "2" {
			return body
		}
		n := 0
		return cardStart.ReplaceAllFunc(body, func(m []byte) []byte {
			n++
			switch n {
			case 1:
				return append([]byte(string(m)), `"memo":"\ud800",`...)
			case 2:
				return append([]byte(string(m)), `"\udc00key":1,`...)
			case 3:
				return append([]byte(string(m)), `"big":1e1000000,`...)
			}
			return m
		})
	}
	return body
}

// TestPostgresPoisonQuarantined: cards jsonb cannot hold (a lone surrogate
// escape in a value, one in a key, a number beyond numeric) are quarantined
// one by one (rejected_cards, with the reason and the raw text); their page
// and every later page are stored, the run succeeds, and an /account body
// with the same poisons is kept as text exactly as received instead of
// failing the run before any card. A second run stores nothing new.
func TestPostgresPoisonQuarantined(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 91, Cards: 60})
	proxy := newPoisonProxy(t, up)
	d := newDeploymentTo(t, up, toPostgres)
	d.env["CARDSYNC_API_BASE_URL"] = proxy.URL
	d.backfillOK(t)
	db := openRO(t, d.db)
	if run := lastRun(t, d.db); run.Status != "succeeded" || run.Pages != 4 {
		t.Errorf("run %+v: want succeeded, 4 pages", run)
	}
	if n, all := queryInt(t, db, `SELECT count(*) FROM card_state`), int64(len(up.Cards())); n != all-3 {
		t.Errorf("%d cards stored, want %d (all but the 3 poisoned)", n, all-3)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM run_pages`); n != 4 {
		t.Errorf("%d pages audited, want 4", n)
	}
	rows, err := db.Query(`SELECT page, reason, data FROM rejected_cards ORDER BY rejected_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var page int
		var reason, data string
		if err := rows.Scan(&page, &reason, &data); err != nil {
			t.Fatal(err)
		}
		want := []string{"surrogate", "surrogate", "numeric"}[min(len(got), 2)]
		if page != 2 || !strings.Contains(reason, "PostgreSQL") || !strings.Contains(reason, want) {
			t.Errorf("rejected on page %d: %q; want page 2, a reason naming PostgreSQL and %s", page, reason, want)
		}
		got = append(got, data)
	}
	if len(got) != 3 || !strings.Contains(got[0], `"memo":"\ud800"`) || !strings.Contains(got[1], `"\udc00key":1`) || !strings.Contains(got[2], `"big":1e1000000`) {
		t.Errorf("rejected_cards.data %q: want the three cards' raw text", got)
	}
	var raw string
	if err := db.QueryRow(`SELECT raw FROM account_snapshots`).Scan(&raw); err != nil {
		t.Fatalf("account snapshot: %v", err)
	}
	for _, want := range []string{`"note":"\ud800"`, `"huge":1e1000000`, `"hundred":1e2`} {
		if !strings.Contains(raw, want) {
			t.Errorf("account_snapshots.raw %s lacks %s as received", raw, want)
		}
	}
	d.backfillOK(t)
	if n := queryInt(t, db, `SELECT cards_new + cards_changed FROM sync_runs ORDER BY run_id DESC LIMIT 1`); n != 0 {
		t.Errorf("second run stored %d cards, want 0", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM rejected_cards WHERE times = 2`); n != 3 {
		t.Errorf("%d rejections counted twice, want 3", n)
	}
}

// holdCardsFlat opens an analyst's session on the warehouse that begins a
// transaction and reads cards_flat, and keeps it open until the test ends.
func holdCardsFlat(t *testing.T, dbURL string) {
	t.Helper()
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	rows, err := tx.Query(`SELECT * FROM cards_flat LIMIT 1`)
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
}

// runWithin runs the binary with a deadline: a command that waits on a
// lock for ever is killed and the test fails.
func (d *deployment) runWithin(t *testing.T, limit time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd, stdout, stderr := d.command(ctx, args...)
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v did not answer within %s (waiting on a lock?)\n%s", args, limit, lastLines(stderr.String()))
	}
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return code, stdout.String(), stderr.String()
}

// TestPostgresAnalystHoldsCardsFlat: while an analyst keeps a transaction
// open that has read cards_flat, a run that adds a field succeeds (the
// view is left stale, with a warning naming the analyst's hold); status
// and a serve start answer within 10 s, and serve's run succeeds. Once the
// analyst ends, the next run re-creates cards_flat.
func TestPostgresAnalystHoldsCardsFlat(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 92, Cards: 30})
	proxy := newPoisonProxy(t, up)
	d := newDeploymentTo(t, up, toPostgres)
	d.env["CARDSYNC_API_BASE_URL"] = proxy.URL
	d.backfillOK(t)
	holdCardsFlat(t, d.db)
	proxy.extraField.Store(true)

	code, _, errOut := d.runWithin(t, 10*time.Second, "backfill")
	if code != 0 || !strings.Contains(errOut, "cards_flat not re-created") || !strings.Contains(errOut, "an analyst's open transaction?") {
		t.Errorf("backfill while an analyst holds cards_flat: exit %d, want 0 and a warning naming the hold\n%s", code, lastLines(errOut))
	}
	code, out, errOut := d.runWithin(t, 10*time.Second, "status")
	if code != 0 || !strings.Contains(out, "cards_flat stale") {
		t.Errorf("status: exit %d, want 0 with cards_flat stale\n%s\n%s", code, out, lastLines(errOut))
	}

	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1h"
	serve := d.startBG("serve")
	exited := make(chan error, 1)
	go func() {
		<-serve.done
		exited <- serve.err
	}()
	started := time.Now()
	waitForRuns(t, d, 3, exited)
	if waited := time.Since(started); waited > 10*time.Second {
		t.Errorf("serve's first run finished %s after its start, want within 10s", waited)
	}
	if run := lastRun(t, d.db); run.Status != "succeeded" {
		t.Errorf("serve's run: %+v, want succeeded", run)
	}
	stopDaemon(t, serve)

	// The analyst ends (cleanups run in reverse, so end it by hand).
	pgExec(t, d.db, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> 'cardsync'`)
	d.backfillOK(t)
	db := openRO(t, d.db)
	if n, all := queryInt(t, db, `SELECT count(added_later) FROM cards_flat`), queryInt(t, db, `SELECT count(*) FROM card_state`); n != all || n == 0 {
		t.Errorf("cards_flat.added_later has %d values, want one per card (%d)", n, all)
	}
}

// TestPostgresUserSchemaChangesNothing: after CREATE SCHEMA AUTHORIZATION
// <role> (a schema first in PostgreSQL's default search_path), the next
// backfill still lands in public, and status names the schema. With
// CARDSYNC_WAREHOUSE_SCHEMA set to a schema of its own, a new warehouse
// lives there and public is left as it was.
func TestPostgresUserSchemaChangesNothing(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 93, Cards: 30})
	d := newDeploymentTo(t, up, toPostgres)
	d.backfillOK(t)
	u, err := url.Parse(d.db)
	if err != nil {
		t.Fatal(err)
	}
	role := u.User.Username()
	pgExec(t, d.db, `CREATE SCHEMA AUTHORIZATION "`+role+`"`)
	d.backfillOK(t)
	db := openRO(t, d.db)
	if n := queryInt(t, db, `SELECT count(*) FROM public.sync_runs WHERE status = 'succeeded'`); n != 2 {
		t.Errorf("public.sync_runs has %d succeeded runs, want 2", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM pg_tables WHERE schemaname = $1`, role); n != 0 {
		t.Errorf("the schema %s got %d tables, want none", role, n)
	}
	code, out, errOut := d.run("status", "-json")
	var doc struct {
		Accounts []struct {
			Warehouse struct {
				Schema string `json:"schema"`
			} `json:"warehouse"`
		} `json:"accounts"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Accounts) != 1 || doc.Accounts[0].Warehouse.Schema != "public" {
		t.Errorf("status -json: exit %d, want 0 and warehouse.schema public\n%s\n%s", code, out, lastLines(errOut))
	}
	if _, out, _ := d.run("status"); !strings.Contains(out, "in schema public") {
		t.Errorf("status does not name the schema:\n%s", out)
	}

	pgExec(t, d.db, `CREATE SCHEMA wh2`)
	d.env["CARDSYNC_WAREHOUSE_SCHEMA"] = "wh2"
	d.backfillOK(t)
	if n := queryInt(t, db, `SELECT count(*) FROM wh2.sync_runs`); n != 1 {
		t.Errorf("wh2.sync_runs has %d runs, want 1", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM public.sync_runs`); n != 2 {
		t.Errorf("public.sync_runs has %d runs, want still 2", n)
	}
	if _, out, _ := d.run("status"); !strings.Contains(out, "in schema wh2") {
		t.Errorf("status does not name schema wh2:\n%s", out)
	}
}

// TestPostgresEmptyDefaultSchemaRefused: a database whose warehouse lives
// in another schema is never initialised anew in public when the key is
// unset: backfill and status fail naming both schemas and the key, and
// public stays empty.
func TestPostgresEmptyDefaultSchemaRefused(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 94, Cards: 15})
	d := newDeploymentTo(t, up, toPostgres)
	pgExec(t, d.db, `CREATE SCHEMA wh`)
	d.env["CARDSYNC_WAREHOUSE_SCHEMA"] = "wh"
	d.backfillOK(t)
	delete(d.env, "CARDSYNC_WAREHOUSE_SCHEMA")
	for _, cmd := range []string{"backfill", "status"} {
		code, _, errOut := d.run(cmd)
		if code == 0 || !strings.Contains(errOut, "schema public holds no warehouse") || !strings.Contains(errOut, "schema wh") ||
			!strings.Contains(errOut, "CARDSYNC_WAREHOUSE_SCHEMA") {
			t.Errorf("%s with the key unset: exit %d, want a refusal naming both schemas and the key\n%s", cmd, code, lastLines(errOut))
		}
	}
	if n := queryInt(t, openRO(t, d.db), `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`); n != 0 {
		t.Errorf("public got %d tables, want none", n)
	}
}
