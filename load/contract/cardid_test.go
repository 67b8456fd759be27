package contract

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/postgres/pgtest"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/sim"
)

// reopenable is a warehouse under test that can be closed and opened again
// on the same data, with other options.
type reopenable struct {
	name string
	s    store
	// query returns the first column of every row as text.
	query func(t testing.TB, q string) []string
	// texts returns every text value of every column of every table.
	texts func(t testing.TB) []string
	// files are the SQLite file and its -wal ("" for PostgreSQL).
	path string
	// reopen closes the warehouse and opens it again with opts.
	reopen func(t testing.TB, opts load.Options)
	clk    *sim.Clock
}

// reopenables returns an SQLite and (when a server runs) a PostgreSQL
// warehouse opened with opts.
func reopenables(t *testing.T, opts load.Options) []*reopenable {
	t.Helper()
	var out []*reopenable
	{
		clk := sim.NewClock()
		path := filepath.Join(t.TempDir(), "w.db")
		r := &reopenable{name: "sqlite", path: path, clk: clk}
		var w *sqlite.Warehouse
		open := func(t testing.TB, o load.Options) {
			t.Helper()
			o.Now = clk.Now
			var err error
			if w, err = sqlite.Open(context.Background(), path, o); err != nil {
				t.Fatal(err)
			}
			r.s = w
		}
		open(t, opts)
		t.Cleanup(func() { w.Close() })
		r.reopen = func(t testing.TB, o load.Options) {
			t.Helper()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			open(t, o)
		}
		r.query = func(t testing.TB, q string) []string {
			t.Helper()
			return sqliteTexts(t, w.DB(), q)
		}
		r.texts = func(t testing.TB) []string {
			t.Helper()
			var all []string
			for _, table := range r.query(t, `SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'`) {
				for _, col := range r.query(t, fmt.Sprintf(`SELECT name FROM pragma_table_info('%s')`, table)) {
					all = append(all, r.query(t, fmt.Sprintf(`SELECT CAST("%s" AS TEXT) FROM "%s"`, col, table))...)
				}
			}
			return all
		}
		out = append(out, r)
	}
	if server != nil {
		pgtest.Need(t, server)
		url := server.NewDatabase(t)
		clk := sim.NewClock()
		r := &reopenable{name: "postgres", clk: clk}
		var w *postgres.Warehouse
		open := func(t testing.TB, o load.Options) {
			t.Helper()
			o.Now = clk.Now
			var err error
			if w, err = postgres.Open(context.Background(), url, postgres.Options{Common: o}); err != nil {
				t.Fatal(err)
			}
			r.s = w
		}
		open(t, opts)
		t.Cleanup(func() { w.Close() })
		r.reopen = func(t testing.TB, o load.Options) {
			t.Helper()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			open(t, o)
		}
		r.query = func(t testing.TB, q string) []string { t.Helper(); return pgQuery(t, w, q) }
		r.texts = func(t testing.TB) []string {
			t.Helper()
			var all []string
			for _, tc := range r.query(t, `SELECT format('SELECT %I::text FROM %I', column_name, table_name) FROM information_schema.columns
					WHERE table_schema = current_schema()`) {
				all = append(all, r.query(t, tc)...)
			}
			return all
		}
		out = append(out, r)
	} else if os.Getenv(pgtest.EnvRequire) != "" {
		t.Fatal(pgtest.ErrNoServer)
	}
	return out
}

// networks are (prefix, length) pairs of the card networks redact knows.
var networks = []struct {
	prefix string
	length int
}{
	{"4", 16}, {"4", 13}, {"4", 19}, {"51", 16}, {"55", 16}, {"2221", 16}, {"2720", 16}, {"34", 15}, {"37", 15},
	{"6011", 16}, {"65", 16}, {"3528", 16}, {"3589", 19}, {"62", 17}, {"36", 14}, {"50", 12}, {"67", 19}, {"2200", 16},
}

// randomPAN returns a card number of a random network that redact.IsPAN
// accepts.
func randomPAN(rng *rand.Rand) string {
	for {
		n := networks[rng.IntN(len(networks))]
		d := []byte(n.prefix)
		for len(d) < n.length-1 {
			d = append(d, byte('0'+rng.IntN(10)))
		}
		d = append(d, redact.LuhnCheckDigit(d))
		if redact.IsPAN(string(d)) {
			return string(d)
		}
	}
}

// twin returns another card number with the same first 6 and last 4
// digits as pan (so the same masked form).
func twin(rng *rand.Rand, pan string) string {
	for {
		d := []byte(pan)
		for i := 6; i < len(d)-4; i++ {
			d[i] = byte('0' + rng.IntN(10))
		}
		if s := string(d); s != pan && redact.IsPAN(s) {
			return s
		}
	}
}

