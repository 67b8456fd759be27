package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cardsync/cardsync/account"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres/pgtest"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/redact/redacttest"
)

// TestOpenErrorHidesPassword: a failed connection names the server, never
// the password, whether it came in the URL or in Options.Password.
func TestOpenErrorHidesPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, tt := range []struct {
		url, password string
	}{
		{"postgres://cardsync:s3cret-in-url@127.0.0.1:1/warehouse?connect_timeout=2", ""},
		{"postgres://cardsync@127.0.0.1:1/warehouse?connect_timeout=2", "s3cret-in-file"},
	} {
		_, err := Open(ctx, tt.url, Options{Password: tt.password})
		if err == nil {
			t.Fatal("Open of a closed port succeeded")
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open error holds the password: %v", err)
		}
		if !errors.Is(err, load.ErrWarehouse) || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("Open error = %v, want a warehouse error naming the server", err)
		}
	}
}

// TestMigrateIdempotentAndConcurrent: migrators racing on a new database
// apply each migration once; migrating again applies nothing; a database
// of a newer binary is refused.
func TestMigrateIdempotentAndConcurrent(t *testing.T) {
	pgtest.Need(t, server)
	fresh := server.NewDatabase(t)
	var wg sync.WaitGroup
	applied := make([][]int, 4)
	errs := make([]error, 4)
	for i := range 4 {
		wg.Go(func() {
			pool, err := pgxpool.New(t.Context(), fresh)
			if err != nil {
				errs[i] = err
				return
			}
			defer pool.Close()
			applied[i], errs[i] = Migrate(t.Context(), pool, nil, load.DefaultAmountRules())
		})
	}
	wg.Wait()
	total := 0
	for i := range 4 {
		if errs[i] != nil {
			t.Fatalf("migrator %d: %v", i, errs[i])
		}
		total += len(applied[i])
	}
	if total != SchemaVersion() {
		t.Errorf("%d migrations applied by 4 racing migrators, want %d (each once)", total, SchemaVersion())
	}
	pool, err := pgxpool.New(t.Context(), fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if again, err := Migrate(t.Context(), pool, nil, load.DefaultAmountRules()); err != nil || len(again) != 0 {
		t.Errorf("Migrate again = %v, %v; want nothing applied", again, err)
	}
	if _, err := pool.Exec(t.Context(), `INSERT INTO schema_migrations (version, name) VALUES (999, '999_future')`); err != nil {
		t.Fatal(err)
	}
	var sv *load.SchemaVersionError
	if _, err := Migrate(t.Context(), pool, nil, load.DefaultAmountRules()); !errors.As(err, &sv) || !errors.Is(err, load.ErrSchemaTooNew) {
		t.Errorf("Migrate of a newer database = %v, want a SchemaVersionError", err)
	}
}

// TestPublicNames: the PostgreSQL warehouse has the SQLite warehouse's
// public tables and views with the same columns, cards_flat's generated
// ones included once both stored the same cards, plus sync_leases.
func TestPublicNames(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	sq, err := sqlite.Open(t.Context(), t.TempDir()+"/w.db", load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	for _, s := range []store{w, sq} {
		commit(t, s, startRun(t, s), page(1, idRange(1, 3), 1, 3))
	}
	rows, err := sq.DB().QueryContext(t.Context(), `SELECT m.name, p.name FROM sqlite_schema m, pragma_table_info(m.name) p
		WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite%'
		ORDER BY m.name, p.name`)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for rows.Next() {
		var tbl, col string
		if err := rows.Scan(&tbl, &col); err != nil {
			t.Fatal(err)
		}
		want = append(want, tbl+"."+col)
	}
	rows.Close()
	got := pgQuery(t, w, `SELECT table_name || '.' || column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name NOT IN ('sync_leases', 'sync_replicas', 'schema_migrations')
		ORDER BY table_name COLLATE "C", column_name COLLATE "C"`)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("public columns differ\npostgres: %q\nsqlite:   %q", got, want)
	}
	if got := joined(pgQuery(t, w, `SELECT column_name FROM information_schema.columns WHERE table_name = 'sync_leases' ORDER BY ordinal_position`)); !strings.HasPrefix(got, "account,holder,fencing_token,expires_at") {
		t.Errorf("sync_leases columns %s", got)
	}
}

// TestSaveAccountExactMoney: amounts go from JSON text to bigint cents
// and back out of the numeric view without a float in between.
func TestSaveAccountExactMoney(t *testing.T) {
	tests := []struct {
		json, minor, view string
	}{
		{`"0.10"`, "10", "0.10"},
		{`98765.4`, "9876540", "98765.40"},
		{`"12345678901234.56"`, "1234567890123456", "12345678901234.56"},
		{`99999999999999.99`, "9999999999999999", "99999999999999.99"},
		{`"92233720368547758.07"`, "9223372036854775807", "92233720368547758.07"},
		{`"-0.07"`, "-7", "-0.07"},
		{`1.5e2`, "15000", "150.00"},
		{`null`, "NULL", "NULL"},
	}
	w, _, _ := openPG(t, Options{})
	ctx := t.Context()
	run := startRun(t, w)
	for _, tt := range tests {
		t.Run(tt.json, func(t *testing.T) {
			a, err := money.ParseJSON([]byte(tt.json), 2)
			if err != nil {
				t.Fatal(err)
			}
			name := "Acme " + tt.json
			acct := load.Account{Snapshot: account.Snapshot{Name: &name, Balance: a, TransferAmount: a, ReachAmount: a,
				Authorizations: a, CardsBalance: a, AvailableRechargeBalance: a},
				Raw: []byte(`{"name":"x","balance":` + tt.json + `}`)}
			if err := w.SaveAccount(ctx, run, acct); err != nil {
				t.Fatal(err)
			}
			got := pgQuery(t, w, `SELECT x FROM (SELECT s.balance_minor::text, b.balance::text, b.transfer_amount::text, b.available_recharge_balance::text
				FROM account_snapshots s JOIN account_balances b USING (snapshot_id) WHERE s.name = $1) t(a, b, c, d),
				LATERAL unnest(ARRAY[a, b, c, d]) x`, name)
			if want := []string{tt.minor, tt.view, tt.view, tt.view}; joined(got) != joined(want) {
				t.Errorf("stored %q, want %q", got, want)
			}
			if got := one(t, pgQuery(t, w, `SELECT pg_typeof(balance)::text FROM account_balances LIMIT 1`)); got != "numeric" {
				t.Errorf("account_balances.balance is %s, want numeric", got)
			}
		})
	}
	if got := one(t, pgQuery(t, w, `SELECT raw::jsonb->>'balance' FROM account_snapshots WHERE name = 'Acme 98765.4'`)); got != "98765.4" {
		t.Errorf("raw balance = %s, want the number text kept", got)
	}
	if got := one(t, pgQuery(t, w, `SELECT old_value || ' -> ' || new_value || ' = ' || change FROM account_balance_changes
		WHERE amount = 'balance' AND new_value = -0.07`)); got != "92233720368547758.07 -> -0.07 = -92233720368547758.14" {
		// The difference does not fit a bigint: the view computes it in
		// numeric.
		t.Errorf("balance change %s", got)
	}
	if err := w.SaveAccount(ctx, run, load.Account{Snapshot: account.Snapshot{Balance: mustAmount(t, `"1.005"`, 3)}}); !errors.Is(err, load.ErrAmountScale) {
		t.Errorf("SaveAccount of 1.005 = %v, want ErrAmountScale", err)
	}
}

func mustAmount(t *testing.T, s string, scale int) *money.Amount {
	t.Helper()
	a, err := money.ParseJSON([]byte(s), scale)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestUnchangedCardsNotRewritten: a walk that lists the same cards writes
// no card row (same xmin), and a changed card gets a new row version.
func TestUnchangedCardsNotRewritten(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 15), 1, 15))
	before := pgQuery(t, w, `SELECT card_id || ':' || xmin::text FROM card_state ORDER BY card_id`)
	if got := commit(t, w, run, page(1, idRange(1, 15), 1, 15)); got != (counts{Unchanged: 15}) {
		t.Fatalf("second commit %+v", got)
	}
	if after := pgQuery(t, w, `SELECT card_id || ':' || xmin::text FROM card_state ORDER BY card_id`); joined(after) != joined(before) {
		t.Errorf("unchanged cards rewritten: xmin %q -> %q", before, after)
	}
	p := page(1, idRange(1, 15), 1, 15)
	p.Cards[0].Data = cardJSON(1, 2)
	if got := commit(t, w, run, p); got != (counts{Changed: 1, Unchanged: 14}) {
		t.Fatalf("third commit %+v", got)
	}
	if n := one(t, pgQuery(t, w, `SELECT count(*) FROM card_state WHERE xmin::text <> ALL($1::text[])`, xmins(before))); n != "1" {
		t.Errorf("%s card rows rewritten, want 1", n)
	}
}

