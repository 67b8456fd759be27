package postgres

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/batch"
	"github.com/cardsync/cardsync/load/internal/cardfield"
	"github.com/cardsync/cardsync/load/internal/walk"
)

// WalkWriter commits one run's pages of one stream, several pages to a
// transaction, with the rules of sqlite.WalkWriter (a batch.Batcher): a batch
// commits when it holds BatchPages pages, BatchDelay after its first page,
// CommitDelay after its first page that changes something, or on Flush,
// together with the checkpoint after its last page and the run's counters.
// It is not safe for concurrent use.
type WalkWriter struct {
	w      *Warehouse
	runID  int64
	stream string

	batch *batch.Batcher[*preparedPage]
	walk  batch.WalkState
	known knownCards
}

// NewWalkWriter returns a WalkWriter for the run's walk of stream
// (load.StreamCards when "").
func (w *Warehouse) NewWalkWriter(runID int64, stream string) *WalkWriter {
	ww := &WalkWriter{w: w, runID: runID, stream: streamOf(stream)}
	ww.batch = batch.NewBatcher(w.batch, ww.commit)
	return ww
}

// Add takes the next page of the walk, as sqlite.WalkWriter.Add: it compares
// the page's cards with the warehouse (one query, no write), then buffers
// the page or commits it with the pages buffered before it. On error
// nothing of the failed batch is stored and the page is not taken; a
// refused lease is an *LeaseLostError.
func (ww *WalkWriter) Add(ctx context.Context, p load.Page) (_ load.PageResult, err error) {
	defer classify(&err)
	if p.Stream != "" && p.Stream != ww.stream {
		return load.PageResult{}, fmt.Errorf("add page %d: stream %q to a writer of %q", p.Number, p.Stream, ww.stream)
	}
	pp, err := ww.w.preparePage(ctx, p, ww.stored)
	if err != nil {
		return load.PageResult{}, fmt.Errorf("add page %d: %w", p.Number, err)
	}
	res, err := ww.batch.Add(ctx, pp, ww.w.now(), pp.Changes())
	if err != nil {
		return load.PageResult{}, fmt.Errorf("add page %d: %w", p.Number, err)
	}
	return res, nil
}

// Buffered reports the pages buffered and not committed yet.
func (ww *WalkWriter) Buffered() load.Batch { return ww.batch.Buffered() }

// FieldsSkipped implements load.PageWriter: the new fields the writer's
// commits left out (load.MaxNewFieldsPerWalk), each counted once.
func (ww *WalkWriter) FieldsSkipped() int { return ww.walk.Budget.Skipped() }

// Flush commits the buffered pages, if any, in one transaction.
func (ww *WalkWriter) Flush(ctx context.Context) (err error) {
	defer classify(&err)
	return ww.batch.Flush(ctx)
}

// commit commits a batch (the Batcher's commit function).
func (ww *WalkWriter) commit(ctx context.Context, pages []*preparedPage) (load.Batch, error) {
	b, err := ww.w.commitBatch(ctx, ww.runID, ww.stream, pages, &ww.walk)
	if err != nil {
		// Look the walk up again next time: the error may be that it
		// closed under the writer.
		ww.walk.WalkID = 0
		ww.known.forget()
		return load.Batch{}, err
	}
	ww.known.committed(pages)
	return b, nil
}

// CommitPage stores one page now, in one transaction, as
// sqlite.Warehouse.CommitPage.
func (w *Warehouse) CommitPage(ctx context.Context, runID int64, p load.Page) (_ load.PageResult, err error) {
	defer classify(&err)
	pp, err := w.preparePage(ctx, p, w.storedCards)
	if err != nil {
		return load.PageResult{}, fmt.Errorf("commit page %d: %w", p.Number, err)
	}
	b, err := w.commitBatch(ctx, runID, streamOf(p.Stream), []*preparedPage{pp}, &batch.WalkState{})
	if err != nil {
		return load.PageResult{}, fmt.Errorf("commit page %d: %w", p.Number, err)
	}
	res := pp.Result()
	res.Committed = b
	return res, nil
}

