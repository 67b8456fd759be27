//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
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

// replicaSetup is a deployment of accounts (each on a logged simulator of
// its own) on a fresh PostgreSQL database, for serve replicas.
type replicaSetup struct {
	d     *deployment
	db    *pgx.Conn
	names []string
	ups   map[string]*loggedUpstream
}

func newReplicaSetup(t *testing.T, names []string, ttl time.Duration) *replicaSetup {
	t.Helper()
	url := pgServer(t).NewDatabase(t)
	db, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	s := &replicaSetup{d: newDeployment(t, nil), db: db, names: names, ups: map[string]*loggedUpstream{}}
	var accounts []account
	for i, n := range names {
		// Tokens last an hour: a replica that keeps its accounts asks for
		// one token per account for the whole test.
		up := newLoggedUpstream(t, sim.Options{Seed: int64(120 + i), Cards: 60, TokenTTL: time.Hour})
		s.ups[n] = up
		accounts = append(accounts, account{n, up.URL})
	}
	s.d.useAccounts(t, accounts...)
	delete(s.d.env, "CARDSYNC_WAREHOUSE_PATH")
	s.d.env["CARDSYNC_WAREHOUSE_URL"] = url
	s.d.env["CARDSYNC_CLUSTER_LEASE_TTL"] = ttl.String()
	s.d.env["CARDSYNC_SCHEDULE_CRON"] = "@every 2s"
	s.d.env["CARDSYNC_SCHEDULE_RUN_ON_START"] = "true"
	s.d.env["CARDSYNC_METRICS_HEALTHY_WITHIN"] = "8s"
	s.d.env["CARDSYNC_LOG_LEVEL"] = "info"
	return s
}

// serveReplica starts a serve process with its own metrics address.
func (s *replicaSetup) serveReplica(t *testing.T) (*bgProc, string) {
	t.Helper()
	addr := freeAddr(t)
	s.d.env["CARDSYNC_METRICS_LISTEN"] = addr
	return s.d.startBG("serve"), addr
}

// joinedRE finds the holder and instance of a replica's "joined" line
// (JSON or text).
var joinedRE = regexp.MustCompile(`joined the replicas sharing the warehouse\W+holder\W+([^"\s,]+)\W+instance\W+([^"\s,]+)`)

// replicaHolder is the holder and instance a replica's log says it joined
// with ("" until it joined).
func replicaHolder(p *bgProc) (holder, instance string) {
	m := joinedRE.FindStringSubmatch(stderrSoFar(p))
	if m == nil {
		return "", ""
	}
	return m[1], m[2]
}

// healthz answers a replica's /healthz status code (0: no answer).
func healthz(addr string) int {
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// leaseHeldSum sums cardsync_lease_held over a replica's accounts (-1: no
// answer or no such series).
func leaseHeldSum(addr string) float64 {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return -1
	}
	sum, seen := 0.0, false
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "cardsync_lease_held{") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err == nil {
			sum, seen = sum+v, true
		}
	}
	if !seen {
		return -1
	}
	return sum
}

// runHolders lists, per account, the distinct holders of its runs after
// run afterID.
func (s *replicaSetup) runHolders(t *testing.T, afterID int64) map[string][]string {
	t.Helper()
	rows, err := s.db.Query(t.Context(), `SELECT account, coalesce(holder, '') FROM sync_runs WHERE run_id > $1
		GROUP BY 1, 2 ORDER BY 1, 2`, afterID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var a, h string
		if err := rows.Scan(&a, &h); err != nil {
			t.Fatal(err)
		}
		out[a] = append(out[a], h)
	}
	return out
}

// tokenRequests counts each account's simulator's token requests.
func (s *replicaSetup) tokenRequests() map[string]int64 {
	out := map[string]int64{}
	for n, up := range s.ups {
		out[n] = up.Stats().TokenRequests
	}
	return out
}

