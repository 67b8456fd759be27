//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cardsync/cardsync/redact/redacttest"
	"github.com/cardsync/cardsync/sim"
)

// The proof suite against a PostgreSQL warehouse ([warehouse] url): the
// same binary, the same simulator, the same truth as the SQLite tests, each
// test on a fresh database of one server for the package (pgServer).
// Where a SQLite test's body takes a destination, its PostgreSQL twin here
// is one line; the others are written for PostgreSQL below.

// TestPostgresBackfillExact: a backfill into PostgreSQL equals the
// simulator (every card's content, the account's amounts as exact decimal
// text); a quiet re-run changes nothing, not even a row's version (xmin);
// after an upstream change and addition the next run stores exactly those.
func TestPostgresBackfillExact(t *testing.T) {
	up := newUpstream(t, sim.Options{Seed: 61, Cards: 150, ExtraFields: true, PHPEscaping: true, AccountDrift: true})
	d := newDeploymentTo(t, up, toPostgres)
	d.backfillOK(t)
	assertTruth(t, up, d.db)
	if run := lastRun(t, d.db); run.Status != "succeeded" || run.WalkConsistent.Int64 != 1 || run.Pages != 10 {
		t.Errorf("first run %+v: want succeeded, consistent, 10 pages", run)
	}
	if st := d.status(t); !st.Healthy || len(st.Runs) != 1 {
		t.Errorf("status -json: healthy %v, %d runs; want healthy, 1", st.Healthy, len(st.Runs))
	}

	before := contentHash(t, d.db)
	d.backfillOK(t)
	if after := contentHash(t, d.db); after != before {
		t.Errorf("a run with no upstream change changed the card tables")
	}
	db := openRO(t, d.db)
	var changed, added int64
	if err := db.QueryRow(`SELECT cards_changed, cards_new FROM sync_runs ORDER BY run_id DESC LIMIT 1`).Scan(&changed, &added); err != nil {
		t.Fatal(err)
	}
	if changed != 0 || added != 0 {
		t.Errorf("quiet run: %d changed, %d new; want 0, 0", changed, added)
	}
	assertTruth(t, up, d.db)

	updated := up.Cards()[20].ID
	if !up.UpdateCard(updated) {
		t.Fatal("update card")
	}
	fresh := up.AddCard()
	d.backfillOK(t)
	assertTruth(t, up, d.db)
	for id, want := range map[string]int64{updated: 2, fresh.ID: 1} {
		if n := queryInt(t, db, `SELECT count(*) FROM card_versions WHERE card_id = $1`, id); n != want {
			t.Errorf("card %s: %d versions, want %d", id, n, want)
		}
	}
	if n := queryInt(t, db, `SELECT count(*) FROM card_versions`); n != int64(len(up.Cards())+1) {
		t.Errorf("%d card versions, want one per card and one for the change (%d)", n, len(up.Cards())+1)
	}
}

// TestPostgresSIGKILLResume is TestSIGKILLResume on PostgreSQL, smaller:
// kills mid-walk, each followed by a check of the database; then the walk
// completes equal to the simulator, no version doubled, at most one page
// refetched per kill. A killed backfill's lease outlives it, so a restart
// within lease_ttl (2s here) is refused and tried again once it expired.
func TestPostgresSIGKILLResume(t *testing.T) {
	testSIGKILLResume(t, killScenario{dest: toPostgres, commitDelay: "0", maxPerKill: 1, kills: 6, cards: 900, leaseTTL: "2s"})
}

// TestPostgresFaults runs part of TestFaults' matrix against a PostgreSQL
// warehouse: bursts of 5xx, an HTML error page, a truncated body, a
// timeout, a 429 storm, a 429 with Retry-After, and a refusal after
// max_wait.
func TestPostgresFaults(t *testing.T) {
	postgresFaults := []string{
		"5xx with Retry-After", "5xx without Retry-After", "HTML 502", "truncated body",
		"latency past the timeout", "429 storm", "429 with Retry-After", "persistent 5xx past max_wait",
	}
	foreign := newForeignOrigin(t)
	var cases []faultCase
	for _, tc := range faultCases(foreign) {
		if slices.Contains(postgresFaults, tc.name) {
			cases = append(cases, tc)
		}
	}
	if len(cases) != len(postgresFaults) {
		t.Fatalf("found %d of the %d fault cases named", len(cases), len(postgresFaults))
	}
	runFaultCases(t, toPostgres, cases)
}

// TestPostgresOddData is TestOddDataEndToEnd on PostgreSQL.
func TestPostgresOddData(t *testing.T) { testOddData(t, toPostgres) }

