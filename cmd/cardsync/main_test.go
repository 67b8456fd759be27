package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/sim"
)

// env is a test environment for Main.
type env struct {
	t    *testing.T
	vars map[string]string
	db   string
}

// newEnv starts a simulator over real HTTP on loopback and returns the
// simulator and an environment pointing cardsync at it.
func newEnv(t *testing.T, opts sim.Options) (*sim.Server, *env) {
	t.Helper()
	if opts.Window == 0 {
		opts.Window = time.Second
		opts.Limit = 1000
		opts.AuthLimit = 100
	}
	srv := sim.New(opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	db := filepath.Join(t.TempDir(), "warehouse.db")
	e := &env{t: t, db: db, vars: map[string]string{
		"CARDSYNC_API_BASE_URL":        ts.URL,
		"CARDSYNC_API_EMAIL":           sim.DefaultEmail,
		"CARDSYNC_API_PASSWORD":        sim.DefaultPassword,
		"CARDSYNC_API_RATE_LIMIT":      "1000/1s",
		"CARDSYNC_API_AUTH_RATE_LIMIT": "100/1s",
		"CARDSYNC_API_MAX_WAIT":        "5s",
		"CARDSYNC_API_TIMEOUT":         "5s",
		"CARDSYNC_WAREHOUSE_PATH":      db,
		"CARDSYNC_LOG_FORMAT":          "json",
		"CARDSYNC_LOG_LEVEL":           "debug",
	}}
	return srv, e
}

// run runs cardsync in-process and returns its exit code and output.
func (e *env) run(ctx context.Context, args ...string) (int, string, string) {
	var stdout, stderr syncBuffer
	m := &Main{
		Stdin:   strings.NewReader(""),
		Stdout:  &stdout,
		Stderr:  &stderr,
		Getenv:  func(k string) string { return e.vars[k] },
		Environ: e.environ,
	}
	code := m.Run(ctx, args)
	return code, stdout.String(), stderr.String()
}

// environ is the environment the commands see, as KEY=VALUE.
func (e *env) environ() []string {
	var out []string
	for k, v := range e.vars {
		out = append(out, k+"="+v)
	}
	return out
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// canonicalJSON decodes JSON without float64 so documents compare by value.
func canonicalJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// assertMatchesTruth checks the invariants against the simulator: every
// listed card present with its latest content, no others current, no
// duplicates, and the last account snapshot equal to the account.
func assertMatchesTruth(t *testing.T, srv *sim.Server, path string) {
	t.Helper()
	db := openDB(t, path)
	rows, err := db.Query(`SELECT card_id, data FROM cards WHERE removed_at IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for rows.Next() {
		var id string
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			t.Fatal(err)
		}
		if _, dup := got[id]; dup {
			t.Errorf("card %s twice", id)
		}
		got[id] = data
	}
	rows.Close()
	truth := srv.Cards()
	if len(got) != len(truth) {
		t.Errorf("warehouse has %d current cards, simulator %d", len(got), len(truth))
	}
	for _, c := range truth {
		data, ok := got[c.ID]
		if !ok {
			t.Errorf("card %s lost", c.ID)
			continue
		}
		if !reflect.DeepEqual(canonicalJSON(t, data), canonicalJSON(t, c.JSON())) {
			t.Errorf("card %s content:\n got %s\nwant %s", c.ID, data, c.JSON())
		}
	}
	var integrity string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Errorf("integrity_check = %q, %v", integrity, err)
	}

	acct := srv.Account()
	amounts := []struct {
		col  string
		want *string
	}{
		{"transfer_amount", acct.TransferAmount}, {"reach_amount", acct.ReachAmount},
		{"authorizations", acct.Authorizations}, {"balance", acct.Balance},
		{"cards_balance", acct.CardsBalance}, {"available_recharge_balance", acct.AvailableRechargeBalance},
	}
	for _, a := range amounts {
		var gotText sql.NullString
		q := fmt.Sprintf(`SELECT %s FROM account_balances ORDER BY snapshot_id DESC LIMIT 1`, a.col)
		if err := db.QueryRow(q).Scan(&gotText); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if a.want == nil {
			if gotText.Valid {
				t.Errorf("account %s = %q, want NULL", a.col, gotText.String)
			}
			continue
		}
		want, err := money.Parse(*a.want, 2)
		if err != nil {
			t.Fatalf("simulator amount %s = %q: %v", a.col, *a.want, err)
		}
		if !gotText.Valid || gotText.String != want.String() {
			t.Errorf("account %s = %v, want %q", a.col, gotText, want.String())
		}
	}
}

func TestBackfillEqualsTruthAndRerunRewritesNothing(t *testing.T) {
	srv, e := newEnv(t, sim.Options{Seed: 3, Cards: 95, IncludePAN: true, ExtraFields: true})
	code, out, errOut := e.run(t.Context(), "backfill")
	if code != 0 {
		t.Fatalf("backfill exit %d\n%s\n%s", code, out, errOut)
	}
	// The simulator's cards carry full PANs and CVVs; the warehouse must not.
	assertRedacted(t, e.db)
	if !strings.Contains(out, "95 cards (95 new") {
		t.Errorf("summary %q, want 95 new cards", out)
	}

	db := openDB(t, e.db)
	var versionsBefore int
	db.QueryRow(`SELECT count(*) FROM card_versions`).Scan(&versionsBefore)
	code, out, errOut = e.run(t.Context(), "backfill")
	if code != 0 {
		t.Fatalf("second backfill exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "95 cards (0 new, 0 changed, 0 returned, 95 unchanged), 0 removed") {
		t.Errorf("second run summary %q, want everything unchanged", out)
	}
	var versionsAfter int
	db.QueryRow(`SELECT count(*) FROM card_versions`).Scan(&versionsAfter)
	if versionsAfter != versionsBefore {
		t.Errorf("card_versions %d -> %d after a run with no upstream change", versionsBefore, versionsAfter)
	}
	if st := srv.Stats(); st.TokenRequests != 2 {
		t.Errorf("token requests = %d, want 2 (one per process run)", st.TokenRequests)
	}
}

// assertRedacted checks no full card number or CVV reached the file.
func assertRedacted(t *testing.T, path string) {
	t.Helper()
	db := openDB(t, path)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM cards WHERE data LIKE '%"cvv"%' OR json_extract(data, '$.card_number') NOT LIKE '%*%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d cards still carry a cvv or an unmasked card_number", n)
	}
}

func TestChangesShowUpInCardsAndVersions(t *testing.T) {
	srv, e := newEnv(t, sim.Options{Seed: 5, Cards: 40})
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill exit %d\n%s\n%s", code, out, errOut)
	}
	cards := srv.Cards()
	changed, removed := cards[3].ID, cards[17].ID
	srv.UpdateCard(changed)
	srv.RemoveCard(removed)
	added := srv.AddCard().ID
	code, out, errOut := e.run(t.Context(), "backfill")
	if code != 0 {
		t.Fatalf("backfill exit %d\n%s\n%s", code, out, errOut)
	}
	// One walk missing a card is not proof it is gone: it is pending.
	if !strings.Contains(out, "(1 new, 1 changed, 0 returned, 38 unchanged), 0 removed") ||
		!strings.Contains(out, "1 card not listed; marked removed if the next walk also misses it") {
		t.Errorf("summary %q, want 1 new, 1 changed, 0 removed, 1 card pending", out)
	}
	db := openDB(t, e.db)
	var removedAt sql.NullString
	var pending string
	db.QueryRow(`SELECT removed_at FROM cards WHERE card_id = ?`, removed).Scan(&removedAt)
	db.QueryRow(`SELECT group_concat(card_id) FROM removal_pending`).Scan(&pending)
	if removedAt.Valid || pending != removed {
		t.Errorf("after one walk missing card %s: removed_at %v, pending %q; want NULL and pending", removed, removedAt, pending)
	}
	code, out, _ = e.run(t.Context(), "status")
	if code != 0 || !strings.Contains(out, "pending    1 card missing from the last walk; removed if the next walk misses it too") {
		t.Errorf("status text (exit %d) does not show the pending removal:\n%s", code, out)
	}

	// The next walk misses it too: removed.
	code, out, errOut = e.run(t.Context(), "backfill")
	if code != 0 {
		t.Fatalf("backfill exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "(0 new, 0 changed, 0 returned, 40 unchanged), 1 removed") || strings.Contains(out, "not listed") {
		t.Errorf("summary %q, want 40 unchanged, 1 removed, nothing pending", out)
	}
	assertMatchesTruth(t, srv, e.db)
	db.QueryRow(`SELECT removed_at FROM cards WHERE card_id = ?`, removed).Scan(&removedAt)
	if !removedAt.Valid {
		t.Errorf("card %s removed upstream but removed_at is NULL after two walks", removed)
	}
	var versions int
	db.QueryRow(`SELECT count(*) FROM card_versions WHERE card_id = ?`, changed).Scan(&versions)
	if versions != 2 {
		t.Errorf("changed card has %d versions, want 2", versions)
	}
	var change string
	db.QueryRow(`SELECT change FROM card_versions WHERE card_id = ? AND valid_to IS NULL`, removed).Scan(&change)
	if change != "removed" {
		t.Errorf("removed card's current version is %q, want a closing 'removed' version", change)
	}
	var addedRows int
	db.QueryRow(`SELECT count(*) FROM cards WHERE card_id = ? AND removed_at IS NULL`, added).Scan(&addedRows)
	if addedRows != 1 {
		t.Errorf("added card %s not current", added)
	}

	// status reads it back without a password.
	delete(e.vars, "CARDSYNC_API_PASSWORD")
	code, out, errOut = e.run(t.Context(), "status", "-json")
	if code != 0 {
		t.Fatalf("status exit %d\n%s\n%s", code, out, errOut)
	}
	var doc struct {
		Accounts []struct {
			Cards struct {
				Total           int64 `json:"total"`
				Current         int64 `json:"current"`
				PendingRemovals int64 `json:"pending_removals"`
			} `json:"cards"`
			LastWalk struct {
				Consistent *bool `json:"consistent"`
			} `json:"last_walk"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Accounts) != 1 {
		t.Fatalf("status -json: %v\n%s", err, out)
	}
	st := doc.Accounts[0]
	if st.Cards.Total != 41 || st.Cards.Current != 40 || st.Cards.PendingRemovals != 0 || st.LastWalk.Consistent == nil || !*st.LastWalk.Consistent {
		t.Errorf("status = %+v, want 41 cards, 40 current, 0 pending, consistent walk", st)
	}
	code, out, _ = e.run(t.Context(), "status")
	if code != 0 || !strings.Contains(out, "last success") || !strings.Contains(out, "complete and consistent") {
		t.Errorf("status text (exit %d):\n%s", code, out)
	}
}

// TestCheckScrubsUpstreamText: an account resource that carries the
// password and the bearer token (in its name) is read by check, whose
// findings never print either.
func TestCheckScrubsUpstreamText(t *testing.T) {
	const pw = "Sup3rS3cretPassw0rd!"
	_, e := newEnv(t, sim.Options{Seed: 1, Cards: 3, Password: pw, Faults: []sim.Fault{{Kind: sim.FaultSecretsInData, Endpoint: "account"}}})
	e.vars["CARDSYNC_API_PASSWORD"] = pw
	code, out, errOut := e.run(t.Context(), "check")
	if code != 0 || !strings.Contains(out, "account ") {
		t.Fatalf("check exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, pw) || strings.Contains(out+errOut, "eyJ") {
		t.Errorf("check printed the password or a token:\n%s\n%s", out, errOut)
	}
	if !strings.Contains(out, "[REDACTED]") {
		t.Errorf("the account name lost its secrets without a trace:\n%s", out)
	}
}

func TestCheck(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		_, e := newEnv(t, sim.Options{Seed: 1, Cards: 3})
		code, out, errOut := e.run(t.Context(), "check")
		if code != 0 || !strings.Contains(out, "authenticated") || !strings.Contains(out, "does not exist yet") {
			t.Errorf("check exit %d\n%s\n%s", code, out, errOut)
		}
		if _, err := os.Stat(e.db); err == nil {
			t.Errorf("check created the warehouse")
		}
	})
	tests := []struct {
		name     string
		mutate   func(e *env)
		args     []string
		faults   []sim.Fault
		wantCode int
		wantErr  string
	}{
		{name: "bad password", mutate: func(e *env) { e.vars["CARDSYNC_API_PASSWORD"] = "wrong-canary-pw" }, wantCode: exitAuth, wantErr: "authenticate"},
		{name: "wrong host", mutate: func(e *env) { e.vars["CARDSYNC_API_BASE_URL"] = "http://127.0.0.1:1" }, wantCode: exitUnavailable, wantErr: "127.0.0.1:1"},
		// -timeout ends the retries before api.max_wait does: the exit
		// code and the message still give the cause.
		{name: "dead API past -timeout", mutate: func(e *env) {
			e.vars["CARDSYNC_API_BASE_URL"] = "http://127.0.0.1:1"
			e.vars["CARDSYNC_API_MAX_WAIT"] = "5m"
		}, args: []string{"-timeout", "1s"}, wantCode: exitUnavailable, wantErr: "connection refused"},
		// A truncated /account to the end of the retries is an answer
		// cardsync refuses (7), not unavailability (5).
		{name: "truncated account", mutate: func(e *env) {}, faults: []sim.Fault{{Endpoint: sim.EndpointAccount, Kind: sim.FaultTruncate}},
			wantCode: exitBadData, wantErr: "truncated"},
		// An API that does not answer within -timeout is unavailable.
		{name: "slow API past -timeout", mutate: func(e *env) { e.vars["CARDSYNC_API_MAX_WAIT"] = "5m" },
			faults: []sim.Fault{{Endpoint: sim.EndpointAccount, Kind: sim.FaultLatency, Latency: 50 * time.Second}},
			args:   []string{"-timeout", "1s"}, wantCode: exitUnavailable, wantErr: "check gave up after -timeout 1s"},
		{name: "bad config", mutate: func(e *env) { e.vars["CARDSYNC_API_RATE_LIMIT"] = "lots" }, wantCode: exitConfig, wantErr: "api.rate_limit"},
		{name: "remote http", mutate: func(e *env) { e.vars["CARDSYNC_API_BASE_URL"] = "http://api.example.com" }, wantCode: exitConfig, wantErr: "loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := newEnv(t, sim.Options{Seed: 1, Cards: 3, Faults: tt.faults})
			e.vars["CARDSYNC_API_MAX_WAIT"] = "1s"
			tt.mutate(e)
			code, out, errOut := e.run(t.Context(), append([]string{"check"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tt.wantCode, out, errOut)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q, want it to mention %q", errOut, tt.wantErr)
			}
			if strings.Contains(errOut+out, "wrong-canary-pw") {
				t.Errorf("the password leaked into the output")
			}
			if _, err := os.Stat(e.db); err == nil {
				t.Errorf("check created the warehouse")
			}
		})
	}
}

// TestServeNotifiesSystemd runs serve with a NOTIFY_SOCKET and checks the
// sd_notify messages: READY=1 after start-up, STATUS= lines, WATCHDOG=1
// pings at half of WATCHDOG_USEC, and STOPPING=1 on shutdown.
func TestServeNotifiesSystemd(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 9, Cards: 20})
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	e.vars["NOTIFY_SOCKET"] = sock
	e.vars["WATCHDOG_USEC"] = "200000" // pings every 100ms
	e.vars["CARDSYNC_SCHEDULE_CRON"] = "@every 1h"
	msgs := make(chan string, 100)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(msgs)
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		code, _, _ := e.run(ctx, "serve")
		done <- code
	}()
	seen := map[string]bool{}
	deadline := time.After(20 * time.Second)
	want := []string{"READY=1", "WATCHDOG=1", "STATUS=last run 1 succeeded"}
	for !(seen[want[0]] && seen[want[1]] && seen[want[2]]) {
		select {
		case m := <-msgs:
			for _, w := range want {
				if strings.HasPrefix(m, w) {
					seen[w] = true
				}
			}
		case <-deadline:
			cancel()
			t.Fatalf("notify messages seen %v, want %v", seen, want)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d", code)
	}
	for {
		select {
		case m := <-msgs:
			if m == "STOPPING=1" {
				return
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no STOPPING=1 after shutdown")
		}
	}
}
