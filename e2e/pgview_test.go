//go:build e2e

package e2e

import (
	"database/sql"
	"fmt"
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

// pgExec runs statements on the deployment's PostgreSQL database as the
// test server's superuser.
func pgExec(t *testing.T, dbURL string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// stringIDProxy serves the upstream, and once textIDs is set, every card
// of a page with its numeric id sent as a JSON string ({"id":"5", …}): the
// same card, whose id arrives as text.
type stringIDProxy struct {
	URL     string
	textIDs atomic.Bool
}

var numericID = regexp.MustCompile(`\{"id":([0-9]+),`)

func newStringIDProxy(t *testing.T, up *upstream) *stringIDProxy {
	t.Helper()
	p := &stringIDProxy{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && tok != "" {
			up.mu.Lock()
			up.tokens[tok] = true
			up.mu.Unlock()
		}
		rec := httptest.NewRecorder()
		up.Server.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if r.URL.Path == "/cards" && rec.Code == http.StatusOK && p.textIDs.Load() {
			body = numericID.ReplaceAll(body, []byte(`{"id":"$1",`))
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

// TestPostgresAnalystViewServe: the finding of issue 22 through the
// binary. An analyst's view on cards_flat (CREATE VIEW v AS SELECT
// card_id, id, label FROM cards_flat) made while ids arrive as numbers
// stays usable when they arrive as text: serve runs, is restarted and runs
// again (no exit 6 at start), and the view reads the new ids. Then status,
// run by a real read-only role (LOGIN, USAGE on the schema, SELECT on the
// tables), exits 0 and changes nothing in the database.
func TestPostgresAnalystViewServe(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 73, Cards: 30})
	proxy := newStringIDProxy(t, up)
	d := newDeploymentTo(t, up, toPostgres)
	d.env["CARDSYNC_API_BASE_URL"] = proxy.URL
	d.backfillOK(t)
	pgExec(t, d.db, `CREATE VIEW v AS SELECT card_id, id, label FROM cards_flat`)
	proxy.textIDs.Store(true)

	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1h"
	for i, runs := range []int64{2, 3} {
		serve := d.startBG("serve")
		exited := make(chan error, 1)
		go func() {
			<-serve.done
			exited <- serve.err
		}()
		waitForRuns(t, d, runs, exited)
		if run := lastRun(t, d.db); run.Status != "succeeded" {
			t.Errorf("serve %d's run: %+v, want succeeded", i+1, run)
		}
		if serve.exited() {
			t.Fatalf("serve %d exited: %v\n%s", i+1, serve.err, lastLines(serve.stderr.String()))
		}
		stopDaemon(t, serve)
		if strings.Contains(serve.stderr.String(), "cards_flat not re-created") {
			t.Errorf("serve %d could not re-create cards_flat:\n%s", i+1, lastLines(serve.stderr.String()))
		}
	}
	db := openRO(t, d.db)
	if n := queryInt(t, db, `SELECT count(*) FROM v WHERE id = card_id`); n != 30 {
		t.Errorf("the analyst's view reads %d ids equal to the card's, want 30", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM card_state WHERE jsonb_typeof(data -> 'id') = 'string'`); n != 30 {
		t.Fatalf("%d cards stored with a text id, want 30: the test proves nothing", n)
	}

	role := fmt.Sprintf("analyst_%d", time.Now().UnixNano())
	pgExec(t, d.db, `CREATE ROLE `+role+` LOGIN PASSWORD 'analyst-pw'`,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT USAGE ON SCHEMA public TO `+role,
		`GRANT SELECT ON ALL TABLES IN SCHEMA public TO `+role)
	u, err := url.Parse(d.db)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	d.env["CARDSYNC_WAREHOUSE_URL"] = u.String()
	d.env["CARDSYNC_WAREHOUSE_PASSWORD"] = "analyst-pw"
	state := `SELECT md5(pg_get_viewdef('cards_flat') || (SELECT count(*) FROM column_docs) || (SELECT max(version) FROM schema_migrations)
		|| (SELECT count(*) FROM pg_class) || (SELECT count(*) FROM sync_runs))`
	var before, after string
	if err := db.QueryRow(state).Scan(&before); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := d.run("status")
	if code != 0 || !strings.Contains(out, "healthy") || strings.Contains(out, "cards_flat stale") {
		t.Errorf("status as a read-only role: exit %d, want 0, healthy, cards_flat current\n%s\n%s", code, out, lastLines(errOut))
	}
	if err := db.QueryRow(state).Scan(&after); err != nil || after != before {
		t.Errorf("status as a read-only role changed the database (%v)", err)
	}
}
