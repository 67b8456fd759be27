package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
)

// card5 is card 5 at revision rev, or, for rev < 0, card 5 at revision
// -rev with its id sent as the string "5" (one id with 5: the same card).
func card5(rev int) load.Card {
	if rev < 0 {
		return load.Card{ID: "5", Data: bytes.Replace(cardJSON(5, -rev), []byte(`"id":5,`), []byte(`"id":"5",`), 1)}
	}
	return load.Card{ID: "5", Data: cardJSON(5, rev)}
}

// twoPages is a walk of 30 cards (revision 1) in two pages, card 5 listed
// on page 1 at revision first and again on page 2 at revision second.
func twoPages(first, second int) []load.Page {
	p1 := page(1, slices.DeleteFunc(idRange(1, 15), func(id int) bool { return id == 5 }), 1, 30)
	p1.Cards = append(p1.Cards, card5(first))
	p2 := page(2, idRange(16, 30), 1, 30)
	p2.Cards = append(p2.Cards, card5(second))
	return []load.Page{p1, p2}
}

// walkPages commits pages in one run, each in its own transaction
// (CommitPage) or all in one batch (a WalkWriter), resumed or not, and
// closes the walk as the worker would judge it.
type walkMode int

const (
	eachPage walkMode = iota
	oneBatch
	resumed // page 1 in a run that stops, the rest in the next run
)

func (m walkMode) String() string { return [...]string{"each page", "one batch", "resumed"}[m] }

