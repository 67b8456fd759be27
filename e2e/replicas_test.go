//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/sim"
)

// fetch is one /cards request a simulator served: which client (its bearer
// token: each replica authenticates itself) asked for which page, when.
type fetch struct {
	token      string
	page       int
	start, end time.Time
}

// loggedUpstream is a simulator that logs every card page request.
type loggedUpstream struct {
	*sim.Server
	URL string

	mu  sync.Mutex
	log []fetch
}

func newLoggedUpstream(t *testing.T, opts sim.Options) *loggedUpstream {
	t.Helper()
	opts.Window, opts.Limit, opts.AuthLimit = time.Second, 1000, 100
	u := &loggedUpstream{Server: sim.New(opts)}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		u.Server.ServeHTTP(w, r)
		if r.URL.Path != "/cards" {
			return
		}
		page, err := strconv.Atoi(r.URL.Query().Get("page"))
		if err != nil {
			page = 1
		}
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		u.mu.Lock()
		u.log = append(u.log, fetch{token: tok, page: page, start: start, end: time.Now()})
		u.mu.Unlock()
	}))
	t.Cleanup(ts.Close)
	u.URL = ts.URL
	return u
}

// walks splits the log into walks: a client's consecutive requests, a new
// walk starting when its page number goes down or another client's
// request came between. It returns the walks' time spans.
func (u *loggedUpstream) walks() [][]fetch {
	u.mu.Lock()
	log := slices.Clone(u.log)
	u.mu.Unlock()
	slices.SortFunc(log, func(a, b fetch) int { return a.start.Compare(b.start) })
	var out [][]fetch
	for _, f := range log {
		if n := len(out); n > 0 {
			last := out[n-1][len(out[n-1])-1]
			if last.token == f.token && f.page > last.page {
				out[n-1] = append(out[n-1], f)
				continue
			}
		}
		out = append(out, []fetch{f})
	}
	return out
}

// overlaps returns a description of two walks of different clients whose
// time spans overlap, or "".
func overlaps(walks [][]fetch) string {
	for i, a := range walks {
		for _, b := range walks[i+1:] {
			if a[0].token == b[0].token {
				continue
			}
			aEnd, bEnd := a[len(a)-1].end, b[len(b)-1].end
			if a[0].start.Before(bEnd) && b[0].start.Before(aEnd) {
				return fmt.Sprintf("pages %d-%d (%s to %s) and pages %d-%d (%s to %s) by two clients",
					a[0].page, a[len(a)-1].page, a[0].start.Format("15:04:05.000"), aEnd.Format("15:04:05.000"),
					b[0].page, b[len(b)-1].page, b[0].start.Format("15:04:05.000"), bEnd.Format("15:04:05.000"))
			}
		}
	}
	return ""
}

// pgLease is one row of sync_leases.
type pgLease struct {
	holder string
	token  int64
	live   bool
}

func pgLeases(t *testing.T, db *pgx.Conn) map[string]pgLease {
	t.Helper()
	rows, err := db.Query(t.Context(), `SELECT account, holder, fencing_token, expires_at > now() FROM sync_leases`)
	if err != nil {
		return nil // not migrated yet
	}
	out := map[string]pgLease{}
	for rows.Next() {
		var a string
		var l pgLease
		if err := rows.Scan(&a, &l.holder, &l.token, &l.live); err != nil {
			t.Fatal(err)
		}
		out[a] = l
	}
	return out
}

