//go:build e2e

package e2e

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// outcome is what a fault must lead to.
type outcome int

const (
	// recovers: the backfill retries (or refreshes, or just waits) and
	// completes equal to the truth.
	recovers outcome = iota + 1
	// refuses: the run fails with an exit code and message; a warehouse
	// pre-filled by a clean run keeps its content and its checkpoint stays
	// at or before the faulty page; the next clean run converges.
	refuses
	// flagsInconsistent: the run completes but its walk is not trusted: no
	// card is marked removed or made pending; the next quiet run makes the
	// card removed upstream pending and the one after marks it removed.
	flagsInconsistent
)

// foreignOrigin is a second server that links.next may point at. It must
// never receive anything, in particular no bearer token.
type foreignOrigin struct {
	URL      string
	requests atomic.Int64
	auth     atomic.Int64
}

func newForeignOrigin(t *testing.T) *foreignOrigin {
	t.Helper()
	f := &foreignOrigin{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if r.Header.Get("Authorization") != "" {
			f.auth.Add(1)
		}
		http.Error(w, "foreign", http.StatusTeapot)
	}))
	t.Cleanup(ts.Close)
	f.URL = ts.URL
	return f
}

// runRow is one sync_runs row.
type runRow struct {
	ID             int64
	Status         string
	Pages          int64
	Requests       int64
	Retries        int64
	RateLimited    int64
	AuthRequests   int64
	WalkConsistent sql.NullInt64
	Error          string
}

func lastRun(t *testing.T, path string) runRow {
	t.Helper()
	db := openRO(t, path)
	var r runRow
	err := db.QueryRow(`SELECT run_id, status, pages, requests, retries, rate_limited, auth_requests, walk_consistent, coalesce(error, '')
		FROM sync_runs ORDER BY run_id DESC LIMIT 1`).
		Scan(&r.ID, &r.Status, &r.Pages, &r.Requests, &r.Retries, &r.RateLimited, &r.AuthRequests, &r.WalkConsistent, &r.Error)
	if err != nil {
		t.Fatalf("last run: %v", err)
	}
	return r
}

// statusJSON is the part of `cardsync status -json` the tests read: the
// first account of the document.
type statusJSON struct {
	Healthy bool `json:"healthy"`
	Runs    []struct {
		ID             int64  `json:"run_id"`
		Status         string `json:"status"`
		Retries        int64  `json:"retries"`
		RateLimited    int64  `json:"rate_limited"`
		AuthRequests   int64  `json:"auth_requests"`
		WalkConsistent *bool  `json:"walk_consistent"`
		Error          string `json:"error"`
	} `json:"runs"`
	Checkpoint struct {
		NextPage   int  `json:"next_page"`
		InProgress bool `json:"in_progress"`
	} `json:"checkpoint"`
	Cards struct {
		Removed         int64 `json:"removed"`
		PendingRemovals int64 `json:"pending_removals"`
	} `json:"cards"`
	LastWalk struct {
		Consistent *bool `json:"consistent"`
	} `json:"last_walk"`
	RemovedCards       int64 `json:"-"`
	PendingRemovals    int64 `json:"-"`
	LastWalkConsistent *bool `json:"-"`
}