func xmins(rows []string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r[strings.Index(r, ":")+1:])
	}
	return out
}

// TestPANCorpusNeverStored: no full card number of the corpus is stored
// anywhere in the PostgreSQL warehouse (cards, versions, raw account,
// rejected items, errors).
func TestPANCorpusNeverStored(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	ctx := t.Context()
	run := startRun(t, w)
	corpus := redacttest.PANCorpus()
	if testing.Short() {
		var some []redacttest.Sample
		for i := 0; i < len(corpus); i += 5 {
			some = append(some, corpus[i])
		}
		corpus = some
	}
	var cards []load.Card
	for i, s := range corpus {
		q := fmt.Sprintf("%q", s.Text)
		doc := fmt.Sprintf(`{"id":%d,"note":%s,"by_key":{%s:"x"},"list":[1,%s]}`, i+1, q, q, q)
		cards = append(cards, load.Card{ID: fmt.Sprint(i + 1), Data: []byte(doc)})
	}
	for p := 0; p*15 < len(cards); p++ {
		pg := load.Page{Number: p + 1, TotalPages: (len(cards) + 14) / 15, TotalItems: len(cards), Cards: cards[p*15 : min((p+1)*15, len(cards))]}
		if p == 0 {
			pg.Rejected = []load.Rejection{{Index: 99, Reason: "test " + corpus[0].Text, Data: []byte(`{"pan":"` + corpus[0].Text + `"}`)}}
		}
		commit(t, w, run, pg)
	}
	if err := w.SaveAccount(ctx, run, load.Account{Raw: []byte(`{"note":"` + corpus[1].Text + `"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, run, load.RunResult{Status: load.StatusFailed, Error: "boom " + corpus[2].Text}); err != nil {
		t.Fatal(err)
	}
	var dump []string
	for _, tbl := range []string{"card_state", "card_versions", "account_snapshots", "rejected_cards", "sync_runs", "walk_seen"} {
		dump = append(dump, pgQuery(t, w, `SELECT t::text FROM `+tbl+` t`)...)
	}
	all := strings.Join(dump, "\n")
	for _, s := range corpus {
		if strings.Contains(all, s.Digits) {
			t.Errorf("%s: full number %s stored", s.Name, s.Digits)
		}
	}
}

// TestFieldRetentionMigration: migration 4 gives the card_fields rows of a
// database from before it last_seen_at = the time of the upgrade, so that
// none is pruned before a full retention has passed.
func TestFieldRetentionMigration(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	ctx := t.Context()
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 3), 1, 3))
	// The database as the release before migration 4 left it.
	if _, err := w.pool.Exec(ctx, `ALTER TABLE card_fields DROP COLUMN last_seen_at;
		DELETE FROM schema_migrations WHERE version = 4`); err != nil {
		t.Fatal(err)
	}
	applied, err := Migrate(ctx, w.pool, nil, load.DefaultAmountRules())
	if err != nil || !slices.Equal(applied, []int{4}) {
		t.Fatalf("Migrate = %v, %v; want [4]", applied, err)
	}
	rows := one(t, pgQuery(t, w, `SELECT count(*) FROM card_fields`))
	if rows == "0" {
		t.Fatal("no card_fields rows to upgrade")
	}
	if got := one(t, pgQuery(t, w, `SELECT count(*) FROM card_fields WHERE last_seen_at > now() - interval '1 minute'`)); got != rows {
		t.Errorf("%s of %s rows count as seen at the upgrade", got, rows)
	}
	if got := one(t, pgQuery(t, w, `SELECT column_default IS NULL FROM information_schema.columns
		WHERE table_name = 'card_fields' AND column_name = 'last_seen_at'`)); got != "true" {
		t.Errorf("last_seen_at keeps a default: every insert must set it")
	}
}

// TestFileCapabilitiesMissing: what only a file does (a file check with
// its events, a WAL checkpoint, a file beside which unrecorded results are
// kept) is a no-op on PostgreSQL: Verify is Writable with no event,
// Optimize does nothing, File is empty, and its writer facts are leases.
func TestFileCapabilitiesMissing(t *testing.T) {
	var d load.Destination = (*Warehouse)(nil)
	if d.File() != "" {
		t.Errorf("File() = %q, want none", d.File())
	}
	if err := d.Optimize(t.Context()); err != nil {
		t.Errorf("Optimize: %v", err)
	}
	w, _, _ := openPG(t, Options{})
	if ev, msg, err := w.Verify(t.Context()); ev != load.FileOK || msg != "" || err != nil {
		t.Errorf("Verify = %v, %q, %v; want FileOK, no message, no error", ev, msg, err)
	}
	if f, err := w.WriterFacts(t.Context(), true); err != nil || !f.Shared || f.WriterPID != 0 {
		t.Errorf("WriterFacts = %+v, %v; want shared, no PID", f, err)
	}
}