func pgInt(t *testing.T, db *pgx.Conn, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestReplicasSharePostgres: three `cardsync serve` replicas share six
// accounts (each on a simulator of its own) through one PostgreSQL
// warehouse. No account's pages are walked by two replicas at once (the
// simulators' request logs); a SIGKILLed replica's accounts are taken
// over within the lease TTL and a tick; a replica SIGSTOPped past its TTL
// has its next commit refused once continued; in the end every account
// equals its simulator and no card version is doubled.
func TestReplicasSharePostgres(t *testing.T) {
	url := pgServer(t).NewDatabase(t)
	db, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })

	const ttl = 3 * time.Second
	names := []string{"a1", "a2", "a3", "a4", "a5", "a6"}
	ups := map[string]*loggedUpstream{}
	d := newDeployment(t, nil)
	var accounts []account
	for i, n := range names {
		up := newLoggedUpstream(t, sim.Options{Seed: int64(90 + i), Cards: 300})
		// Each page takes a while, so walks (20 pages) last a few seconds
		// and a signal lands in the middle of one.
		up.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultLatency, Latency: 80 * time.Millisecond})
		ups[n] = up
		accounts = append(accounts, account{n, up.URL})
	}
	d.useAccounts(t, accounts...)
	delete(d.env, "CARDSYNC_WAREHOUSE_PATH")
	d.env["CARDSYNC_WAREHOUSE_URL"] = url
	d.env["CARDSYNC_CLUSTER_LEASE_TTL"] = ttl.String()
	d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 1s"
	d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
	d.env["CARDSYNC_LOG_LEVEL"] = "info"
	replicas := map[string]*bgProc{}
	for _, r := range []string{"r1", "r2", "r3"} {
		d.env["CARDSYNC_CLUSTER_HOLDER"] = r
		replicas[r] = d.startBG("serve")
	}
	all := []*bgProc{replicas["r1"], replicas["r2"], replicas["r3"]}
	succeededRuns := func() map[string]int64 {
		out := map[string]int64{}
		for _, n := range names {
			// Before the first replica migrated the database, none.
			var c int64
			if db.QueryRow(t.Context(), `SELECT count(*) FROM sync_runs WHERE account = $1 AND status = 'succeeded'`, n).Scan(&c) == nil {
				out[n] = c
			}
		}
		return out
	}
	pollUntil(t, 60*time.Second, "a successful run of every account", func() bool {
		for _, n := range succeededRuns() {
			if n == 0 {
				return false
			}
		}
		return true
	}, all...)

	all = replicasKillOne(t, db, replicas, all, ttl)

	replicasPauseOne(t, db, replicas, all, ttl)

	// Every account syncs again after all that, then the replicas stop.
	before := succeededRuns()
	pollUntil(t, 60*time.Second, "another successful run of every account", func() bool {
		now := succeededRuns()
		for _, n := range names {
			if now[n] <= before[n] {
				return false
			}
		}
		return true
	}, all...)
	for _, p := range all {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, r := range []string{"r1", "r2"} {
		if code := replicas[r].wait(t, 30*time.Second); code != 0 {
			t.Errorf("%s exit %d\n%s", r, code, lastLines(replicas[r].stderr.String()))
		}
	}
	replicasAfterFencing(t, db, d, replicas["r2"], names, ups)
}

// replicasKillOne SIGKILLs r3 while it holds leases and checks another
// replica takes them within the TTL and a tick; it returns the replicas
// still running.
func replicasKillOne(t *testing.T, db *pgx.Conn, replicas map[string]*bgProc, all []*bgProc, ttl time.Duration) []*bgProc {
	// SIGKILL r3 while it holds leases; another replica takes them within
	// the TTL and a tick.
	var held []string
	// Sticky leases: r3, started last, gets its share as the others hand
	// accounts back between runs (slow under -race).
	pollUntil(t, 90*time.Second, "r3 holding a lease", func() bool {
		held = held[:0]
		for a, l := range pgLeases(t, db) {
			if l.holder == "r3" && l.live {
				held = append(held, a)
			}
		}
		return len(held) > 0
	}, all...)
	killed := time.Now()
	if err := replicas["r3"].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	replicas["r3"].wait(t, 10*time.Second)
	all = all[:2]
	pollUntil(t, 3*ttl, "r3's accounts taken over", func() bool {
		leases := pgLeases(t, db)
		for _, a := range held {
			if l := leases[a]; l.holder == "r3" || !l.live {
				return false
			}
		}
		return true
	}, all...)
	takeover := time.Since(killed)
	t.Logf("SIGKILL: %d accounts of r3 (%v) taken over after %s (lease_ttl %s, schedule @every 1s)", len(held), held, takeover.Round(time.Millisecond), ttl)
	if takeover > ttl+2*time.Second {
		t.Errorf("take-over after %s, want within lease_ttl %s and a tick", takeover, ttl)
	}
	return all
}

