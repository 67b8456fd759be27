package postgres

import (
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestAccountRawKeptAsText: account_snapshots.raw is the body exactly as
// received (1e2 stays 1e2; keys in the redaction's canonical order, as in
// SQLite), and a body jsonb would refuse (a lone
// surrogate escape, a number beyond numeric, \u0000) is stored, not a
// failed run.
func TestAccountRawKeptAsText(t *testing.T) {
	w, _, _ := openPG(t, Options{})
	run := startRun(t, w)
	for _, raw := range []string{
		`{"balance":1e2,"limit":1.50,"name":"x"}`,
		`{"balance":"1.00","name":"\ud800"}`,
		`{"n":1e1000000,"name":"x"}`,
		`{"name":"a\u0000b"}`,
	} {
		if err := w.SaveAccount(t.Context(), run, load.Account{Raw: []byte(raw)}); err != nil {
			t.Fatalf("SaveAccount %s: %v", raw, err)
		}
		if got := one(t, pgQuery(t, w, `SELECT raw FROM account_snapshots ORDER BY snapshot_id DESC LIMIT 1`)); got != raw {
			t.Errorf("raw %s, want %s as received", got, raw)
		}
	}
	if got := one(t, pgQuery(t, w, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = 'account_snapshots'::regclass AND attname = 'raw'`)); got != "text" {
		t.Errorf("account_snapshots.raw is %s, want text", got)
	}
}
