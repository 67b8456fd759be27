package sqlite

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/batch"
	"github.com/cardsync/cardsync/load/internal/cardfield"
	"github.com/cardsync/cardsync/load/internal/walk"
)

// CommitPage stores one page now, in one transaction: card writes
// (unchanged cards cost a hash compare, not a write), versions for new,
// changed and returned cards, rejected items in rejected_cards, the page's
// seen ids (rejected items included), new top-level fields (regenerating
// cards_flat), a run_pages audit row when the page changed something, the
// checkpoint (next page = Number+1) and the run's counters. A card the
// warehouse cannot store is quarantined, never an error: the rest of its
// page commits. On error nothing is stored. Committing the same page twice
// reports its cards unchanged the second time. A walk uses a WalkWriter,
// which commits pages that change nothing in batches.
func (w *Warehouse) CommitPage(ctx context.Context, runID int64, p load.Page) (_ load.PageResult, err error) {
	defer classify(&err)
	pp, err := w.preparePage(ctx, p)
	if err != nil {
		return load.PageResult{}, fmt.Errorf("commit page %d: %w", p.Number, err)
	}
	b, err := w.commitBatch(ctx, runID, walk.StreamOf(p.Stream), []*preparedPage{pp}, &batch.WalkState{})
	if err != nil {
		return load.PageResult{}, fmt.Errorf("commit page %d: %w", p.Number, err)
	}
	res := pp.Result()
	res.Committed = b
	return res, nil
}

// preparedPage is a page redacted and compared with the warehouse, ready to
// commit: PreparedPage with the page's ids and fields as SQLite stores them.
// A page that changes nothing keeps only its ids and counters.
type preparedPage struct {
	batch.PreparedPage
	// ids is the JSON array of the ids the page listed, rejected items
	// included (walk_seen.ids), and hashes its storable cards' hashes
	// (walk_seen.hashes).
	ids    string
	hashes []byte
	fields cardfield.FieldSet
}

// preparePage redacts the page's cards (pure, outside any transaction),
// sets aside what cannot be stored, and compares the cards with the
// warehouse in one query.
func (w *Warehouse) preparePage(ctx context.Context, p load.Page) (*preparedPage, error) {
	items, err := load.PreparePageItems(w.rules, p)
	if err != nil {
		return nil, err
	}
	cards := items.Cards
	pp := &preparedPage{PreparedPage: batch.NewPreparedPage(p, w.now, len(cards), items.Rejected, items.Secrets, items.Counts)}
	for _, f := range items.Fields {
		pp.fields.Add(f.Name, f.Type)
	}
	pp.ids = jsonStrings(items.IDs)
	pp.hashes = walk.SeenHashes(cards)
	if len(cards) == 0 {
		return pp, nil
	}

	have, err := w.storedCards(ctx, pp.ids, len(cards))
	if err != nil {
		return nil, fmt.Errorf("compare cards: %w", err)
	}
	pp.Compare(cards, have, w.set.Amounts)
	pp.PreparedPage.AddKinds(&pp.fields)
	return pp, nil
}

// storedCards reads, for the first n ids of the JSON array ids, whether the
// card is stored, removed, and its data_hash, in one query that returns
// one row: measured on a 15-card page of a 9,000-card warehouse, ~41 µs,
// against ~55 µs for the same query returning a row per card, ~65 µs for
// card_id IN (?, ...) with 15 bound ids and ~130 µs for 15 single-row
// lookups. Each card is a letter (n: not stored, r: removed, c: current)
// and its hash in hex, comma-separated in the order of ids.
func (w *Warehouse) storedCards(ctx context.Context, ids string, n int) ([]batch.StoredCard, error) {
	var list string
	if err := w.page.cardHashes.QueryRowContext(ctx, ids, w.account).Scan(&list); err != nil {
		return nil, err
	}
	out := make([]batch.StoredCard, 0, n)
	for item := range strings.SplitSeq(list, ",") {
		if len(out) == n {
			break
		}
		if item == "" {
			return nil, fmt.Errorf("stored cards: empty item in %q", list)
		}
		s := batch.StoredCard{Exists: item[0] != 'n', Removed: item[0] == 'r'}
		if len(item) > 1 {
			h, err := hex.DecodeString(item[1:])
			if err != nil {
				return nil, fmt.Errorf("stored cards: %w", err)
			}
			s.Hash = h
		}
		out = append(out, s)
	}
	if len(out) != n {
		return nil, fmt.Errorf("stored cards: %d of %s answered", len(out), english.Count(n, "card"))
	}
	return out, nil
}

// jsonStrings encodes ss as a JSON array of strings. Card ids are usually
// plain text, written as they are; anything else goes through
// encoding/json.
func jsonStrings(ss []string) string {
	b := make([]byte, 0, 16*len(ss)+2)
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		if plainJSON(s) {
			b = append(b, '"')
			b = append(b, s...)
			b = append(b, '"')
			continue
		}
		q, _ := json.Marshal(s) // a string always encodes
		b = append(b, q...)
	}
	return string(append(b, ']'))
}

// plainJSON says whether s can stand between JSON quotes as it is: printable
// ASCII without a quote or a backslash.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
