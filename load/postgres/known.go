package postgres

import (
	"context"
	"fmt"

	"github.com/cardsync/cardsync/load/internal/batch"
)

// maxKnown bounds the cards a WalkWriter remembers (knownCards): about
// 10 MiB of ids and hashes. Past it the writer asks the warehouse again.
const maxKnown = 100_000

// knownCards is what a WalkWriter knows of its account's cards without
// asking the warehouse: when its walk began on an account that held no
// card at all while this Warehouse held the account's lease, the account's
// cards are exactly those the writer's own batches have committed since,
// so a page is compared with those in memory and costs no query, and a
// first backfill makes one round trip per batch instead of one per page
// more. The lease keeps every other writer out of the account; should it
// change hands (another fencing token) or a commit fail, the writer
// forgets and asks the warehouse from then on, as it does past maxKnown
// cards or when the account held cards (a resumed walk, any later run).
// Pages of the batch in hand are settled by load's ResolveRepeats, as
// when the warehouse answers.
type knownCards struct {
	checked bool
	token   int64             // the fencing token the account was found empty under
	cards   map[string][]byte // id -> data_hash; nil: unknown, ask the warehouse
}

// stored answers preparePage's comparison: from knownCards while the
// writer knows the account's cards, else from the warehouse.
func (ww *WalkWriter) stored(ctx context.Context, ids []string) ([]batch.StoredCard, error) {
	k := &ww.known
	if !k.checked {
		k.checked = true
		if err := k.start(ctx, ww.w); err != nil {
			return nil, err
		}
	}
	if k.cards == nil || ww.w.leaseToken() != k.token {
		k.forget()
		return ww.w.storedCards(ctx, ids)
	}
	have := make([]batch.StoredCard, len(ids))
	for i, id := range ids {
		h, ok := k.cards[id]
		have[i] = batch.StoredCard{Exists: ok, Hash: h}
	}
	return have, nil
}

// start remembers the account's cards (none) when it holds none and the
// Warehouse writes under the account's lease.
func (k *knownCards) start(ctx context.Context, w *Warehouse) error {
	token := w.leaseToken()
	if token <= 0 {
		return nil
	}
	var empty bool
	if err := w.pool.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM card_state WHERE account = $1)`, w.account).Scan(&empty); err != nil {
		return fmt.Errorf("compare cards: %w", err)
	}
	if empty {
		k.cards, k.token = map[string][]byte{}, token
	}
	return nil
}

// committed adds the cards a committed batch wrote.
func (k *knownCards) committed(pages []*preparedPage) {
	if k.cards == nil {
		return
	}
	for _, p := range pages {
		for _, c := range p.Fresh() {
			k.cards[c.ID()] = c.Hash()
		}
		for _, c := range p.Writes() {
			k.cards[c.ID()] = c.Hash()
		}
	}
	if len(k.cards) > maxKnown {
		k.forget()
	}
}

// forget makes the writer ask the warehouse from now on.
func (k *knownCards) forget() { k.cards = nil }

// leaseToken is the fencing token this Warehouse writes under, or 0 when
// it writes under no lease.
func (w *Warehouse) leaseToken() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fence.holder == "" {
		return 0
	}
	return w.fence.token
}