// TestReplicasStickyAndHealthy: two `cardsync serve` replicas (default
// holders: the host name and a random instance id each) share four
// accounts through PostgreSQL. They settle on two accounts each and keep
// them: in steady state each account's runs come from one holder and no
// replica asks for another token; every /healthz answers 200 throughout
// (health is the account's, from the shared warehouse). After SIGKILL of
// one, the survivor runs every account within lease_ttl + 4 s, its
// /healthz stays 200 and its cardsync_lease_held sums to 4.
func TestReplicasStickyAndHealthy(t *testing.T) {
	const ttl = 3 * time.Second
	s := newReplicaSetup(t, []string{"b1", "b2", "b3", "b4"}, ttl)
	r1, addr1 := s.serveReplica(t)
	r2, addr2 := s.serveReplica(t)
	all := []*bgProc{r1, r2}
	var h1, h2 string
	pollUntil(t, 30*time.Second, "both replicas joined", func() bool {
		h1, _ = replicaHolder(r1)
		h2, _ = replicaHolder(r2)
		return h1 != "" && h2 != ""
	}, all...)
	host, _ := os.Hostname()
	for _, h := range []string{h1, h2} {
		if !regexp.MustCompile(`^` + regexp.QuoteMeta(host) + `-[0-9a-f]{6}$`).MatchString(h) {
			t.Errorf("default holder %q, want the host name and a random instance id", h)
		}
	}
	if h1 == h2 {
		t.Fatalf("both replicas are holder %s", h1)
	}
	pollUntil(t, 60*time.Second, "two accounts on each replica, every account synced", func() bool {
		n := map[string]int{}
		for _, l := range pgLeases(t, s.db) {
			if l.live {
				n[l.holder]++
			}
		}
		var ok int64
		_ = s.db.QueryRow(t.Context(), `SELECT count(DISTINCT account) FROM sync_runs WHERE status = 'succeeded'`).Scan(&ok)
		return n[h1] == 2 && n[h2] == 2 && ok == 4
	}, all...)

	// Steady state: ~15 s of /healthz every 200 ms on both replicas.
	settled := pgLeases(t, s.db)
	var lastRun int64
	if err := s.db.QueryRow(t.Context(), `SELECT max(run_id) FROM sync_runs`).Scan(&lastRun); err != nil {
		t.Fatal(err)
	}
	tokens := s.tokenRequests()
	unhealthy := map[string]int{}
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		for _, addr := range []string{addr1, addr2} {
			if code := healthz(addr); code != http.StatusOK {
				unhealthy[fmt.Sprintf("%s %d", addr, code)]++
			}
		}
		for _, p := range all {
			if p.exited() {
				t.Fatalf("a replica exited:\n%s", lastLines(p.stderr.String()))
			}
		}
	}
	if len(unhealthy) > 0 {
		t.Errorf("/healthz not 200 in steady state: %v", unhealthy)
	}
	for a, hs := range s.runHolders(t, lastRun) {
		if len(hs) != 1 || hs[0] != settled[a].holder {
			t.Errorf("account %s: steady-state runs by %v, want only its lease holder %s", a, hs, settled[a].holder)
		}
	}
	for a, n := range s.tokenRequests() {
		if d := n - tokens[a]; d > 1 {
			t.Errorf("account %s: %d token requests in 15 s of steady state, want at most 1 per token lifetime (1h)", a, d)
		}
	}

	// SIGKILL r2: r1 runs every account within lease_ttl + 4 s.
	var killedRun int64
	if err := s.db.QueryRow(t.Context(), `SELECT max(run_id) FROM sync_runs`).Scan(&killedRun); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := r2.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	r2.wait(t, 10*time.Second)
	var took time.Duration
	unhealthy = map[string]int{}
	pollUntil(t, 60*time.Second, "r1 running every account", func() bool {
		if code := healthz(addr1); code != http.StatusOK {
			unhealthy[fmt.Sprint(code)]++
		}
		var n int64
		_ = s.db.QueryRow(t.Context(), `SELECT count(DISTINCT account) FROM sync_runs WHERE run_id > $1 AND holder = $2 AND status = 'succeeded'`,
			killedRun, h1).Scan(&n)
		took = time.Since(killed)
		return n == 4
	}, r1)
	t.Logf("SIGKILL: r1 ran every account %s after r2 died (lease_ttl %s, schedule @every 2s)", took.Round(time.Millisecond), ttl)
	if took > ttl+4*time.Second {
		t.Errorf("the survivor ran every account after %s, want within lease_ttl + 4s (%s)", took, ttl+4*time.Second)
	}
	if !strings.Contains(stderrSoFar(r1), "took over account") || !strings.Contains(stderrSoFar(r1), "whose lease lapsed at") {
		t.Errorf("r1's log does not say it took over r2's accounts:\n%s", lastLines(stderrSoFar(r1)))
	}
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if code := healthz(addr1); code != http.StatusOK {
			unhealthy[fmt.Sprint(code)]++
		}
	}
	if len(unhealthy) > 0 {
		t.Errorf("r1's /healthz not 200 around the take-over: %v", unhealthy)
	}
	// cardsync_lease_held sums to 4 on the survivor (polled: the gauge
	// follows the lease watcher's next poll).
	held := leaseHeldSum(addr1)
	for end := time.Now().Add(10 * time.Second); held != 4 && time.Now().Before(end); held = leaseHeldSum(addr1) {
		time.Sleep(200 * time.Millisecond)
	}
	if held != 4 {
		t.Errorf("cardsync_lease_held sums to %v on the survivor, want 4 (-1: no such series)", held)
	}
	stopDaemon(t, r1)
	if n := pgInt(t, s.db, `SELECT count(*) FROM sync_leases WHERE expires_at > now()`); n != 0 {
		t.Errorf("%d leases live after the last replica's clean stop, want none (released)", n)
	}
}