// spelled writes a card number as an id: plain, or in groups of 4 with a
// separator.
func spelled(rng *rand.Rand, pan string) string {
	seps := []string{"", " ", "-", ".", "/", " - "}
	sep := seps[rng.IntN(len(seps))]
	if sep == "" {
		return pan
	}
	var parts []string
	for i := 0; i < len(pan); i += 4 {
		parts = append(parts, pan[i:min(i+4, len(pan))])
	}
	return strings.Join(parts, sep)
}

// panCard is a generated card whose id is a card number: pan's digits,
// spelled id, sent as a JSON number when number.
type panCard struct {
	pan, id string
	number  bool
}

// idCard is a card whose id is id, sent as a JSON number when number.
func idCard(id string, number bool, rev int) load.Card {
	v := fmt.Sprintf("%q", id)
	if number {
		v = id
	}
	return load.Card{ID: id, Data: fmt.Appendf(nil, `{"id":%s,"status":"active","owner":"Card holder","revision":%d}`, v, rev)}
}

// TestCardNumberIDs: a card id that is or holds a card number (generated:
// random networks, string and number ids, separators) is never stored in
// full, in any column of any table, nor in the SQLite file and its -wal; it
// is stored as its masked form and a keyed hash, the same for the same card
// across runs and after a reopen, different for two cards whose masked forms
// agree; the "id" member of the stored card says the same; rejected items
// and their data show the same form; other ids are stored as sent.
func TestCardNumberIDs(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	cards, twins := panCards(rng)
	plain := []string{"1", "42", "abc-123", "550e8400-e29b-41d4-a716-446655440000", "1234567812345678", "order 20250301123456"}
	mkPage := func(rev int) load.Page { return panPage(cards, plain, rev) }
	for _, b := range reopenables(t, load.Options{}) {
		t.Run(b.name, func(t *testing.T) {
			stored := func() map[string]bool {
				m := map[string]bool{}
				for _, id := range b.query(t, "SELECT card_id FROM cards") {
					m[id] = true
				}
				return m
			}
			run := startRun(t, b.s)
			commit(t, b.s, run, mkPage(1))
			first := stored()
			if len(first) != len(cards)+len(plain) {
				t.Fatalf("%d cards stored, want %d", len(first), len(cards)+len(plain))
			}
			for _, id := range plain {
				if !first[id] {
					t.Errorf("id %q is not stored as sent", id)
				}
			}
			if got := one(t, b.query(t, "SELECT card_numbers_masked FROM sync_runs")); got == "0" {
				t.Errorf("card_numbers_masked = 0")
			}
			// Same cards, next run, then after a reopen: same ids.
			run2 := startRun(t, b.s)
			if c := commit(t, b.s, run2, mkPage(1)); c.New != 0 || c.Unchanged != len(first) {
				t.Errorf("second run: %+v, want every card unchanged", c)
			}
			b.reopen(t, load.Options{})
			run3 := startRun(t, b.s)
			if c := commit(t, b.s, run3, mkPage(2)); c.New != 0 || c.Changed != len(first) {
				t.Errorf("after reopen: %+v, want every card changed, none new", c)
			}
			if again := stored(); !mapsEqual(first, again) {
				t.Errorf("ids differ after a reopen")
			}
			// The stored data's "id" says what card_id says.
			if got := one(t, b.query(t, `SELECT count(*) FROM card_state WHERE data->>'id' IS NULL OR CAST(data->>'id' AS TEXT) <> card_id`)); got != "0" {
				t.Errorf("%s cards whose data's id differs from card_id", got)
			}
			checkTwinIDs(t, first, len(cards), twins)
			// Rejected items show the same form as the card.
			if got := b.query(t, "SELECT card_id FROM rejected_cards WHERE card_id IS NOT NULL ORDER BY card_id"); len(got) != 2 || !first[got[0]] || !first[got[1]] {
				t.Errorf("rejected_cards.card_id = %q, want the cards' stored ids", got)
			}
			checkNoPAN(t, b, cards)
		})
	}
}

// panCards makes 24 cards whose ids are or hold a random card number
// (number ids, or spelled with separators), each card whose id is its bare
// number followed by a twin with the same masked form; twins counts those.
func panCards(rng *rand.Rand) (cards []panCard, twins int) {
	for range 24 {
		pan := randomPAN(rng)
		number := rng.IntN(3) == 0
		id := pan
		if !number {
			id = spelled(rng, pan)
		}
		cards = append(cards, panCard{pan: pan, id: id, number: number})
		if id == pan {
			// A twin: another card with the same masked form.
			p2 := twin(rng, pan)
			cards = append(cards, panCard{pan: p2, id: p2})
			twins++
		}
	}
	return cards, twins
}

