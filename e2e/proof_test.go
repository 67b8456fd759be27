package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load/postgres/pgtest"
	"github.com/cardsync/cardsync/sim"
)

// pg is the PostgreSQL server of the package's tests, started by the first
// test that needs one and stopped by TestMain.
var pg struct {
	once sync.Once
	srv  *pgtest.Server
	err  error
}

// pgServer returns the PostgreSQL server, starting it on first use; the
// test skips without one (fails with CARDSYNC_REQUIRE_TOOLS set).
func pgServer(t *testing.T) *pgtest.Server {
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

// warehouse is a deployment on one of the two warehouses, and what the
// proofs read of it.
type warehouse struct {
	name string
	d    *deployment
	pg   *pgx.Conn // nil for SQLite
}

// warehouses are the two kinds every proof runs against.
var warehouses = []string{"sqlite", "postgres"}

// newWarehouse is newDeployment writing to kind: the SQLite file, or a
// fresh PostgreSQL database ([warehouse] url).
func newWarehouse(t *testing.T, kind string, up *upstream) *warehouse {
	t.Helper()
	w := &warehouse{name: kind, d: newDeployment(t, up)}
	if kind == "postgres" {
		url := pgServer(t).NewDatabase(t)
		delete(w.d.env, "CARDSYNC_WAREHOUSE_PATH")
		w.d.env["CARDSYNC_WAREHOUSE_URL"] = url
		conn, err := pgx.Connect(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		w.pg = conn
	}
	return w
}

// count runs the query of the warehouse's kind that returns one integer.
func (w *warehouse) count(t *testing.T, sqliteQ, pgQ string) int64 {
	t.Helper()
	n, err := w.tryCount(t, sqliteQ, pgQ)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tryCount is count returning the error (a warehouse not created yet).
func (w *warehouse) tryCount(t *testing.T, sqliteQ, pgQ string) (int64, error) {
	t.Helper()
	var n *int64
	var err error
	if w.pg == nil {
		if _, serr := os.Stat(w.d.db); serr != nil {
			return 0, serr
		}
		err = openRO(t, w.d.db).QueryRow(sqliteQ).Scan(&n)
	} else {
		err = w.pg.QueryRow(t.Context(), pgQ).Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", w.name, err)
	}
	if n == nil {
		return 0, nil
	}
	return *n, nil
}

// countIs polls: whether the query's integer passes ok, false while the
// warehouse does not exist yet.
func (w *warehouse) countIs(t *testing.T, sqliteQ, pgQ string, ok func(int64) bool) bool {
	t.Helper()
	n, err := w.tryCount(t, sqliteQ, pgQ)
	return err == nil && ok(n)
}

// current returns the current cards of the account default: id to JSON.
func (w *warehouse) current(t *testing.T) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	if w.pg == nil {
		rows, err := openRO(t, w.d.db).Query(`SELECT card_id, data FROM cards WHERE removed_at IS NULL`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				t.Fatal(err)
			}
			got[id] = data
		}
		return got
	}
	rows, err := w.pg.Query(t.Context(), `SELECT card_id, data::text FROM card_state WHERE removed_at IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, data string
		if err := rows.Scan(&id, &data); err != nil {
			t.Fatal(err)
		}
		got[id] = []byte(data)
	}
	return got
}

// text is everything the warehouse stores, as text: the file's bytes, or
// every row of every table of the database.
func (w *warehouse) text(t *testing.T) string {
	t.Helper()
	if w.pg == nil {
		var b strings.Builder
		for _, suffix := range []string{"", "-wal"} {
			data, _ := os.ReadFile(w.d.db + suffix)
			b.Write(data)
		}
		return b.String()
	}
	tables, err := w.pg.Query(t.Context(), `SELECT quote_ident(table_name) FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(tables, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, n := range names {
		var s string
		if err := w.pg.QueryRow(t.Context(), `SELECT coalesce(string_agg(t::text, E'\n'), '') FROM `+n+` t`).Scan(&s); err != nil {
			t.Fatalf("dump %s: %v", n, err)
		}
		b.WriteString(s)
	}
	return b.String()
}

// assertExact checks that the warehouse's current cards are the
// simulator's ordinary cards with the same content (odd items are the
// quarantine's), and that no card has more than one current version.
func (w *warehouse) assertExact(t *testing.T, up *upstream) {
	t.Helper()
	got := w.current(t)
	n := 0
	for _, c := range up.Cards() {
		if c.Odd != "" {
			continue
		}
		n++
		data, ok := got[c.ID]
		if !ok {
			t.Errorf("%s: card %s lost", w.name, c.ID)
			continue
		}
		if !reflect.DeepEqual(canonicalJSON(t, data), canonicalJSON(t, c.JSON())) {
			t.Errorf("%s: card %s differs:\n got %s\nwant %s", w.name, c.ID, data, c.JSON())
		}
	}
	if len(got) < n {
		t.Errorf("%s: %d current cards, want at least the simulator's %d ordinary ones", w.name, len(got), n)
	}
	if d := w.count(t, `SELECT count(*) FROM (SELECT card_id FROM card_versions WHERE valid_to IS NULL GROUP BY card_id HAVING count(*) > 1)`,
		`SELECT count(*) FROM (SELECT card_id FROM card_versions WHERE valid_to IS NULL GROUP BY account, card_id HAVING count(*) > 1) d`); d != 0 {
		t.Errorf("%s: %d cards with two current versions", w.name, d)
	}
}

func (w *warehouse) backfill(t *testing.T, args ...string) (string, string) {
	t.Helper()
	code, stdout, stderr := w.d.run(append([]string{"backfill"}, args...)...)
	if code != 0 {
		t.Fatalf("%s: backfill %v exited %d\n%s\n%s", w.name, args, code, stdout, lastLines(stderr))
	}
	return stdout, stderr
}

// TestProofBothWarehouses runs the proofs of the suite against both
// warehouses, SQLite and PostgreSQL, through the built binary: exactness
// (and a second walk that changes nothing), resume after SIGKILL,
// upstream faults, redaction of card numbers and secrets, quarantine of
// unusable items, the mass-removal guard, and a second writer refused.
func TestProofBothWarehouses(t *testing.T) {
	for _, kind := range warehouses {
		t.Run(kind, func(t *testing.T) {
			t.Run("exact", func(t *testing.T) { proofExact(t, kind) })
			t.Run("resume after SIGKILL", func(t *testing.T) { proofResume(t, kind) })
			t.Run("faults", func(t *testing.T) { proofFaults(t, kind) })
			t.Run("redaction and quarantine", func(t *testing.T) { proofRedaction(t, kind) })
			t.Run("guard", func(t *testing.T) { proofGuard(t, kind) })
			t.Run("second writer refused", func(t *testing.T) { proofTwoWriters(t, kind) })
		})
	}
}

func proofExact(t *testing.T, kind string) {
	up := newUpstream(t, sim.Options{Seed: 21, Cards: 450, ExtraFields: true, StringIDs: true})
	w := newWarehouse(t, kind, up)
	w.backfill(t)
	w.assertExact(t, up)
	versions := w.count(t, `SELECT count(*) FROM card_versions`, `SELECT count(*) FROM card_versions`)
	if versions != 450 {
		t.Errorf("%d versions after one walk of 450 cards", versions)
	}
	// A walk with no upstream change writes no version.
	w.backfill(t)
	if again := w.count(t, `SELECT count(*) FROM card_versions`, `SELECT count(*) FROM card_versions`); again != versions {
		t.Errorf("a walk with no change: %d versions, was %d", again, versions)
	}
	// A change upstream is one new version.
	c := up.Cards()[7]
	up.UpdateCard(c.ID)
	w.backfill(t)
	w.assertExact(t, up)
	if n := w.count(t, `SELECT count(*) FROM card_versions`, `SELECT count(*) FROM card_versions`); n != versions+1 {
		t.Errorf("one card changed: %d versions, want %d", n, versions+1)
	}
}

func proofResume(t *testing.T, kind string) {
	up := newUpstream(t, sim.Options{Seed: 11, Cards: 900, Limit: 5000})
	w := newWarehouse(t, kind, up)
	w.d.env["CARDSYNC_API_RATE_LIMIT"] = "40/1s" // 60 pages: 1.5 s
	w.d.env["CARDSYNC_WAREHOUSE_COMMIT_DELAY"] = "0"
	// A killed process's lease holds until it expires: keep that short.
	w.d.env["CARDSYNC_CLUSTER_LEASE_TTL"] = "2s"
	leaseFree := func() bool {
		if w.pg == nil {
			return true
		}
		n, err := w.tryCount(t, "", `SELECT count(*) FROM sync_leases WHERE expires_at > now()`)
		return err != nil || n == 0 // no table yet: no lease
	}
	for kill := range 3 {
		pollUntil(t, 10*time.Second, "the killed backfill's lease to expire", leaseFree)
		p := w.d.startBG("backfill")
		pollUntil(t, 30*time.Second, "pages committed", func() bool {
			return w.countIs(t, `SELECT max(next_page) FROM sync_checkpoints`, `SELECT max(next_page)::bigint FROM sync_checkpoints`,
				func(n int64) bool { return n > int64(5+10*kill) })
		}, p)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	pollUntil(t, 10*time.Second, "the killed backfill's lease to expire", leaseFree)
	stdout, _ := w.backfill(t)
	if !strings.Contains(stdout, "resumed an interrupted walk at page") {
		t.Errorf("the last backfill did not resume:\n%s", stdout)
	}
	w.assertExact(t, up)
	if n := w.count(t, `SELECT count(*) FROM card_versions`, `SELECT count(*) FROM card_versions`); n != 900 {
		t.Errorf("%d versions, want 900: nothing doubled by the kills", n)
	}
	if n := w.count(t, `SELECT count(*) FROM sync_runs WHERE status = 'running'`, `SELECT count(*) FROM sync_runs WHERE status = 'running'`); n != 0 {
		t.Errorf("%d runs left running", n)
	}
	if refetched := extraFetches(up.Stats()); refetched > 3 {
		t.Errorf("%d pages fetched twice after 3 kills with commit_delay 0", refetched)
	}
}

func proofFaults(t *testing.T, kind string) {
	up := newUpstream(t, sim.Options{Seed: 31, Cards: 300, Faults: []sim.Fault{
		{Endpoint: sim.EndpointCards, Kind: sim.FaultStatus, Status: 503, Percent: 20},
		{Endpoint: sim.EndpointCards, Kind: sim.FaultRateLimit, RetryAfter: time.Second, Times: 2, Skip: 3},
	}})
	w := newWarehouse(t, kind, up)
	w.backfill(t)
	w.assertExact(t, up)
	if n := w.count(t, `SELECT sum(retries) FROM sync_runs`, `SELECT sum(retries)::bigint FROM sync_runs`); n == 0 {
		t.Errorf("no retries recorded despite the faults")
	}
}

func proofRedaction(t *testing.T, kind string) {
	const password = "canary-Pw-5e1f9c27"
	up := newUpstream(t, sim.Options{Seed: 41, Cards: 200, IncludePAN: true, OddData: true, Password: password})
	w := newWarehouse(t, kind, up)
	w.d.env["CARDSYNC_API_PASSWORD"] = password
	_, stderr := w.backfill(t)
	w.assertExactRedacted(t, up)
	stored := w.text(t)
	for _, c := range up.Cards() {
		if c.PAN != "" && strings.Contains(stored, c.PAN) {
			t.Errorf("%s stores card %s's full number", kind, c.ID)
			break
		}
	}
	for _, secret := range append(up.Tokens(), password) {
		if strings.Contains(stored, secret) || strings.Contains(stderr, secret) {
			t.Errorf("%s: a secret (%.4s…) is stored or logged", kind, secret)
		}
	}
	if n := w.count(t, `SELECT count(*) FROM rejected_cards`, `SELECT count(*) FROM rejected_cards`); n == 0 {
		t.Errorf("no item quarantined from odd data")
	}
}

// assertExactRedacted checks, with IncludePAN, that every ordinary card is
// current and holds no card_number or cvv.
func (w *warehouse) assertExactRedacted(t *testing.T, up *upstream) {
	t.Helper()
	got := w.current(t)
	for _, c := range up.Cards() {
		if c.Odd != "" {
			continue
		}
		data, ok := got[c.ID]
		if !ok {
			t.Errorf("%s: card %s lost", w.name, c.ID)
			continue
		}
		if strings.Contains(string(data), `"cvv"`) || strings.Contains(string(data), c.PAN) {
			t.Errorf("%s: card %s stored unredacted: %s", w.name, c.ID, data)
		}
	}
}

func proofGuard(t *testing.T, kind string) {
	up := newUpstream(t, sim.Options{Seed: 3, Cards: 200})
	w := newWarehouse(t, kind, up)
	current := func() int64 {
		return w.count(t, `SELECT count(*) FROM cards WHERE removed_at IS NULL`, `SELECT count(*) FROM card_state WHERE removed_at IS NULL`)
	}
	w.backfill(t)
	cards := up.Cards()
	for _, c := range cards[:20] {
		up.RemoveCard(c.ID)
	}
	w.backfill(t)
	w.backfill(t)
	if got := current(); got != 180 {
		t.Fatalf("after two walks missing 20: %d current, want 180", got)
	}
	for _, c := range cards[20:] {
		up.RemoveCard(c.ID)
	}
	for range 2 {
		stdout, _ := w.backfill(t)
		if got := current(); got != 180 || !strings.Contains(stdout, "mass removal held: 180 cards") {
			t.Fatalf("held walk: %d current (want 180), summary:\n%s", got, stdout)
		}
	}
	w.backfill(t, "-confirm-removals")
	if got := current(); got != 0 {
		t.Errorf("after -confirm-removals: %d current, want 0", got)
	}
}

func proofTwoWriters(t *testing.T, kind string) {
	up := newUpstream(t, sim.Options{Seed: 5, Cards: 600})
	w := newWarehouse(t, kind, up)
	w.d.env["CARDSYNC_API_RATE_LIMIT"] = "20/1s" // 40 pages: 2 s
	first := w.d.startBG("backfill")
	pollUntil(t, 30*time.Second, "the first backfill walking", func() bool {
		return w.countIs(t, `SELECT count(*) FROM sync_runs WHERE status = 'running'`, `SELECT count(*) FROM sync_runs WHERE status = 'running'`,
			func(n int64) bool { return n == 1 })
	}, first)
	code, stdout, stderr := w.d.run("backfill")
	if code != 4 {
		t.Errorf("second backfill: exit %d, want 4\n%s\n%s", code, stdout, lastLines(stderr))
	}
	want := "sync in progress"
	if kind == "postgres" {
		want = "lease held by"
	}
	if !strings.Contains(stderr, want) {
		t.Errorf("second backfill does not say why (%q):\n%s", want, lastLines(stderr))
	}
	if c := first.wait(t, time.Minute); c != 0 {
		t.Fatalf("first backfill exit %d\n%s", c, lastLines(first.stderr.String()))
	}
	w.assertExact(t, up)
	if n := w.count(t, `SELECT count(*) FROM sync_runs`, `SELECT count(*) FROM sync_runs`); n != 1 {
		t.Errorf("%d runs, want the first backfill's only", n)
	}
}
