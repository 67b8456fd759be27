package contract

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/account"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/sim"
)

// rescanStore is what the rescan test needs of either warehouse.
type rescanStore interface {
	store
	load.Rescanner
	Close() error
}

// rescanBackend opens the same warehouse again and again, each time with
// other rules (options).
type rescanBackend struct {
	name  string
	open  func(t *testing.T, opts load.Options) rescanStore
	query func(t testing.TB, w rescanStore, q string) []string
	exec  func(t testing.TB, w rescanStore, q string)
}

func rescanBackends(t *testing.T) []rescanBackend {
	clk := sim.NewClock()
	path := filepath.Join(t.TempDir(), "w.db")
	out := []rescanBackend{{
		name: "sqlite",
		open: func(t *testing.T, opts load.Options) rescanStore {
			opts.Now = clk.Now
			w, err := sqlite.Open(t.Context(), path, opts)
			if err != nil {
				t.Fatal(err)
			}
			return w
		},
		query: func(t testing.TB, w rescanStore, q string) []string {
			t.Helper()
			return sqliteTexts(t, w.(*sqlite.Warehouse).DB(), q)
		},
		exec: func(t testing.TB, w rescanStore, q string) {
			t.Helper()
			if _, err := w.(*sqlite.Warehouse).DB().ExecContext(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		},
	}}
	if server != nil {
		url := server.NewDatabase(t)
		out = append(out, rescanBackend{
			name: "postgres",
			open: func(t *testing.T, opts load.Options) rescanStore {
				opts.Now = clk.Now
				w, err := postgres.Open(t.Context(), url, postgres.Options{Common: opts})
				if err != nil {
					t.Fatal(err)
				}
				return w
			},
			query: func(t testing.TB, w rescanStore, q string) []string {
				t.Helper()
				return pgQuery(t, w.(*postgres.Warehouse), q)
			},
			exec: func(t testing.TB, w rescanStore, q string) {
				t.Helper()
				if _, err := w.(*postgres.Warehouse).Pool().Exec(context.Background(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			},
		})
	}
	return out
}

// The secret and the code word the "newer rules" know and the older ones
// did not: the test stands for any rule change, whichever one a release
// makes, by giving the newer rules an extra key and a secret.
const (
	rescanSecret = "Pa55-w0rd-nobody-knew"
	rescanKey    = "vendorCheck"
)

func oldPage(n int) load.Page {
	p := load.Page{Stream: load.StreamCards, Number: 1, TotalPages: 1, TotalItems: n + 1,
		FetchedAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), Duration: time.Millisecond,
		BodySHA256: strings.Repeat("0", 64), Requests: 1}
	for i := range n {
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(1000 + i), Data: fmt.Appendf(nil,
			`{"id":%d,"status":"active","vendorCheck":"%03d","note":"set by %s","balance":"%d.50","nested":{"vendorCheck":"555"}}`,
			1000+i, i%1000, rescanSecret, i)})
	}
	p.Rejected = []load.Rejection{{Index: n, CardID: "r1", Reason: "odd item",
		Data: []byte(`{"id":"r1","vendorCheck":"777","x":"` + rescanSecret + `"}`)}}
	return p
}

// TestRescanCleansAnOlderWarehouse builds a warehouse "written by an older
// release" (rules without the extra key nor the secret), opens it with the
// newer rules, checks the warehouse says it predates them, kills a rescan
// after two batches, resumes it, and checks that nothing the newer rules
// remove is left, that hashes are what a walk computes, and that the same
// page walked again changes nothing.
func TestRescanCleansAnOlderWarehouse(t *testing.T) {
	for _, b := range rescanBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			const cards = 23
			writeOlderWarehouse(t, b, cards)

			// The newer rules.
			var secrets redact.Secrets
			secrets.Add(rescanSecret)
			opts := load.Options{RedactFields: []string{rescanKey}, Secrets: &secrets}
			policy := opts.Settings().Policy
			w := b.open(t, opts)
			defer w.Close()
			st, err := w.RulesState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Outdated() || st.Version != 1 {
				t.Fatalf("RulesState before = %+v, want version 1, outdated", st)
			}
			// Killed after two batches.
			kctx, cancel := context.WithCancel(ctx)
			batches := 0
			_, err = load.Rescan(kctx, w, load.RescanOptions{Policy: policy, Batch: 5, AfterBatch: func() {
				if batches++; batches == 2 {
					cancel()
				}
			}})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("killed rescan: %v, want context.Canceled", err)
			}
			st, _ = w.RulesState(ctx)
			if st.Rescan == nil || st.Version != 1 {
				t.Fatalf("after a killed rescan: %+v, want a checkpoint and version 1", st)
			}
			res, err := load.Rescan(ctx, w, load.RescanOptions{Policy: policy, Batch: 5})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Resumed || res.Version != redact.RulesVersion {
				t.Fatalf("Rescan = %+v, want resumed at version %d", res, redact.RulesVersion)
			}
			if res.Changed[load.PhaseCards]+10 < cards { // the first two batches did up to 10
				t.Errorf("changed %v, want most of %d cards", res.Changed, cards)
			}
			st, _ = w.RulesState(ctx)
			if st.Outdated() || st.Rescan != nil || st.RescannedAt.IsZero() {
				t.Fatalf("RulesState after = %+v, want current, no checkpoint", st)
			}
			checkNothingLeft(t, b, w)
			// The hash of every card is what a walk computes of the same
			// card: the same page again changes nothing.
			versions := len(b.query(t, w, `SELECT card_id FROM card_versions`))
			run2, err := w.StartRun(ctx, load.TriggerBackfill, "new")
			if err != nil {
				t.Fatal(err)
			}
			r, err := w.CommitPage(ctx, run2, oldPage(cards))
			if err != nil {
				t.Fatal(err)
			}
			if r.New != 0 || r.Changed != 0 || r.Unchanged != cards {
				t.Errorf("walk after rescan: %+v, want %d unchanged", r, cards)
			}
			if got := len(b.query(t, w, `SELECT card_id FROM card_versions`)); got != versions {
				t.Errorf("card_versions: %d rows, want %d (none added)", got, versions)
			}
			// A run of these rules keeps the version; a second rescan
			// changes nothing.
			res, err = load.Rescan(ctx, w, load.RescanOptions{Policy: policy})
			if err != nil || res.TotalChanged() != 0 {
				t.Errorf("second rescan: %+v, %v; want nothing changed", res, err)
			}
			st, _ = w.RulesState(ctx)
			if st.Version != redact.RulesVersion {
				t.Errorf("rules version %d after a run of the current rules, want %d", st.Version, redact.RulesVersion)
			}
		})
	}
}