func walkPages(t *testing.T, b backend, mode walkMode, pages []load.Page) (load.WalkResult, []int64) {
	t.Helper()
	ctx := t.Context()
	b.clk.Advance(time.Hour)
	run := startRun(t, b.s)
	runs := []int64{run}
	switch mode {
	case oneBatch:
		ww := b.writer(run)
		for _, p := range pages {
			if _, err := ww.Add(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if err := ww.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	default:
		for i, p := range pages {
			if mode == resumed && i == 1 {
				b.clk.Advance(time.Minute)
				run = startRun(t, b.s)
				runs = append(runs, run)
			}
			commit(t, b.s, run, p)
		}
	}
	r, err := b.s.FinishWalk(ctx, run, load.StreamCards, load.WalkEnd{Reason: load.ReasonDuplicateIDs})
	if err != nil {
		t.Fatalf("FinishWalk: %v", err)
	}
	return r, runs
}

func revisionQuery(b backend, id string) string {
	if b.name == "postgres" {
		return `SELECT data->>'revision' FROM card_state WHERE card_id = '` + id + `'`
	}
	return `SELECT json_extract(data, '$.revision') FROM card_state WHERE card_id = '` + id + `'`
}

// TestConflictingDuplicateKeepsStored: a card id listed on two pages of
// one walk with different content (another revision, or its id sent as
// "5" instead of 5) keeps the content stored before the walk, whichever
// page came first, in one transaction per page, in one batch or across a
// resumed walk: no version stays, the runs count it unchanged, the walk
// records duplicate_ids with both pages, and the next walk of the same
// pages writes nothing either.
func TestConflictingDuplicateKeepsStored(t *testing.T) {
	for _, mode := range []walkMode{eachPage, oneBatch, resumed} {
		t.Run(mode.String(), func(t *testing.T) {
			for _, b := range backends(t, 0, 50) {
				t.Run(b.name, func(t *testing.T) {
					// The warehouse holds card 5 at revision 1; each case
					// leaves it so.
					walkPages(t, b, eachPage, []load.Page{page(1, idRange(1, 15), 1, 30), page(2, idRange(16, 30), 1, 30)})
					hash := one(t, b.query(t, `SELECT data_hash FROM card_state WHERE card_id = '5'`))
					for _, c := range []struct{ first, second int }{{2, 3}, {3, 2}, {1, 2}, {2, 1}, {1, -1}, {-1, 1}, {-2, 2}} {
						for n := range 2 {
							r, runs := walkPages(t, b, mode, twoPages(c.first, c.second))
							at := fmt.Sprintf("revisions %d then %d, walk %d", c.first, c.second, n+1)
							if want := []load.IDConflict{{ID: "5", Pages: []int{1, 2}}}; !slices.EqualFunc(r.Conflicts, want, func(x, y load.IDConflict) bool {
								return x.ID == y.ID && slices.Equal(x.Pages, y.Pages)
							}) {
								t.Errorf("%s: Conflicts = %v, want %v", at, r.Conflicts, want)
							}
							if r.Missed != 0 || r.Live != 30 {
								t.Errorf("%s: FinishWalk = %+v: card 5 counts as seen", at, r)
							}
							if got := joined(b.query(t, `SELECT version || ':' || change || ':' || (valid_to IS NULL) FROM card_versions WHERE card_id = '5' ORDER BY version`)); got != "1:new:true" && got != "1:new:1" {
								t.Errorf("%s: card 5's versions %s, want only 1:new, open", at, got)
							}
							if got := one(t, b.query(t, `SELECT count(*) FROM card_versions`)); got != "30" {
								t.Errorf("%s: %s versions, want 30", at, got)
							}
							if got := one(t, b.query(t, revisionQuery(b, "5"))); got != "1" {
								t.Errorf("%s: card 5 at revision %s, want 1 (as stored before the walk)", at, got)
							}
							if got := one(t, b.query(t, `SELECT data_hash FROM card_state WHERE card_id = '5'`)); got != hash {
								t.Errorf("%s: card 5's hash %x, want %x as before the walk", at, got, hash)
							}
							if got := one(t, b.query(t, `SELECT inconsistent_reason || ' ' || inconsistent_pages FROM sync_walks ORDER BY walk_id DESC LIMIT 1`)); got != "duplicate_ids [1,2]" {
								t.Errorf("%s: walk anomaly %q, want duplicate_ids [1,2]", at, got)
							}
							for _, run := range runs {
								if got := one(t, b.query(t, fmt.Sprintf(`SELECT cards_changed || ',' || cards_new FROM sync_runs WHERE run_id = %d`, run))); got != "0,0" {
									t.Errorf("%s: run %d counts changed,new %s, want 0,0", at, run, got)
								}
							}
						}
					}
				})
			}
		})
	}
}

// TestConflictingDuplicateNewCard: a card the walk stores for the first
// time, listed with two contents, keeps one version whose content does
// not depend on the page order, and the next walk writes nothing.
func TestConflictingDuplicateNewCard(t *testing.T) {
	for _, mode := range []walkMode{eachPage, oneBatch, resumed} {
		t.Run(mode.String(), func(t *testing.T) {
			for _, b := range backends(t, 0, 50) {
				t.Run(b.name, func(t *testing.T) {
					var revs []string
					for _, order := range [][2]int{{2, 3}, {3, 2}, {2, 3}} {
						walkPages(t, b, mode, twoPages(order[0], order[1]))
						if got := joined(b.query(t, `SELECT version || ':' || change FROM card_versions WHERE card_id = '5' ORDER BY version`)); got != "1:new" {
							t.Errorf("card 5's versions %s, want 1:new", got)
						}
						if got := one(t, b.query(t, `SELECT count(*) FROM card_versions`)); got != "30" {
							t.Errorf("%s versions, want 30", got)
						}
						revs = append(revs, one(t, b.query(t, revisionQuery(b, "5"))))
						if got := one(t, b.query(t, `SELECT count(*) FROM card_versions v JOIN card_state c USING (account, card_id) WHERE v.valid_to IS NULL AND v.data = c.data`)); got != "30" {
							t.Errorf("%s open versions hold card_state's data, want 30", got)
						}
					}
					if revs[0] != revs[1] || revs[1] != revs[2] || revs[0] != "2" && revs[0] != "3" {
						t.Errorf("card 5 kept revisions %v: want one of 2 and 3, whatever the order", revs)
					}
				})
			}
		})
	}
}

// TestIdenticalDuplicateHarmless: the same content on two pages makes one
// change at most and records no conflict.
func TestIdenticalDuplicateHarmless(t *testing.T) {
	for _, b := range backends(t, 0, 50) {
		t.Run(b.name, func(t *testing.T) {
			walkPages(t, b, eachPage, []load.Page{page(1, idRange(1, 15), 1, 30), page(2, idRange(16, 30), 1, 30)})
			r, _ := walkPages(t, b, eachPage, twoPages(2, 2))
			if len(r.Conflicts) != 0 {
				t.Errorf("Conflicts = %v, want none", r.Conflicts)
			}
			if got := joined(b.query(t, `SELECT version || ':' || change FROM card_versions WHERE card_id = '5' ORDER BY version`)); got != "1:new,2:changed" {
				t.Errorf("card 5's versions %s, want 1:new,2:changed", got)
			}
			if got := one(t, b.query(t, `SELECT coalesce(inconsistent_pages, 'none') FROM sync_walks ORDER BY walk_id DESC LIMIT 1`)); got != "none" {
				t.Errorf("walk anomaly pages %s, want none", got)
			}
			walkPages(t, b, eachPage, twoPages(2, 2))
			if got := one(t, b.query(t, `SELECT count(*) FROM card_versions`)); got != "31" {
				t.Errorf("%s versions, want 31", got)
			}
		})
	}
}

// TestEqualValuesMakeNoVersion: a card whose numbers and strings come back
// in another spelling of the same values (1.0 for 1, 1e2 for 100, 1.50
// for 1.5, -0 for 0, NFD for NFC, in values and keys) is unchanged, and
// the stored data keeps the text first received.
func TestEqualValuesMakeNoVersion(t *testing.T) {
	nfc, nfd := "caf\u00e9", "cafe\u0301"
	spellings := []string{
		`{"id":1,"n":1.0,"m":1e2,"d":1.50,"z":-0,"s":"` + nfd + `","k":{"` + nfd + `":[1.0,"` + nfd + `"]}}`,
		`{"id":1,"n":1,"m":100,"d":1.5,"z":0,"s":"` + nfc + `","k":{"` + nfc + `":[1,"` + nfc + `"]}}`,
		`{"id":1,"n":10e-1,"m":1.00E+2,"d":15e-1,"z":0.0,"s":"` + nfc + `","k":{"` + nfd + `":[1e0,"` + nfc + `"]}}`,
	}
	for _, b := range backends(t, 0, 0) {
		t.Run(b.name, func(t *testing.T) {
			for i, s := range append(spellings, spellings...) {
				b.clk.Advance(time.Hour)
				run := startRun(t, b.s)
				p := page(1, nil, 1, 1)
				p.Cards = []load.Card{{ID: "1", Data: []byte(s)}}
				got := commit(t, b.s, run, p)
				if want := (counts{New: 1}); i > 0 {
					want = counts{Unchanged: 1}
					if got != want {
						t.Errorf("spelling %d: %+v, want %+v", i, got, want)
					}
				} else if got != want {
					t.Errorf("first: %+v, want %+v", got, want)
				}
				if _, err := b.s.FinishWalk(t.Context(), run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
					t.Fatal(err)
				}
			}
			if got := one(t, b.query(t, `SELECT count(*) FROM card_versions`)); got != "1" {
				t.Errorf("%s versions, want 1", got)
			}
			data := strings.NewReplacer(" ", "").Replace(one(t, b.query(t, `SELECT CAST(data AS text) FROM card_state`)))
			for _, kept := range []string{`"n":1.0`, `"d":1.50`, nfd} {
				if !strings.Contains(data, kept) {
					t.Errorf("stored data %s lost %s, the text first received", data, kept)
				}
			}
		})
	}
}

// TestValueHashMigration: a warehouse whose hashes were taken of the text
// (before SQLite schema 18 and PostgreSQL migration 15) is re-hashed by
// value when it opens, adding no version, so the next walk of the same
// card spelled otherwise writes nothing.
func TestValueHashMigration(t *testing.T) {
	const sent = `{"id":1,"n":1.0,"d":1.50,"m":1e2,"s":"cafe` + "\u0301" + `"}`
	const again = `{"id":1,"n":1,"d":1.5,"m":100,"s":"caf` + "\u00e9" + `"}`
	walk := func(t *testing.T, s store, clk interface{ Advance(time.Duration) }, data string) counts {
		t.Helper()
		clk.Advance(time.Hour)
		run := startRun(t, s)
		p := page(1, nil, 1, 1)
		p.Cards = []load.Card{{ID: "1", Data: []byte(data)}}
		got := commit(t, s, run, p)
		if _, err := s.FinishWalk(t.Context(), run, load.StreamCards, load.WalkEnd{Consistent: true}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	t.Run("sqlite", func(t *testing.T) {
		ctx := t.Context()
		path := filepath.Join(t.TempDir(), "w.db")
		clk := sim.NewClock()
		w, err := sqlite.Open(ctx, path, load.Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		walk(t, w, clk, sent)
		// What schema 16 stored: the hash of the text.
		var data string
		if err := w.DB().QueryRowContext(ctx, `SELECT data FROM card_state`).Scan(&data); err != nil {
			t.Fatal(err)
		}
		old := sha256.Sum256([]byte(data))
		if _, err := w.DB().ExecContext(ctx, `UPDATE card_state SET data_hash = ?1`, old[:16]); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`ALTER TABLE walk_seen DROP COLUMN hashes`, `PRAGMA user_version = 17`} {
			if _, err := w.DB().ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		w.Close()
		w, err = sqlite.Open(ctx, path, load.Options{Now: clk.Now})
		if err != nil {
			t.Fatalf("upgrade: %v", err)
		}
		defer w.Close()
		q := func(q string) string { return one(t, sqliteTexts(t, w.DB(), q)) }
		if got := q(`SELECT hex(data_hash) = upper('` + hex.EncodeToString(load.DataHash([]byte(data))) + `') FROM card_state`); got != "1" {
			t.Errorf("data_hash not the value hash after the upgrade")
		}
		if got := q(`SELECT data FROM card_state`); got != data {
			t.Errorf("data %s, want %s unchanged", got, data)
		}
		if got := walk(t, w, clk, again); got != (counts{Unchanged: 1}) {
			t.Errorf("the same card after the upgrade: %+v, want unchanged", got)
		}
		if got := q(`SELECT count(*) FROM card_versions`); got != "1" {
			t.Errorf("%s versions, want 1", got)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		ctx := t.Context()
		w, url, clk := openPG(t, postgres.Options{})
		walk(t, w, clk, sent)
		for _, q := range []string{`UPDATE card_state SET data_hash = '\x00112233445566778899aabbccddeeff'`,
			`ALTER TABLE walk_seen DROP COLUMN hashes`, `DELETE FROM schema_migrations WHERE version = 15`} {
			if _, err := w.Pool().Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		w.Close()
		w, err := postgres.Open(ctx, url, postgres.Options{Common: load.Options{Now: clk.Now}})
		if err != nil {
			t.Fatalf("upgrade: %v", err)
		}
		t.Cleanup(func() { w.Close() })
		data := one(t, pgQuery(t, w, `SELECT data::text FROM card_state`))
		if got := one(t, pgQuery(t, w, `SELECT encode(data_hash, 'hex') FROM card_state`)); got != hex.EncodeToString(load.DataHash([]byte(data))) {
			t.Errorf("data_hash %s not the value hash after the upgrade", got)
		}
		if got := walk(t, w, clk, again); got != (counts{Unchanged: 1}) {
			t.Errorf("the same card after the upgrade: %+v, want unchanged", got)
		}
		if got := walk(t, w, clk, sent); got != (counts{Unchanged: 1}) {
			t.Errorf("the card as first sent after the upgrade: %+v, want unchanged", got)
		}
		if got := one(t, pgQuery(t, w, `SELECT count(*) FROM card_versions`)); got != "1" {
			t.Errorf("%s versions, want 1", got)
		}
	})
}