// TestReplicaDuplicateHolderRefused: a second `cardsync serve` given the
// [cluster] holder of a live one is refused at start with exit 4, naming
// the holder and both processes' instance ids; the first goes on.
func TestReplicaDuplicateHolderRefused(t *testing.T) {
	s := newReplicaSetup(t, []string{"c1"}, 3*time.Second)
	s.d.env["CARDSYNC_CLUSTER_HOLDER"] = "same-holder"
	first, _ := s.serveReplica(t)
	var instance string
	pollUntil(t, 30*time.Second, "the first replica joined", func() bool {
		_, instance = replicaHolder(first)
		return instance != ""
	}, first)
	s.d.env["CARDSYNC_METRICS_LISTEN"] = freeAddr(t)
	code, _, stderr := s.d.run("serve")
	if code != 4 {
		t.Fatalf("second serve with the same holder: exit %d, want 4\n%s", code, lastLines(stderr))
	}
	for _, want := range []string{"same-holder", "is in use by another live process", "instance " + instance, "this process is instance "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, lastLines(stderr))
		}
	}
	if first.exited() {
		t.Fatalf("the first replica exited:\n%s", lastLines(first.stderr.String()))
	}
	pollUntil(t, 30*time.Second, "a successful run by the first replica", func() bool {
		return pgInt(t, s.db, `SELECT count(*) FROM sync_runs WHERE status = 'succeeded' AND holder = 'same-holder'`) > 0
	}, first)
	stopDaemon(t, first)
}

// TestReplicaSameHolderPausedIsFenced: a serve paused mid-walk, and a
// second serve started with the same [cluster] holder meanwhile: the
// second waits for the first's lease to lapse and takes it with a new
// fencing token (a lease belongs to the process that took it, not to the
// name), and the first, continued, writes nothing more and stops (exit 4),
// naming the other process. Found by a review: both shared one token and
// the paused one's commit moved the checkpoint back.
func TestReplicaSameHolderPausedIsFenced(t *testing.T) {
	const ttl = 3 * time.Second
	s := newReplicaSetup(t, []string{"c1"}, ttl)
	cfg := filepath.Join(s.d.dir, "c.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Four pages at one request a second: a walk of several seconds.
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), `rate_limit = "1000/1s"`, `rate_limit = "1/1s"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	s.d.env["CARDSYNC_CLUSTER_HOLDER"] = "same-holder"
	first, _ := s.serveReplica(t)
	var run int64
	pollUntil(t, 30*time.Second, "the first serve walking c1", func() bool {
		if l := pgLeases(t, s.db)["c1"]; !l.live {
			return false // not migrated, or not taken yet
		}
		run = pgInt(t, s.db, `SELECT coalesce(max(run_id), 0) FROM sync_runs WHERE status = 'running' AND pages > 0`)
		return run > 0
	}, first)
	if err := first.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	token := pgLeases(t, s.db)["c1"].token
	second, _ := s.serveReplica(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("first serve:\n%s\nsecond serve:\n%s", lastLines(first.stderr.String()), lastLines(second.stderr.String()))
			rows, err := s.db.Query(context.Background(), `SELECT pid, state, coalesce(wait_event_type,''), coalesce(wait_event,''), left(query, 200), now() - state_change FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
			if err == nil {
				for rows.Next() {
					var pid int
					var st, wt, we, q string
					var age time.Duration
					if rows.Scan(&pid, &st, &wt, &we, &q, &age) == nil {
						t.Logf("backend %d %s %s/%s for %s: %s", pid, st, wt, we, age, q)
					}
				}
				rows.Close()
			}
		}
	})
	pollUntil(t, 30*time.Second, "the second serve taking c1 with a new fencing token", func() bool {
		l := pgLeases(t, s.db)["c1"]
		return l.live && l.token > token
	}, second)
	pollUntil(t, 30*time.Second, "the paused run marked abandoned", func() bool {
		return pgInt(t, s.db, `SELECT count(*) FROM sync_runs WHERE run_id = $1 AND status = 'abandoned'`, run) == 1
	}, second)
	pages := pgInt(t, s.db, `SELECT pages FROM sync_runs WHERE run_id = $1`, run)
	if err := first.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := first.wait(t, 30*time.Second); code != 4 {
		t.Errorf("the continued first serve: exit %d, want 4\n%s", code, lastLines(first.stderr.String()))
	}
	if !strings.Contains(first.stderr.String(), "this process stops") {
		t.Errorf("the first serve does not say why it stops:\n%s", lastLines(first.stderr.String()))
	}
	if got := pgInt(t, s.db, `SELECT pages FROM sync_runs WHERE run_id = $1`, run); got != pages {
		t.Errorf("the paused run's pages went from %d to %d after the take-over: a fenced replica wrote", pages, got)
	}
	if n := pgInt(t, s.db, `SELECT count(*) FROM sync_runs WHERE run_id = $1 AND status = 'abandoned'`, run); n != 1 {
		t.Errorf("the paused run is no longer abandoned")
	}
	before := pgInt(t, s.db, `SELECT count(*) FROM sync_runs WHERE status = 'succeeded'`)
	pollUntil(t, 60*time.Second, "a successful run by the second serve", func() bool {
		return pgInt(t, s.db, `SELECT count(*) FROM sync_runs WHERE status = 'succeeded'`) > before
	}, second)
	stopDaemon(t, second)
	assertPostgresTruth(t, s.db, s.ups["c1"].Server, "c1")
}