// preparedPage is a page redacted and compared with the warehouse:
// batch.PreparedPage with the ids the page listed as walk_seen stores them
// and its cards' top-level fields.
type preparedPage struct {
	batch.PreparedPage
	ids []string
	// hashes are the storable cards' hashes (walk_seen.hashes), in the
	// order of the first ids.
	hashes []byte
	fields cardfield.FieldSet
}

// pgUnstorable says why PostgreSQL cannot store a card load accepted, or "".
func pgUnstorable(c load.PreparedCard) string {
	switch {
	case !utf8.ValidString(c.ID) || strings.ContainsRune(c.ID, 0):
		return "cannot be stored: the card id is not UTF-8 text without NUL (PostgreSQL text)"
	}
	return jsonbUnstorable(c.Data)
}

// pgID is an id as walk_seen stores it: load's ids for rejected items
// without one begin with a NUL byte, which text cannot hold; card ids never
// hold control characters, so SOH stands in without meeting a real id.
func pgID(id string) string {
	if strings.HasPrefix(id, "\x00") {
		return "\x01" + clean(id[1:])
	}
	return clean(id)
}

// preparePage redacts a page and compares its cards with what stored
// says the warehouse holds of them.
func (w *Warehouse) preparePage(ctx context.Context, p load.Page, stored func(context.Context, []string) ([]batch.StoredCard, error)) (*preparedPage, error) {
	items, err := load.PreparePageItems(w.rules, p)
	if err != nil {
		return nil, err
	}
	// Cards PostgreSQL cannot store join the rejected items; the ids keep
	// load's order: cards, then rejected items.
	cards := items.Cards[:0:0]
	var late []load.Rejection
	for _, c := range items.Cards {
		if why := pgUnstorable(c); why != "" {
			i := c.Index
			late = append(late, load.Rejection{Index: i, CardID: clean(c.ID), Reason: why, Data: p.Cards[i].Data})
			continue
		}
		cards = append(cards, c)
	}
	rejected := append(items.Rejected, late...)
	pp := &preparedPage{PreparedPage: batch.NewPreparedPage(p, w.now, len(cards), rejected, items.Secrets, items.Counts), fields: pageFields(items.Fields)}
	pp.ids = make([]string, 0, len(items.IDs))
	for _, c := range cards {
		pp.ids = append(pp.ids, c.ID)
	}
	for _, id := range items.IDs[len(items.Cards):] {
		pp.ids = append(pp.ids, pgID(id))
	}
	for _, r := range late {
		pp.ids = append(pp.ids, r.CardID)
	}
	pp.hashes = walk.SeenHashes(cards)
	if len(cards) == 0 {
		return pp, nil
	}
	have, err := stored(ctx, pp.ids[:len(cards)])
	if err != nil {
		return nil, err
	}
	if len(have) != len(cards) {
		return nil, fmt.Errorf("compare cards: %d of %s answered", len(have), english.Count(len(cards), "card"))
	}
	pp.Compare(cards, have, w.amounts)
	pp.PreparedPage.AddKinds(&pp.fields)
	return pp, nil
}

// storedCards reads what the warehouse holds of the cards ids, in their
// order, in one query. It plans with the ids' values (an unnamed
// statement), never with a cached generic plan: one made while card_state
// was small scans the table, and a backfill that grows it then spent most
// of its time here (14 of 30 s for 20,000 cards).
func (w *Warehouse) storedCards(ctx context.Context, ids []string) ([]batch.StoredCard, error) {
	rows, err := w.pool.Query(ctx, `SELECT c.card_id IS NOT NULL, c.removed_at IS NOT NULL, c.data_hash
		FROM unnest($1::text[]) WITH ORDINALITY AS j(id, ord)
		LEFT JOIN card_state c ON c.account = $2 AND c.card_id = j.id
		ORDER BY j.ord`, pgx.QueryExecModeCacheDescribe, ids, w.account)
	if err != nil {
		return nil, fmt.Errorf("compare cards: %w", err)
	}
	have, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (c batch.StoredCard, err error) {
		err = r.Scan(&c.Exists, &c.Removed, &c.Hash)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("compare cards: %w", err)
	}
	return have, nil
}
