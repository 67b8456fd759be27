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
	rng := rand.New(rand.NewPCG(seed, 0))
	var cards []panCard
	for range 12 {
		pan := randomPAN(rng)
		number := rng.IntN(3) == 0
		id := pan
		if !number {
			id = spelled(rng, pan)
		}
		cards = append(cards, panCard{pan: pan, id: id, number: number})
	}
	// An item rejected under an id that is a card number no card has.
	rejPAN := randomPAN(rng)
	rejected := panCard{pan: rejPAN, id: spelled(rng, rejPAN)}
	plain := []string{"1", "abc-123", "1234567812345678"}
	const collider = 2
	mkPage := func(rev int, only ...int) load.Page {
		p := load.Page{Stream: load.StreamCards, Number: 1, TotalPages: 1}
		if only != nil {
			for _, i := range only {
				p.Cards = append(p.Cards, idCard(cards[i].id, cards[i].number, rev))
			}
			p.TotalItems = len(p.Cards)
			return p
		}
		for _, c := range cards {
			p.Cards = append(p.Cards, idCard(c.id, c.number, rev))
		}
		for _, id := range plain {
			p.Cards = append(p.Cards, idCard(id, false, rev))
		}
		p.Rejected = []load.Rejection{
			{Index: len(p.Cards), CardID: cards[0].id, Reason: "test rejection", Data: fmt.Appendf(nil, `{"id":%q,"status":{"deep":1}}`, cards[0].id)},
			{Index: len(p.Cards) + 1, CardID: rejected.id, Reason: "test rejection", Data: fmt.Appendf(nil, `{"id":%q,"status":"odd"}`, rejected.id)},
		}
		p.TotalItems = len(p.Cards) + len(p.Rejected)
		return p
	}
	policy := load.Options{}.Settings().Policy
	for _, b := range reopenables(t, load.Options{}) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			pg := b.name == "postgres"
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
			for _, c := range append(append([]panCard(nil), cards...), rejected) {
				p := stored(c)
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
				if pg {
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
			b.query(t, `UPDATE rules_state SET rules_version = 1`)
			all := append(append([]panCard(nil), cards...), rejected)
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
				if c := commit(t, b.s, run, mkPage(2, collider)); c.New != 1 {
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
			// One row per card, under the id a sync stores, with its history.
			if got := one(t, b.query(t, `SELECT count(*) FROM card_state`)); got != fmt.Sprint(len(cards)+len(plain)) {
				t.Errorf("%s cards, want %d", got, len(cards)+len(plain))
			}
			for i, c := range cards {
				want := "new,changed"
				if collide && i == collider {
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
			// The same upstream data synced again changes nothing.
			versions := one(t, b.query(t, `SELECT count(*) FROM card_versions`))
			run = startRun(t, b.s)
			if c := commit(t, b.s, run, mkPage(2)); c.New != 0 || c.Changed != 0 || c.Returned != 0 || c.Unchanged != len(cards)+len(plain) {
				t.Errorf("sync after rescan: %+v, want every card unchanged", c)
			}
			if got := one(t, b.query(t, `SELECT count(*) FROM card_versions`)); got != versions {
				t.Errorf("card_versions: %s rows after the sync, want %s", got, versions)
			}
			if got := one(t, b.query(t, `SELECT count(*) FROM rejected_cards`)); got != rejectedRows {
				t.Errorf("rejected_cards: %s rows after the sync, want %s (the same items)", got, rejectedRows)
			}
			res, err = load.Rescan(ctx, b.s.(rulesStore), load.RescanOptions{Policy: policy})
			if err != nil || res.IDs != 0 || res.TotalChanged() != 0 {
				t.Errorf("second rescan: %+v, %v; want nothing changed", res, err)
			}
		})
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