// replicasPauseOne SIGSTOPs r2 mid-walk past its TTL and checks r1 takes
// its accounts and r2, once continued, says it lost its lease.
func replicasPauseOne(t *testing.T, db *pgx.Conn, replicas map[string]*bgProc, all []*bgProc, ttl time.Duration) {
	// SIGSTOP r2 mid-walk past its TTL; once continued, its next commit is
	// refused and it stops.
	var stopped []string
	// r2 is walking an account when it holds the account's live lease and
	// the account has a run marked running (only the lease holder runs
	// one): a lease alone may be a run's that is just ending, and a
	// replica stopped between runs has no walk to be refused.
	pollUntil(t, 30*time.Second, "r2 walking an account", func() bool {
		stopped = stopped[:0]
		for a, l := range pgLeases(t, db) {
			if l.holder == "r2" && l.live && pgInt(t, db, `SELECT count(*) FROM sync_runs WHERE account = $1 AND status = 'running'`, a) > 0 {
				stopped = append(stopped, a)
			}
		}
		return len(stopped) > 0
	}, all...)
	r2 := replicas["r2"]
	if err := r2.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	pollUntil(t, 3*ttl, "r1 taking r2's accounts", func() bool {
		leases := pgLeases(t, db)
		for _, a := range stopped {
			if leases[a].holder != "r1" {
				return false
			}
		}
		return true
	}, replicas["r1"])
	t.Logf("SIGSTOP: %d accounts of r2 (%v) taken over by r1 after %s", len(stopped), stopped, time.Since(paused).Round(time.Millisecond))
	time.Sleep(time.Second) // r1 commits pages under its new token
	if err := r2.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 2*ttl, "r2 saying it lost its lease", func() bool {
		return strings.Contains(r2.stderr.String(), "lost the account's lease")
	}, all...)
}

// replicasAfterFencing checks what the replicas left once stopped: r2's
// refused commits, every account's truth, and status naming the leases.
func replicasAfterFencing(t *testing.T, db *pgx.Conn, d *deployment, r2 *bgProc, names []string, ups map[string]*loggedUpstream) {
	// r2's runs in flight stopped: by its fencing token (a commit of the
	// pages in hand refused: "no longer held by r2 with fencing token N")
	// or, with no page in hand, by its own clock before the next page.
	fenced := 0
	for _, line := range strings.Split(r2.stderr.String(), "\n") {
		if strings.Contains(line, "lost the account's lease") {
			t.Logf("r2: %s", line)
			if !strings.Contains(line, "lease lost") {
				t.Errorf("r2's line does not give the lease as the cause: %s", line)
			}
		}
		if strings.Contains(line, "no longer held by r2 with fencing token") {
			fenced++
		}
	}
	// A walk stopped with pages in hand (batched: commit_delay) tries to
	// commit them, and the fencing token refuses.
	t.Logf("SIGCONT: %d commits of r2 refused by the fencing token", fenced)
	if fenced == 0 {
		t.Errorf("no commit of r2 was refused by its fencing token:\n%s", lastLines(r2.stderr.String()))
	}

	for _, n := range names {
		up := ups[n]
		if o := overlaps(up.walks()); o != "" {
			t.Errorf("account %s walked by two replicas at once: %s", n, o)
		}
		assertPostgresTruth(t, db, up.Server, n)
	}
	if n := pgInt(t, db, `SELECT count(*) FROM (SELECT account, card_id FROM card_versions WHERE valid_to IS NULL GROUP BY 1, 2 HAVING count(*) > 1) d`); n != 0 {
		t.Errorf("%d cards with more than one current version", n)
	}
	if n := pgInt(t, db, `SELECT count(*) FROM card_versions`); n != int64(300*len(names)) {
		t.Errorf("%d card versions, want %d: one per card (nothing doubled)", n, 300*len(names))
	}
	// status shows who holds what, from any host.
	code, out, errOut := d.run("status", "-json")
	if code != 0 && code != 1 {
		t.Errorf("status exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"lease": {`) || !strings.Contains(out, `"fencing_token"`) {
		t.Errorf("status -json shows no lease:\n%s", out)
	}
}

// assertPostgresTruth checks that account's current cards in PostgreSQL
// are the simulator's, with the same content.
func assertPostgresTruth(t *testing.T, db *pgx.Conn, up *sim.Server, account string) {
	t.Helper()
	rows, err := db.Query(t.Context(), `SELECT card_id, data::text FROM card_state WHERE account = $1 AND removed_at IS NULL`, account)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for rows.Next() {
		var id, data string
		if err := rows.Scan(&id, &data); err != nil {
			t.Fatal(err)
		}
		got[id] = []byte(data)
	}
	truth := up.Cards()
	if len(got) != len(truth) {
		t.Errorf("account %s: %d current cards, simulator %d", account, len(got), len(truth))
	}
	for _, c := range truth {
		data, ok := got[c.ID]
		if !ok {
			t.Errorf("account %s: card %s lost", account, c.ID)
			continue
		}
		if !reflect.DeepEqual(canonicalJSON(t, data), canonicalJSON(t, c.JSON())) {
			t.Errorf("account %s: card %s differs:\n got %s\nwant %s", account, c.ID, data, c.JSON())
		}
	}
}