// TestPostgresMassRemovalGuard is TestMassRemovalGuard on PostgreSQL.
func TestPostgresMassRemovalGuard(t *testing.T) { testMassRemovalGuard(t, toPostgres) }

// TestPostgresTwoWriters is TestTwoWriters on PostgreSQL: the account's
// lease refuses a second backfill (exit 4, naming the holder) and makes a
// daemon skip its run.
func TestPostgresTwoWriters(t *testing.T) { testTwoWriters(t, toPostgres) }

// TestPostgresCanarySecrets runs backfill, status, check, failing runs
// with a bad password and the daemon, at debug level, against a PostgreSQL warehouse
// whose password (CARDSYNC_WAREHOUSE_PASSWORD; a URL may not hold one) is
// a second canary, which the test server, trusting every local user,
// never asks for; with full card numbers and CVVs in every card and the whole card number
// corpus mixed into the cards. Neither password, no token the API issued
// and no full card number appears in any output, the daemon's command line
// or any row of any table or view, dumped as text; no CVV is stored.
func TestPostgresCanarySecrets(t *testing.T) {
	const pgCanary = "pg-canary-0c41d2"
	corpus := redacttest.PANCorpus()
	// Enough cards to carry the whole corpus, perCard samples each, with a
	// quarter more for the odd items (not objects: they carry none).
	cards := max(60, (len(corpus)+perCard-1)/perCard*5/4)
	up := newUpstream(t, sim.Options{Seed: 51, Cards: cards, Password: canary, IncludePAN: true, OddData: true})
	proxy := newPANProxy(t, up, corpus)
	d := newDeploymentTo(t, up, toPostgres)
	d.env["CARDSYNC_API_BASE_URL"] = proxy.URL
	d.env["CARDSYNC_API_PASSWORD"] = canary
	d.env["CARDSYNC_WAREHOUSE_PASSWORD"] = pgCanary
	d.env["CARDSYNC_LOG_LEVEL"] = "debug"
	scan := &leakScan{}
	run := func(label string, wantCode int, args ...string) string {
		t.Helper()
		code, out, errOut := d.run(args...)
		scan.add(label+" stdout", []byte(out))
		scan.add(label+" stderr", []byte(errOut))
		if code != wantCode {
			t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", label, code, wantCode, out, lastLines(errOut))
		}
		return errOut
	}
	run("backfill", 0, "backfill")
	run("status", 0, "status")
	run("status -json", 0, "status", "-json")
	run("check", 0, "check")
	d.env["CARDSYNC_API_PASSWORD"] = canary + "-wrong"
	if errOut := run("backfill with a bad password", 3, "backfill"); !strings.Contains(errOut, "unauthenticated") {
		t.Errorf("bad password: stderr does not say unauthenticated:\n%s", lastLines(errOut))
	}
	run("check with a bad password", 3, "check")
	d.env["CARDSYNC_API_PASSWORD"] = canary
	run("status after failure", 1, "status")
	run("backfill again", 0, "backfill")

	// The daemon: both passwords only in its environment. Look at its
	// command line once its first run has finished.
	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1h"
	serve := d.startBG("serve")
	exited := make(chan error, 1)
	go func() {
		<-serve.done
		exited <- serve.err
	}()
	waitForRuns(t, d, 4, exited) // backfill, bad-password backfill, backfill, serve's first
	pid := strconv.Itoa(serve.cmd.Process.Pid)
	cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	environ, err := os.ReadFile("/proc/" + pid + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(environ, []byte("CARDSYNC_WAREHOUSE_PASSWORD="+pgCanary)) {
		t.Errorf("the warehouse canary is not in the daemon's environment: the command line check would prove nothing")
	}
	scan.add("serve /proc/PID/cmdline", cmdline)
	stopDaemon(t, serve)
	scan.add("serve stdout", serve.stdout.Bytes())
	scan.add("serve stderr", serve.stderr.Bytes())
	if missed := proxy.unserved(); missed > 0 {
		t.Fatalf("%d of the %d corpus card numbers were never served: the check would not cover them", missed, len(corpus))
	}

	scanPostgresTables(t, d, scan)

	secrets := map[string]string{"password": canary, "warehouse password": pgCanary}
	for i, tok := range up.Tokens() {
		secrets[fmt.Sprintf("token %d", i)] = tok
		if j := strings.LastIndexByte(tok, '.'); j >= 0 && len(tok)-j > 16 {
			secrets[fmt.Sprintf("token %d signature", i)] = tok[j+1:]
		}
	}
	if len(up.Tokens()) == 0 {
		t.Fatal("the upstream saw no token")
	}
	for _, s := range corpus {
		secrets["card number "+s.Name] = s.Digits
	}
	for _, c := range up.Cards() {
		if c.PAN != "" {
			secrets["card_number of card "+c.ID] = c.PAN
		}
	}
	scan.check(t, secrets)
}

// scanPostgresTables adds every table and view of d's warehouse to scan,
// once the corpus is seen to have reached it, and checks no "cvv" field
// was stored.
func scanPostgresTables(t *testing.T, d *deployment, scan *leakScan) {
	t.Helper()
	// The corpus reached the warehouse (redacted), or its absence proves
	// nothing.
	if n := queryInt(t, openRO(t, d.db), `SELECT count(*) FROM card_state WHERE jsonb_exists(data, 'memo_0')`); n < 60 {
		t.Fatalf("%d stored cards carry the corpus fields, want at least 60", n)
	}
	tables := dumpTables(t, d.db)
	for name, rows := range tables {
		scan.add("table "+name, []byte(rows))
	}
	for _, name := range []string{"card_state", "card_versions", "rejected_cards", "sync_runs"} {
		if _, ok := tables[name]; !ok {
			t.Fatalf("no table %s among %d tables and views dumped", name, len(tables))
		}
	}
	for _, name := range []string{"card_state", "card_versions"} {
		if strings.Contains(tables[name], `"cvv"`) {
			t.Errorf("%s holds a \"cvv\" field", name)
		}
	}
}

// dumpTables returns every row of every table and view of the public
// schema of a PostgreSQL warehouse, each row as PostgreSQL's text of it.
func dumpTables(t *testing.T, where string) map[string]string {
	t.Helper()
	db := openRO(t, where)
	rows, err := db.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	out := map[string]string{}
	for _, n := range names {
		q := `SELECT t::text FROM "` + strings.ReplaceAll(n, `"`, `""`) + `" AS t`
		r, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var b strings.Builder
		for r.Next() {
			var row string
			if err := r.Scan(&row); err != nil {
				t.Fatal(err)
			}
			b.WriteString(row)
			b.WriteByte('\n')
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		out[n] = b.String()
	}
	return out
}

// panProxy serves the simulator's API with every card number of a corpus
// added to the cards, a few to each card in fields ("memo_N") whose names
// say nothing: redaction must find them by their value.
type panProxy struct {
	URL    string
	corpus []redacttest.Sample

	mu     sync.Mutex
	served map[int]bool // corpus indexes sent at least once
}

// perCard is how many corpus samples each card carries.
const perCard = 40

func newPANProxy(t *testing.T, up *upstream, corpus []redacttest.Sample) *panProxy {
	t.Helper()
	p := &panProxy{corpus: corpus, served: map[int]bool{}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && tok != "" {
			up.mu.Lock()
			up.tokens[tok] = true
			up.mu.Unlock()
		}
		rec := httptest.NewRecorder()
		up.Server.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if r.URL.Path == "/cards" && rec.Code == http.StatusOK {
			page, _ := strconv.Atoi(r.URL.Query().Get("page"))
			var err error
			if body, err = p.addPANs(body, max(page, 1)); err != nil {
				t.Errorf("proxy: %v", err)
				http.Error(w, "proxy", http.StatusInternalServerError)
				return
			}
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

// addPANs adds perCard corpus samples to each object of a page's data,
// taking them in turn from where the page's position in the list puts
// them.
func (p *panProxy) addPANs(body []byte, page int) ([]byte, error) {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("decode page %d: %w", page, err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(env["data"], &items); err != nil {
		return nil, fmt.Errorf("decode page %d data: %w", page, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, raw := range items {
		var card map[string]json.RawMessage
		if json.Unmarshal(raw, &card) != nil {
			continue // not an object: an odd item, sent as it is
		}
		pos := (page-1)*sim.DefaultPageSize + i
		for j := range perCard {
			k := (pos*perCard + j) % len(p.corpus)
			text, err := json.Marshal(p.corpus[k].Text)
			if err != nil {
				return nil, err
			}
			card["memo_"+strconv.Itoa(j)] = text
			p.served[k] = true
		}
		b, err := json.Marshal(card)
		if err != nil {
			return nil, fmt.Errorf("encode a card of page %d: %w", page, err)
		}
		items[i] = b
	}
	data, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	env["data"] = data
	return json.Marshal(env)
}

// unserved counts the corpus samples never sent.
func (p *panProxy) unserved() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.corpus) - len(p.served)
}