// panPage is the one page of TestCardNumberIDs at revision rev: the cards,
// the plain ids, and three rejected items.
func panPage(cards []panCard, plain []string, rev int) load.Page {
	p := load.Page{Stream: load.StreamCards, Number: 1, TotalPages: 1}
	for _, c := range cards {
		p.Cards = append(p.Cards, idCard(c.id, c.number, rev))
	}
	for _, id := range plain {
		p.Cards = append(p.Cards, idCard(id, false, rev))
	}
	// Rejected items: one whose id the client read, one whose id is
	// a number with an exponent (no integer id, so none read).
	rej := cards[0]
	p.Rejected = []load.Rejection{
		{Index: len(p.Cards), CardID: rej.id, Reason: "test rejection", Data: fmt.Appendf(nil, `{"id":%q,"x":[}`, rej.id)},
		{Index: len(p.Cards) + 1, CardID: cards[1].id, Reason: "test rejection", Data: fmt.Appendf(nil, `{"id":%q,"status":{"deep":1}}`, cards[1].id)},
		{Index: len(p.Cards) + 2, Reason: "id is a number but not an integer", Data: fmt.Appendf(nil, `{"id":%s.0e0,"status":"active"}`, cards[2].pan)},
	}
	p.TotalItems = len(p.Cards) + len(p.Rejected)
	return p
}

// checkTwinIDs: twins (same masked form) keep two ids among the stored ids.
func checkTwinIDs(t *testing.T, stored map[string]bool, cards, twins int) {
	t.Helper()
	masked := map[string]int{}
	for id := range stored {
		if i := strings.IndexRune(id, redact.CardIDSeparator); i > 0 {
			masked[id[:i]]++
		}
	}
	pairs := 0
	for _, n := range masked {
		if n > 1 {
			pairs++
		}
	}
	if len(masked) != cards && pairs == 0 || twins > 0 && pairs == 0 {
		t.Errorf("%d pseudonymous ids, %d masked forms shared by two cards; want %d ids and shared forms for %d twins", len(masked), pairs, cards, twins)
	}
}

func mapsEqual(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// checkNoPAN fails when a generated card number, as sent or as its bare
// digits, appears in any text value of the warehouse or (SQLite) in its
// file and -wal.
func checkNoPAN(t *testing.T, b *reopenable, cards []panCard) {
	t.Helper()
	texts := strings.Join(b.texts(t), "\n")
	var raw []byte
	if b.path != "" {
		for _, f := range []string{b.path, b.path + "-wal"} {
			data, err := os.ReadFile(f)
			if err == nil {
				raw = append(raw, data...)
			}
		}
	}
	for _, c := range cards {
		for _, s := range []string{c.pan, c.id} {
			if strings.Contains(texts, s) {
				t.Errorf("card number %s (id %q) stored in full", c.pan, c.id)
			}
			if bytes.Contains(raw, []byte(s)) {
				t.Errorf("card number %s (id %q) in the file's bytes", c.pan, c.id)
			}
		}
	}
}

// TestCardIDKeyOnce: two processes opening a new warehouse at once create
// one card id key, and agree on it (SQLite: two opens of a new file;
// PostgreSQL: two opens of a new database).
func TestCardIDKeyOnce(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "w.db")
	ws := make([]*sqlite.Warehouse, 4)
	var wg sync.WaitGroup
	errs := make([]error, len(ws))
	for i := range ws {
		wg.Go(func() { ws[i], errs[i] = sqlite.Open(ctx, path, load.Options{}) })
	}
	wg.Wait()
	for i, w := range ws {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		defer w.Close()
	}
	page := load.Page{Stream: load.StreamCards, Number: 1, TotalPages: 1, TotalItems: 1, Cards: []load.Card{idCard("4111111111111111", false, 1)}}
	var ids []string
	for _, w := range ws {
		it, err := load.PreparePageItems(w.ItemRules(), page)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, it.Cards[0].ID)
	}
	if len(slices.Compact(ids)) != 1 {
		t.Errorf("four opens of one new file store one card as %q", ids)
	}
	if server == nil {
		return
	}
	url := server.NewDatabase(t)
	pws := make([]*postgres.Warehouse, 4)
	for i := range pws {
		wg.Go(func() { pws[i], errs[i] = postgres.Open(ctx, url, postgres.Options{}) })
	}
	wg.Wait()
	ids = ids[:0]
	for i, w := range pws {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		defer w.Close()
		it, err := load.PreparePageItems(w.ItemRules(), page)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, it.Cards[0].ID)
	}
	if len(slices.Compact(ids)) != 1 {
		t.Errorf("four opens of one new database store one card as %q", ids)
	}
}