// status runs `status -json`: exit 0 when healthy, 1 when not, and the
// document must agree.
func (d *deployment) status(t *testing.T) statusJSON {
	t.Helper()
	code, out, errOut := d.run("status", "-json")
	if code != 0 && code != 1 {
		t.Fatalf("status -json exit %d: %s", code, errOut)
	}
	var doc struct {
		SchemaVersion int          `json:"schema_version"`
		Healthy       bool         `json:"healthy"`
		Accounts      []statusJSON `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("decode status -json: %v\n%s", err, out)
	}
	if doc.SchemaVersion != 1 || len(doc.Accounts) != 1 || doc.Healthy != (code == 0) || doc.Accounts[0].Healthy != doc.Healthy {
		t.Fatalf("status -json: schema_version %d, %d accounts, healthy %v with exit %d\n%s", doc.SchemaVersion, len(doc.Accounts), doc.Healthy, code, out)
	}
	st := doc.Accounts[0]
	if len(st.Runs) == 0 {
		t.Fatalf("status -json lists no runs:\n%s", out)
	}
	st.RemovedCards, st.PendingRemovals, st.LastWalkConsistent = st.Cards.Removed, st.Cards.PendingRemovals, st.LastWalk.Consistent
	return st
}

// backfillOK runs a backfill that must succeed.
func (d *deployment) backfillOK(t *testing.T) string {
	t.Helper()
	code, out, errOut := d.run("backfill")
	if code != 0 {
		t.Fatalf("backfill exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	return out
}

func removedCards(t *testing.T, path string) []string {
	t.Helper()
	return cardIDs(t, path, `SELECT card_id FROM cards WHERE removed_at IS NOT NULL ORDER BY card_id`)
}

// pendingCards lists the cards awaiting removal confirmation: missed by the
// last complete, consistent walk, still current.
func pendingCards(t *testing.T, path string) []string {
	t.Helper()
	return cardIDs(t, path, `SELECT card_id FROM removal_pending ORDER BY card_id`)
}

func cardIDs(t *testing.T, path, query string) []string {
	t.Helper()
	db := openRO(t, path)
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// faultCase is one fault scenario of TestFaults.
type faultCase struct {
	name   string
	cards  int
	env    map[string]string
	faults []sim.Fault
	want   outcome
	// recovers
	wantRetries       bool   // retries > 0 in status -json and sync_runs
	wantRateLimited   bool   // rate_limited > 0
	wantTokenRequests int64  // exact token requests of the faulty run, 0 = not checked
	wantWarn          string // a warn line the run logs, once
	// refuses
	wantCode int
	wantErr  string // in stderr and sync_runs.error
	failPage int    // the page the fault hits: nothing from it is committed
}

// faultCases are the fault scenarios; links.next faults point at foreign.
func faultCases(foreign *foreignOrigin) []faultCase {
	return []faultCase{
		{name: "5xx with Retry-After", cards: 60, want: recovers, wantRetries: true,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultStatus, Status: 503, RetryAfter: time.Second, Pages: []int{2}, Times: 1}}},
		{name: "5xx without Retry-After", cards: 60, want: recovers, wantRetries: true,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultStatus, Status: 500, Pages: []int{3}, Times: 2}}},
		{name: "5xx on the account", cards: 30, want: recovers, wantRetries: true,
			faults: []sim.Fault{{Endpoint: "account", Kind: sim.FaultStatus, Status: 502, Times: 1}}},
		{name: "HTML 502", cards: 60, want: recovers, wantRetries: true,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultHTML, Pages: []int{2}, Times: 1}}},
		{name: "connection reset", cards: 60, want: recovers, wantRetries: true,
			// Two resets: net/http may replay an idempotent GET once by
			// itself on a reused connection, which cardsync never sees.
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultReset, Pages: []int{2}, Times: 2}}},
		{name: "truncated body", cards: 60, want: recovers, wantRetries: true,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultTruncate, Pages: []int{3}, Times: 1}}},
		{name: "latency under the timeout", cards: 60, want: recovers,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultLatency, Latency: 300 * time.Millisecond, Pages: []int{2, 3}}}},
		{name: "latency past the timeout", cards: 60, want: recovers, wantRetries: true,
			env:    map[string]string{"CARDSYNC_API_TIMEOUT": "1s"},
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultLatency, Latency: 3 * time.Second, Pages: []int{2}, Times: 1}}},
		{name: "trickle body past the timeout", cards: 60, want: recovers, wantRetries: true,
			// 16 bytes every 50ms: a page of several KiB would take
			// seconds; only the whole-attempt deadline stops it.
			env:    map[string]string{"CARDSYNC_API_TIMEOUT": "1s"},
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultTrickle, Chunk: 16, Latency: 50 * time.Millisecond, Pages: []int{2}, Times: 1}}},
		{name: "429 storm", cards: 60, want: recovers, wantRetries: true, wantRateLimited: true,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultRateLimit, Times: 2}}},
		{name: "429 with Retry-After", cards: 60, want: recovers, wantRetries: true, wantRateLimited: true,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultRateLimit, RetryAfter: time.Second, Pages: []int{2}, Times: 1}}},
		{name: "token revoked mid-walk", cards: 60, want: recovers, wantTokenRequests: 2,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultRevoke, Pages: []int{3}, Times: 1}}},
		{name: "links [] on a one-page account", cards: 10, want: recovers,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultLinksArray}}},
		{name: "persistent 5xx past max_wait", cards: 60, want: refuses,
			env:      map[string]string{"CARDSYNC_API_MAX_WAIT": "2s"},
			faults:   []sim.Fault{{Endpoint: "cards", Kind: sim.FaultStatus, Status: 503, Pages: []int{3}}},
			wantCode: 5, wantErr: "gave up after", failPage: 3},
		// links.next is read only for its page number: another origin (a
		// TLS proxy writing http:// links, a foreign host) and a link back
		// to page 1 are warnings, never requests, never errors.
		{name: "foreign links.next", cards: 60, want: recovers, wantWarn: "links.next names another origin",
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultForeignNext, URL: foreign.URL, Pages: []int{2, 3}}}},
		{name: "links.next loop", cards: 60, want: recovers, wantWarn: "links.next does not name the next page",
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultLoopNext, LoopTo: 1, Pages: []int{3}}}},
		{name: "total_pages beyond api.max_pages", cards: 60, want: refuses,
			faults:   []sim.Fault{{Endpoint: "cards", Kind: sim.FaultTotalChange, TotalDelta: 2_000_000}},
			wantCode: 7, wantErr: "more than api.max_pages 100000", failPage: 1},
		{name: "oversized body", cards: 60, want: refuses,
			env:      map[string]string{"CARDSYNC_API_MAX_BODY_BYTES": "65536"},
			faults:   []sim.Fault{{Endpoint: "cards", Kind: sim.FaultOversize, PadBytes: 200_000, Pages: []int{2}}},
			wantCode: 7, wantErr: "exceeds the limit of 65536 bytes", failPage: 2},
		{name: "total changing mid-walk", cards: 60, want: flagsInconsistent,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultTotalChange, TotalDelta: 7, Pages: []int{2}, Times: 1}}},
		// The envelope: the same data in another wrapping is read, with
		// no retry; a 204 or a redirect is refused at once.
		{name: "links in every shape", cards: 80, want: recovers,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultLinksShapes}}},
		{name: "UTF-8 BOM before every body", cards: 60, want: recovers,
			faults: []sim.Fault{{Kind: sim.FaultBOM}}},
		{name: "JSON as text/plain or without a Content-Type", cards: 60, want: recovers,
			faults: []sim.Fault{{Kind: sim.FaultContentType}}},
		{name: "100,000-deep meta sibling", cards: 60, want: recovers,
			faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultDeepMeta}}},
		{name: "204 No Content", cards: 60, want: refuses,
			faults:   []sim.Fault{{Endpoint: "cards", Kind: sim.FaultNoContent, Pages: []int{2}}},
			wantCode: 7, wantErr: "204 No Content", failPage: 2},
		{name: "redirect on the same origin", cards: 60, want: refuses,
			faults:   []sim.Fault{{Endpoint: "cards", Kind: sim.FaultRedirect, Pages: []int{2}}},
			wantCode: 7, wantErr: "redirect refused: status 302 to /login on the same origin", failPage: 2},
		{name: "redirect to another origin", cards: 60, want: refuses,
			faults:   []sim.Fault{{Endpoint: "cards", Kind: sim.FaultRedirect, URL: foreign.URL + "/cards?page=2", Pages: []int{2}}},
			wantCode: 7, wantErr: "redirect refused: status 302 to another origin", failPage: 2},
	}
}

// TestFaults runs the binary against every simulator fault and checks the
// outcome the fault warrants.
func TestFaults(t *testing.T) {
	foreign := newForeignOrigin(t)
	runFaultCases(t, toSQLite, faultCases(foreign))
	t.Cleanup(func() {
		if n, a := foreign.requests.Load(), foreign.auth.Load(); n != 0 || a != 0 {
			t.Errorf("the foreign origin received %d requests, %d with Authorization", n, a)
		}
	})
}

// runFaultCases runs each case, in parallel, against a deployment to dest.
// Besides each case's outcome, no request is refused by the simulator's
// rate limiters: every 429 the binary meets is an injected one.
func runFaultCases(t *testing.T, dest destination, cases []faultCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, sim.Options{Seed: 21, Cards: tc.cards})
			d := newDeploymentTo(t, up, dest)
			for k, v := range tc.env {
				d.env[k] = v
			}
			var before string
			var goneID string
			switch tc.want {
			case refuses:
				d.backfillOK(t)
				assertTruth(t, up, d.db)
				// Change a card on the faulty page: the failing run must
				// not store it, the next clean run must.
				ids := up.Cards()
				if !up.UpdateCard(ids[(tc.failPage-1)*15].ID) {
					t.Fatal("update card")
				}
				before = contentHash(t, d.db)
			case flagsInconsistent:
				d.backfillOK(t)
				goneID = up.Cards()[5].ID
				if !up.RemoveCard(goneID) {
					t.Fatal("remove card")
				}
			}
			for _, f := range tc.faults {
				up.InjectFault(f)
			}
			tokensBefore := up.Stats().TokenRequests
			code, out, errOut := d.run("backfill")
			tokenRequests := up.Stats().TokenRequests - tokensBefore
			if up.Stats().Faults == 0 {
				t.Fatal("no fault was applied: the scenario tests nothing")
			}
			if st := up.Stats(); st.General.Rejected != 0 || st.Auth.Rejected != 0 {
				t.Errorf("the simulator's limiters refused %d requests and %d token requests: cardsync's pacing let 429s through", st.General.Rejected, st.Auth.Rejected)
			}
			switch tc.want {
			case recovers:
				if code != 0 {
					t.Fatalf("backfill exit %d, want 0\nstdout: %s\nstderr: %s", code, out, errOut)
				}
				assertTruth(t, up, d.db)
				run := lastRun(t, d.db)
				st := d.status(t)
				if run.Status != "succeeded" || !run.WalkConsistent.Valid || run.WalkConsistent.Int64 != 1 {
					t.Errorf("run %d: status %s, walk_consistent %v; want succeeded, 1", run.ID, run.Status, run.WalkConsistent)
				}
				if tc.wantRetries && (run.Retries == 0 || st.Runs[0].Retries == 0) {
					t.Errorf("retries: sync_runs %d, status -json %d; want > 0", run.Retries, st.Runs[0].Retries)
				}
				if tc.wantRateLimited && (run.RateLimited == 0 || st.Runs[0].RateLimited == 0) {
					t.Errorf("rate_limited: sync_runs %d, status -json %d; want > 0", run.RateLimited, st.Runs[0].RateLimited)
				}
				if tc.wantTokenRequests > 0 {
					if tokenRequests != tc.wantTokenRequests || run.AuthRequests != tc.wantTokenRequests {
						t.Errorf("token requests: simulator %d, sync_runs %d; want %d", tokenRequests, run.AuthRequests, tc.wantTokenRequests)
					}
				}
				if tc.wantWarn != "" && strings.Count(errOut, tc.wantWarn) != 1 {
					t.Errorf("want one warn line %q:\n%s", tc.wantWarn, errOut)
				}
				t.Logf("exit 0: retries %d, rate limited %d, token requests %d, requests %d", run.Retries, run.RateLimited, run.AuthRequests, run.Requests)

			case refuses:
				checkRefused(t, tc, up, d, code, errOut, before)
			case flagsInconsistent:
				checkFlaggedInconsistent(t, up, d, code, out, errOut, goneID)
			}
		})
	}
}

// TestTokenExpiryDuringWalk runs the worker in-process with a clock shared
// with the simulator and makes the token expire, or be revoked, in the
// middle of a walk: exactly one refresh, never more than two token requests.
func TestTokenExpiryDuringWalk(t *testing.T) {
	cases := []struct {
		name             string
		midWalk          func(up *upstream, clk *sim.Clock)
		wantUnauthorized int64
	}{
		{name: "clock passes 24h", midWalk: func(_ *upstream, clk *sim.Clock) { clk.Advance(24*time.Hour + time.Minute) }},
		{name: "server revokes tokens", midWalk: func(up *upstream, _ *sim.Clock) { up.RevokeTokens() }, wantUnauthorized: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := sim.NewClock()
			up := newUpstream(t, sim.Options{Seed: 41, Cards: 120, Now: clk.Now}) // 8 pages
			up.OnPageServed(func(page int) {
				if page == 4 {
					tc.midWalk(up, clk)
				}
			})
			client, err := extract.New(extract.Config{
				BaseURL:       up.URL,
				Email:         sim.DefaultEmail,
				Password:      extract.Secret(sim.DefaultPassword),
				RateLimit:     extract.Rate{N: 1000, Per: time.Second},
				AuthRateLimit: extract.Rate{N: 100, Per: time.Second},
				Timeout:       5 * time.Second,
				MaxWait:       5 * time.Second,
				Clock:         clk,
			})
			if err != nil {
				t.Fatal(err)
			}
			path := t.TempDir() + "/warehouse.db"
			lock, err := sqlite.OpenLock(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Close()
			wh, err := sqlite.Open(t.Context(), path, load.Options{})
			if err != nil {
				t.Fatal(err)
			}
			job := &worker.Job{Client: client, Warehouse: wh, Lock: lock, Version: "e2e"}
			res, err := job.Run(t.Context(), worker.TriggerBackfill, worker.Options{})
			if cerr := wh.Close(); cerr != nil {
				t.Error(cerr)
			}
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			st := up.Stats()
			if st.TokenRequests != 2 || res.AuthRequests != 2 {
				t.Errorf("token requests: simulator %d, run %d; want exactly 2 (one refresh)", st.TokenRequests, res.AuthRequests)
			}
			if st.Unauthorized != tc.wantUnauthorized {
				t.Errorf("401 replies %d, want %d", st.Unauthorized, tc.wantUnauthorized)
			}
			if !res.WalkConsistent || res.Pages != 8 {
				t.Errorf("result: %d pages, consistent %v; want 8, true", res.Pages, res.WalkConsistent)
			}
			assertTruth(t, up, path)
		})
	}
}
