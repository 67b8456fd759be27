package contract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/redact"
)

// rulesStore is a warehouse under test whose rules (its card id key) a
// test reads and which a rescan rewrites.
type rulesStore interface {
	load.Rescanner
	ItemRules() load.ItemRules
}

// TestRescanMovesCardNumberIDs writes a warehouse "of an older release"
// whose card ids are full card numbers (generated: random networks, string
// and number ids, separators) in every table that keys by card id and in
// the stored data (a sync of the current release, then every stored id put
// back to the id as sent, directly in SQL), rescans it in small batches and
// checks that no card number is left in any text column of any table (nor,
// SQLite, in the file and its -wal), that every card keeps its history under
// the id a sync now stores, and that a sync of the same upstream data
// afterwards changes nothing. With collide, a sync of the current release
// stores one card under its new id before the rescan while its old row
// remains: the rescan merges the two.
func TestRescanMovesCardNumberIDs(t *testing.T) {
	for _, collide := range []bool{false, true} {
		t.Run(fmt.Sprintf("collide=%v", collide), func(t *testing.T) { testRescanMovesIDs(t, collide) })
	}
}

func testRescanMovesIDs(t *testing.T, collide bool) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	f := newIDFixture(rand.New(rand.NewPCG(seed, 0)))
	cards, plain := f.cards, f.plain
	mkPage := f.page
	policy := load.Options{}.Settings().Policy
	for _, b := range reopenables(t, load.Options{}) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			run := startRun(t, b.s)
			commit(t, b.s, run, mkPage(1))
			run = startRun(t, b.s)
			if c := commit(t, b.s, run, mkPage(2)); c.Changed != len(cards)+len(plain) {
				t.Fatalf("second run: %+v, want every card changed", c)
			}
			key := b.s.(rulesStore).ItemRules().IDKey
			stored := func(c panCard) string {
				id, changed, err := load.StoredID(policy, key, c.id)
				if err != nil || !changed {
					t.Fatalf("StoredID(%q) = %q, %v, %v", c.id, id, changed, err)
				}
				return id
			}
			// The older release: every stored id back to the id as sent.
			all := f.all()
			for _, c := range all {
				unmoveID(t, b, c, stored(c))
			}
			b.query(t, `UPDATE rules_state SET rules_version = 1`)
			texts := strings.Join(b.texts(t), "\n")
			for _, c := range all {
				if !strings.Contains(texts, c.id) {
					t.Fatalf("the older warehouse should hold id %q in full", c.id)
				}
			}
			seenOld := strings.Contains(strings.Join(b.query(t, `SELECT ids FROM walk_seen`), ""), cards[5].id)
			if collide {
				// A sync of the current release stores one card again,
				// under its new id, beside its old row.
				run = startRun(t, b.s)
				if c := commit(t, b.s, run, mkPage(2, idCollider)); c.New != 1 {
					t.Fatalf("collision: %+v, want the card stored new", c)
				}
			}
			rejectedRows := one(t, b.query(t, `SELECT count(*) FROM rejected_cards`))

			// Killed after its first batch (5 cards moved), then resumed.
			kctx, cancel := context.WithCancel(ctx)
			first, err := load.Rescan(kctx, b.s.(rulesStore), load.RescanOptions{Policy: policy, Batch: 5, AfterBatch: cancel})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("killed rescan: %v, want context.Canceled", err)
			}
			res, err := load.Rescan(ctx, b.s.(rulesStore), load.RescanOptions{Policy: policy, Batch: 5})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Resumed || first.IDs+res.IDs != len(cards) {
				t.Errorf("rescan moved %d+%d ids (resumed %v), want %d (%+v)", first.IDs, res.IDs, res.Resumed, len(cards), res)
			}
			if b.path != "" {
				// Every row the rescan rewrites or frees is overwritten
				// (secure_delete), but a row the older release (here: the
				// SQL above) or a sync before the rescan rewrote left its
				// earlier bytes in the free space of a live page, which no
				// statement reaches: VACUUM clears them (docs/operating.md
				// says so). The texts are checked before it.
				texts := strings.Join(b.texts(t), "\n")
				for _, c := range all {
					if strings.Contains(texts, c.id) || strings.Contains(texts, c.pan) {
						t.Errorf("card number %s (id %q) stored in full", c.pan, c.id)
					}
				}
				b.query(t, "VACUUM")
			}
			if err := b.s.Optimize(ctx); err != nil {
				t.Fatal(err)
			}
			checkNoPAN(t, b, all)
			checkMovedIDs(t, b, f, stored, collide, seenOld)
			checkResyncChangesNothing(t, b, f, rejectedRows, policy)
		})
	}
}

