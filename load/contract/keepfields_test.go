package contract

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// keepPage is a page of n cards with the fields id, status, balance, owner
// and a nested object, at revision rev of the owner.
func keepPage(n, rev int) load.Page {
	p := load.Page{Stream: load.StreamCards, Number: 1, TotalPages: 1, TotalItems: n}
	for i := 1; i <= n; i++ {
		p.Cards = append(p.Cards, load.Card{ID: fmt.Sprint(i), Data: fmt.Appendf(nil,
			`{"owner":"Holder %d rev %d","status":"active","id":%d,"balance":"%d.00","address":{"city":"Springfield"}}`, i, rev, i, i)})
	}
	return p
}

// TestKeepFields: with keep_fields, only the named top-level fields (and
// id) are stored, in card_state, card_versions, card_fields and cards_flat;
// the dropped ones are counted in sync_runs.fields_dropped; the fields kept
// change nothing else (the owner's changes no longer make a version).
func TestKeepFields(t *testing.T) {
	const n = 5
	for _, b := range reopenables(t, load.Options{KeepFields: []string{"status", "balance"}}) {
		t.Run(b.name, func(t *testing.T) {
			run := startRun(t, b.s)
			if c := commit(t, b.s, run, keepPage(n, 1)); c.New != n {
				t.Fatalf("first page: %+v, want %d new", c, n)
			}
			for _, q := range []string{"SELECT CAST(data AS TEXT) FROM card_state ORDER BY card_id", "SELECT CAST(data AS TEXT) FROM card_versions ORDER BY card_id"} {
				for _, d := range b.query(t, q) {
					if strings.Contains(d, "owner") || strings.Contains(d, "address") || !strings.Contains(d, `"status"`) || !strings.Contains(d, `"id"`) {
						t.Errorf("%s: %s, want id, balance and status only", q, d)
					}
				}
			}
			if got := joined(b.query(t, "SELECT name FROM card_fields ORDER BY name")); got != "balance,id,status" {
				t.Errorf("card_fields = %s, want balance,id,status", got)
			}
			if got := one(t, b.query(t, "SELECT fields_dropped FROM sync_runs")); got != fmt.Sprint(2*n) {
				t.Errorf("fields_dropped = %s, want %d", got, 2*n)
			}
			// A change of a dropped field is no change.
			run2 := startRun(t, b.s)
			if c := commit(t, b.s, run2, keepPage(n, 2)); c.Unchanged != n {
				t.Errorf("owner changed: %+v, want %d unchanged", c, n)
			}
			for _, s := range b.texts(t) {
				if strings.Contains(s, "Holder") || strings.Contains(s, "Springfield") {
					t.Fatalf("a dropped field's value is stored: %s", s)
				}
			}
		})
	}
}

// TestKeepFieldsNarrowed: a warehouse synced with every field, then with a
// narrower keep_fields, changes each card once (one version without the
// dropped fields), then never again; unset again, the fields come back, once.
func TestKeepFieldsNarrowed(t *testing.T) {
	const n = 4
	for _, b := range reopenables(t, load.Options{}) {
		t.Run(b.name, func(t *testing.T) {
			walk := func(want string) {
				t.Helper()
				run := startRun(t, b.s)
				c := commit(t, b.s, run, keepPage(n, 1))
				if got := fmt.Sprintf("new %d changed %d unchanged %d", c.New, c.Changed, c.Unchanged); got != want {
					t.Errorf("%s, want %s", got, want)
				}
			}
			walk(fmt.Sprintf("new %d changed 0 unchanged 0", n))
			walk(fmt.Sprintf("new 0 changed 0 unchanged %d", n))
			b.reopen(t, load.Options{KeepFields: []string{"status"}})
			walk(fmt.Sprintf("new 0 changed %d unchanged 0", n))
			walk(fmt.Sprintf("new 0 changed 0 unchanged %d", n))
			b.reopen(t, load.Options{KeepFields: []string{"status"}})
			walk(fmt.Sprintf("new 0 changed 0 unchanged %d", n))
			versions := b.query(t, "SELECT count(*) FROM card_versions")
			if got := one(t, versions); got != fmt.Sprint(2*n) {
				t.Errorf("%s versions, want %d", got, 2*n)
			}
			b.reopen(t, load.Options{})
			walk(fmt.Sprintf("new 0 changed %d unchanged 0", n))
			walk(fmt.Sprintf("new 0 changed 0 unchanged %d", n))
			got := b.query(t, "SELECT fields_dropped FROM sync_runs ORDER BY run_id")
			want := []string{"0", "0", fmt.Sprint(3 * n), fmt.Sprint(3 * n), fmt.Sprint(3 * n), "0", "0"}
			if !slices.Equal(got, want) {
				t.Errorf("fields_dropped per run = %q, want %q", got, want)
			}
		})
	}
}
