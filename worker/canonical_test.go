package worker

import (
	"bytes"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/sim"
)

// queryDB runs a one-value query on the warehouse file at path.
func queryDB(t *testing.T, path, q string, dst any) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRowContext(t.Context(), q).Scan(dst); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestShuffledMembersAddNoVersions: a server that sends every card with its
// members in another order on every read (shuffle-members) changes no
// card: 5 runs of 40 cards make 40 versions, and no run after the first
// counts a card changed.
func TestShuffledMembersAddNoVersions(t *testing.T) {
	f := newFixture(t, sim.Options{Cards: 40, Seed: 7, OddData: true,
		Faults: []sim.Fault{{Endpoint: sim.EndpointCards, Kind: sim.FaultShuffleMembers}}})
	var new int
	for run := 1; run <= 5; run++ {
		res, err := f.job.Run(t.Context(), TriggerSchedule, Options{})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		new += res.New
		if run > 1 && res.Changed != 0 {
			t.Errorf("run %d: %d cards changed, want 0 (only their member order did)", run, res.Changed)
		}
	}
	st, err := f.wh.Summary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.CardVersions != int64(new) || new < 40 {
		t.Errorf("%d card_versions rows for %d cards, want one each", st.CardVersions, new)
	}
	if got := f.srv.Stats().Faults; got < 5 {
		t.Errorf("the fault was applied %d times, want every page of every run", got)
	}
}

// TestAccountDuplicateKeysAgree: an account body with a key twice
// ("balance":"1.00" ... "balance":"2.00") is read the same way by the
// decoded columns and the stored raw: the last one wins in both.
func TestAccountDuplicateKeysAgree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	f := newFixtureAt(t, path, "", sim.Options{Cards: 5})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if r.URL.Path == "/account" && bytes.HasPrefix(body, []byte(`{"data":{`)) && bytes.HasSuffix(body, []byte(`}}`)) {
			body = bytes.Join([][]byte{[]byte(`{"data":{"balance":"1.00",`), body[len(`{"data":{`) : len(body)-2], []byte(`,"balance":"2.00"}}`)}, nil)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
	t.Cleanup(ts.Close)
	c, err := extract.New(extract.Config{BaseURL: ts.URL, Email: sim.DefaultEmail, Password: sim.DefaultPassword,
		RateLimit: extract.Rate{N: 10000, Per: time.Second}, AuthRateLimit: extract.Rate{N: 100, Per: time.Second},
		Timeout: 5 * time.Second, MaxWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f.job.Client = c
	if _, err := f.job.Run(t.Context(), TriggerSchedule, Options{}); err != nil {
		t.Fatal(err)
	}
	var minor int64
	var raw string
	queryDB(t, path, `SELECT balance_minor FROM account_snapshots`, &minor)
	queryDB(t, path, `SELECT raw FROM account_snapshots`, &raw)
	if minor != 200 || !bytes.Contains([]byte(raw), []byte(`"balance":"2.00"`)) || bytes.Contains([]byte(raw), []byte(`"1.00"`)) {
		t.Errorf("balance_minor %d, raw %s: want both to read the last balance, 2.00", minor, raw)
	}
}

// TestSecretsInDataStoredRedacted: the password and the client's token,
// served inside cards, a rejected item and the account (secrets-in-data),
// are stored as [REDACTED] and counted; the items are kept.
func TestSecretsInDataStoredRedacted(t *testing.T) {
	const password = "hunter2-correct-horse"
	path := filepath.Join(t.TempDir(), "w.db")
	srv := sim.New(sim.Options{Cards: 20, Password: password, Window: time.Second, Limit: 10000, AuthLimit: 100,
		Faults: []sim.Fault{{Kind: sim.FaultSecretsInData}}})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	secrets := &redact.Secrets{}
	client, err := extract.New(extract.Config{BaseURL: ts.URL, Email: sim.DefaultEmail, Password: password, Secrets: secrets,
		RateLimit: extract.Rate{N: 10000, Per: time.Second}, AuthRateLimit: extract.Rate{N: 100, Per: time.Second},
		Timeout: 5 * time.Second, MaxWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := sqlite.OpenLock(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	wh, err := sqlite.Open(t.Context(), path, load.Options{Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	job := &Job{Client: client, Warehouse: wh, Lock: lock, Version: "test"}
	res, err := job.Run(t.Context(), TriggerSchedule, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.New != 20 || res.Rejected < 2 {
		t.Errorf("run %+v: want the 20 cards kept and an item rejected on each page", res)
	}
	runs, err := wh.Runs(t.Context(), 1)
	if err != nil || len(runs) != 1 || runs[0].SecretsRedacted < 5 {
		t.Fatalf("runs %+v, %v: want secrets_redacted counting the values and keys replaced", runs, err)
	}
	wh.Close()
	data := readAll(t, path)
	for _, s := range []string{password, "hunter2-", "correct-horse"} {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("the warehouse holds %q", s)
		}
	}
	if !bytes.Contains(data, []byte(redact.Redacted)) {
		t.Errorf("the warehouse holds no %s: the data was not stored", redact.Redacted)
	}
}

// readAll returns the warehouse file and its -wal, if any.
func readAll(t *testing.T, path string) []byte {
	t.Helper()
	var out []byte
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}