// idFixture is the upstream data of testRescanMovesIDs: cards whose ids are
// or hold card numbers, plain ids, and an item rejected under a card number
// no card has.
type idFixture struct {
	cards    []panCard
	rejected panCard
	plain    []string
}

// idCollider is the card that, with collide, a sync of the current release
// stores under its new id before the rescan.
const idCollider = 2

func newIDFixture(rng *rand.Rand) idFixture {
	var f idFixture
	for range 12 {
		pan := randomPAN(rng)
		number := rng.IntN(3) == 0
		id := pan
		if !number {
			id = spelled(rng, pan)
		}
		f.cards = append(f.cards, panCard{pan: pan, id: id, number: number})
	}
	// An item rejected under an id that is a card number no card has.
	rejPAN := randomPAN(rng)
	f.rejected = panCard{pan: rejPAN, id: spelled(rng, rejPAN)}
	f.plain = []string{"1", "abc-123", "1234567812345678"}
	return f
}

// page is the one page of cards at revision rev: every card, plain id and
// rejected item, or only the cards numbered in only.
func (f idFixture) page(rev int, only ...int) load.Page {
	p := load.Page{Stream: load.StreamCards, Number: 1, TotalPages: 1}
	if only != nil {
		for _, i := range only {
			p.Cards = append(p.Cards, idCard(f.cards[i].id, f.cards[i].number, rev))
		}
		p.TotalItems = len(p.Cards)
		return p
	}
	for _, c := range f.cards {
		p.Cards = append(p.Cards, idCard(c.id, c.number, rev))
	}
	for _, id := range f.plain {
		p.Cards = append(p.Cards, idCard(id, false, rev))
	}
	p.Rejected = []load.Rejection{
		{Index: len(p.Cards), CardID: f.cards[0].id, Reason: "test rejection", Data: fmt.Appendf(nil, `{"id":%q,"status":{"deep":1}}`, f.cards[0].id)},
		{Index: len(p.Cards) + 1, CardID: f.rejected.id, Reason: "test rejection", Data: fmt.Appendf(nil, `{"id":%q,"status":"odd"}`, f.rejected.id)},
	}
	p.TotalItems = len(p.Cards) + len(p.Rejected)
	return p
}

// all is every card whose id is or holds a card number: the cards, then
// the rejected item.
func (f idFixture) all() []panCard {
	return append(append([]panCard(nil), f.cards...), f.rejected)
}

// unmoveID puts card c, stored under p, back under the id as sent, as an
// older release stored it: its rows in every table keyed by card id, its
// stored data, its rejected items and the open walk's seen ids.
func unmoveID(t *testing.T, b *reopenable, c panCard, p string) {
	t.Helper()
	asSent, _ := json.Marshal(c.id)
	if c.number {
		asSent = []byte(c.id)
	}
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	oldID, newID, newJSON, oldJSON := q(c.id), q(p), q(`"`+p+`"`), q(string(asSent))
	stmts := []string{
		`INSERT INTO card_state (card_id, data, first_seen_at, last_seen_at, updated_at, removed_at, first_seen_run, last_seen_run, data_hash, account, minor)
			SELECT ` + oldID + `, data, first_seen_at, last_seen_at, updated_at, removed_at, first_seen_run, last_seen_run, data_hash, account, minor
			FROM card_state WHERE card_id = ` + newID,
		`UPDATE card_versions SET card_id = ` + oldID + ` WHERE card_id = ` + newID,
		`UPDATE removal_pending SET card_id = ` + oldID + ` WHERE card_id = ` + newID,
		`DELETE FROM card_state WHERE card_id = ` + newID,
		`UPDATE rejected_cards SET card_id = ` + oldID + `, data = replace(data, ` + newJSON + `, ` + oldJSON + `) WHERE card_id = ` + newID,
	}
	if b.name == "postgres" {
		stmts = append(stmts,
			`UPDATE card_state SET data = replace(data::text, `+newJSON+`, `+oldJSON+`)::jsonb WHERE card_id = `+oldID,
			`UPDATE card_versions SET data = replace(data::text, `+newJSON+`, `+oldJSON+`)::jsonb WHERE card_id = `+oldID,
			`UPDATE walk_seen SET ids = array_replace(ids, `+newID+`, `+oldID+`)`)
	} else {
		stmts = append(stmts,
			`UPDATE card_state SET data = replace(data, `+newJSON+`, `+oldJSON+`) WHERE card_id = `+oldID,
			`UPDATE card_versions SET data = replace(data, `+newJSON+`, `+oldJSON+`) WHERE card_id = `+oldID,
			`UPDATE walk_seen SET ids = replace(ids, `+q(string(mustJSON(t, p)))+`, `+q(string(mustJSON(t, c.id)))+`)`)
	}
	for _, s := range stmts {
		b.query(t, s)
	}
}

