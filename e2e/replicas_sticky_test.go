//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
	"github.com/jackc/pgx/v5"
)

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

	s.checkSteadyState(t, all, addr1, addr2)

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
	unhealthy := map[string]int{}
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

// checkSteadyState polls the /healthz of addrs every 200 ms for about 15 s
// and checks that each account ran only on its lease holder and asked for
// no new token.
func (s *replicaSetup) checkSteadyState(t *testing.T, all []*bgProc, addrs ...string) {
	t.Helper()
	// Steady state: ~15 s of /healthz every 200 ms on both replicas.
	settled := pgLeases(t, s.db)
	var lastRun int64
	if err := s.db.QueryRow(t.Context(), `SELECT max(run_id) FROM sync_runs`).Scan(&lastRun); err != nil {
		t.Fatal(err)
	}
	tokens := s.tokenRequests()
	unhealthy := map[string]int{}
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		for _, addr := range addrs {
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
}