// writeOlderWarehouse writes the warehouse "of the older release": a run
// with cards, an account snapshot and an error that hold the secret and
// the extra key, at rules version 1.
func writeOlderWarehouse(t *testing.T, b rescanBackend, cards int) {
	t.Helper()
	ctx := t.Context()
	old := b.open(t, load.Options{})
	run, err := old.StartRun(ctx, load.TriggerBackfill, "old")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.CommitPage(ctx, run, oldPage(cards)); err != nil {
		t.Fatal(err)
	}
	if err := old.SaveAccount(ctx, run, load.Account{Snapshot: account.Snapshot{Name: ptr("Acme " + rescanSecret)}, Raw: []byte(`{"name":"Acme","vendorCheck":"321"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := old.FinishRun(ctx, run, load.RunResult{Status: load.StatusFailed, Error: "upstream said " + rescanSecret}); err != nil {
		t.Fatal(err)
	}
	// A warehouse with rows at migration is at rules version 1.
	b.exec(t, old, `UPDATE rules_state SET rules_version = 1`)
	if got := strings.Join(b.query(t, old, `SELECT data FROM card_state ORDER BY card_id`), ""); !strings.Contains(got, rescanKey) || !strings.Contains(got, rescanSecret) {
		t.Fatalf("the older rules should have kept the code and the secret: %.200s", got)
	}
	old.Close()
}

// checkNothingLeft fails for every value of w that still holds the secret
// or the extra key.
func checkNothingLeft(t *testing.T, b rescanBackend, w rescanStore) {
	t.Helper()
	for _, q := range []string{
		`SELECT data FROM card_state`, `SELECT data FROM card_versions`,
		`SELECT coalesce(name, '') || coalesce(raw, '') FROM account_snapshots`,
		`SELECT data || reason FROM rejected_cards`, `SELECT coalesce(error, '') FROM sync_runs`,
		`SELECT name FROM card_fields`,
	} {
		for _, v := range b.query(t, w, q) {
			if strings.Contains(v, rescanSecret) || strings.Contains(strings.ToLower(v), strings.ToLower(rescanKey)) {
				t.Errorf("%s: left %q", q, v)
			}
		}
	}
}

// TestRulesVersionNewAndLowered: a new warehouse starts at the current
// version; a run start never raises an older one.
func TestRulesVersionNewAndLowered(t *testing.T) {
	for _, b := range rescanBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			w := b.open(t, load.Options{})
			defer w.Close()
			st, err := w.RulesState(t.Context())
			if err != nil || st.Version != redact.RulesVersion {
				t.Fatalf("new warehouse: %+v, %v; want version %d", st, err, redact.RulesVersion)
			}
			b.exec(t, w, `UPDATE rules_state SET rules_version = 1`)
			if _, err := w.StartRun(t.Context(), load.TriggerBackfill, "x"); err != nil {
				t.Fatal(err)
			}
			if st, _ := w.RulesState(t.Context()); st.Version != 1 {
				t.Errorf("a run raised the version to %d", st.Version)
			}
			b.exec(t, w, fmt.Sprintf(`UPDATE rules_state SET rules_version = %d`, redact.RulesVersion+5))
			if _, err := w.StartRun(t.Context(), load.TriggerBackfill, "x"); err != nil {
				t.Fatal(err)
			}
			if st, _ := w.RulesState(t.Context()); st.Version != redact.RulesVersion {
				t.Errorf("a run of older rules left the version at %d, want %d", st.Version, redact.RulesVersion)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