// checkMovedIDs: after the rescan, one row per card, under the id a sync
// stores (stored), with its history; the stored data, the rejected items
// and (seenOld, without collide) the open walk's seen ids say the same id.
func checkMovedIDs(t *testing.T, b *reopenable, f idFixture, stored func(panCard) string, collide, seenOld bool) {
	t.Helper()
	cards, plain, rejected := f.cards, f.plain, f.rejected
	// One row per card, under the id a sync stores, with its history.
	if got := one(t, b.query(t, `SELECT count(*) FROM card_state`)); got != fmt.Sprint(len(cards)+len(plain)) {
		t.Errorf("%s cards, want %d", got, len(cards)+len(plain))
	}
	for i, c := range cards {
		want := "new,changed"
		if collide && i == idCollider {
			want = "new,changed,changed"
		}
		if got := joined(b.query(t, `SELECT change FROM card_versions WHERE card_id = '`+stored(c)+`' ORDER BY version`)); got != want {
			t.Errorf("card %d (id %q): versions %q, want %q", i, c.id, got, want)
		}
	}
	if got := one(t, b.query(t, `SELECT count(*) FROM card_versions WHERE valid_to IS NULL`)); got != fmt.Sprint(len(cards)+len(plain)) {
		t.Errorf("%s open versions, want one per card", got)
	}
	if got := one(t, b.query(t, `SELECT count(*) FROM card_state WHERE data->>'id' IS NULL OR CAST(data->>'id' AS TEXT) <> card_id`)); got != "0" {
		t.Errorf("%s cards whose data's id differs from card_id", got)
	}
	if got := one(t, b.query(t, `SELECT count(*) FROM card_versions WHERE CAST(data->>'id' AS TEXT) <> card_id`)); got != "0" {
		t.Errorf("%s versions whose data's id differs from card_id", got)
	}
	if got := b.query(t, `SELECT card_id FROM rejected_cards WHERE card_id IS NOT NULL ORDER BY card_id`); len(got) != 2 ||
		!(got[0] == stored(cards[0]) && got[1] == stored(rejected) || got[1] == stored(cards[0]) && got[0] == stored(rejected)) {
		t.Errorf("rejected_cards.card_id = %q, want the stored ids", got)
	}
	if seenOld && !collide && !strings.Contains(strings.Join(b.query(t, `SELECT ids FROM walk_seen`), ""), stored(cards[5])) {
		t.Errorf("the open walk's seen ids were not moved")
	}
}

// checkResyncChangesNothing: the same upstream data synced again after the
// rescan changes nothing (rejectedRows is the rejected_cards count before
// the rescan), and a second rescan changes nothing either.
func checkResyncChangesNothing(t *testing.T, b *reopenable, f idFixture, rejectedRows string, policy *redact.Policy) {
	t.Helper()
	versions := one(t, b.query(t, `SELECT count(*) FROM card_versions`))
	run := startRun(t, b.s)
	if c := commit(t, b.s, run, f.page(2)); c.New != 0 || c.Changed != 0 || c.Returned != 0 || c.Unchanged != len(f.cards)+len(f.plain) {
		t.Errorf("sync after rescan: %+v, want every card unchanged", c)
	}
	if got := one(t, b.query(t, `SELECT count(*) FROM card_versions`)); got != versions {
		t.Errorf("card_versions: %s rows after the sync, want %s", got, versions)
	}
	if got := one(t, b.query(t, `SELECT count(*) FROM rejected_cards`)); got != rejectedRows {
		t.Errorf("rejected_cards: %s rows after the sync, want %s (the same items)", got, rejectedRows)
	}
	res, err := load.Rescan(t.Context(), b.s.(rulesStore), load.RescanOptions{Policy: policy})
	if err != nil || res.IDs != 0 || res.TotalChanged() != 0 {
		t.Errorf("second rescan: %+v, %v; want nothing changed", res, err)
	}
}

func mustJSON(t testing.TB, s string) []byte {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
