package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/batch"
	"github.com/cardsync/cardsync/load/internal/cardfield"
	"github.com/cardsync/cardsync/load/internal/walk"
)

// WalkWriter commits one run's pages of one stream, several pages to a
// transaction. Most runs list exactly what the warehouse holds, and a page
// that changes nothing need not cost a transaction (and an fsync) of its
// own: pages are buffered and committed together when the buffer holds
// Options.BatchPages pages, when Options.BatchDelay has passed since its
// first page, when Options.CommitDelay has passed since its first page that
// changes something (a new, changed or returned card, a rejected item, a
// field or JSON type not seen before), or on Flush. Times are checked as
// pages arrive. At the API's pace (3 pages a second) a page with changes is
// committed within about a second; a backfill without pacing commits 50
// pages at a time.
//
// The checkpoint moves in the same transaction as the pages it covers, so
// after a crash the next run resumes at the first page not committed: at
// most one batch is fetched again, and no page is lost or applied twice.
//
// A WalkWriter is not safe for concurrent use. Call Flush before FinishWalk
// and before giving up on a walk (a shutdown lets the batch in hand commit).
type WalkWriter struct {
	w      *Warehouse
	runID  int64
	stream string

	// batch buffers the pages and says when they commit (ww.commit).
	batch *batch.Batcher[*preparedPage]
	// state is what the writer's commits learnt: the open walk and the
	// fields this run recorded.
	state batch.WalkState
	// known are the fields and JSON types card_fields holds, read at the
	// first Add and kept up to date with every commit.
	known map[string]cardfield.TypeMask
}

// NewWalkWriter returns a WalkWriter for the run's walk of stream
// (StreamCards when "").
func (w *Warehouse) NewWalkWriter(runID int64, stream string) *WalkWriter {
	ww := &WalkWriter{w: w, runID: runID, stream: walk.StreamOf(stream)}
	ww.batch = batch.NewBatcher(w.batch, ww.commit)
	return ww
}

// Add takes the next page of the walk. It compares the page's cards with the
// warehouse (after redaction, one query, no write) and either buffers the
// page, when it changes nothing and the buffer has room, or commits it with
// the pages buffered before it. PageResult.Committed says what was
// committed. On error nothing of the failed batch is stored and the page is
// not taken (Add it again to retry); the pages buffered before it stay
// buffered.
func (ww *WalkWriter) Add(ctx context.Context, p load.Page) (_ load.PageResult, err error) {
	defer classify(&err)
	if p.Stream != "" && p.Stream != ww.stream {
		return load.PageResult{}, fmt.Errorf("add page %d: stream %q to a writer of %q", p.Number, p.Stream, ww.stream)
	}
	if ww.w.readOnly {
		return load.PageResult{}, load.ErrReadOnly
	}
	if err := ww.loadFields(ctx); err != nil {
		return load.PageResult{}, fmt.Errorf("add page %d: %w", p.Number, err)
	}
	pp, err := ww.w.preparePage(ctx, p)
	if err != nil {
		return load.PageResult{}, fmt.Errorf("add page %d: %w", p.Number, err)
	}
	res, err := ww.batch.Add(ctx, pp, ww.w.now(), pp.Changes() || ww.newFields(&pp.fields))
	if err != nil {
		return load.PageResult{}, fmt.Errorf("add page %d: %w", p.Number, err)
	}
	return res, nil
}

// Buffered reports the pages Add has buffered and not committed yet: what
// Flush would commit.
func (ww *WalkWriter) Buffered() load.Batch { return ww.batch.Buffered() }

// FieldsSkipped implements PageWriter: the new fields the writer's
// commits left out (MaxNewFieldsPerWalk), each counted once.
func (ww *WalkWriter) FieldsSkipped() int { return ww.state.Budget.Skipped() }

// Flush commits the buffered pages, if any, in one transaction.
func (ww *WalkWriter) Flush(ctx context.Context) (err error) {
	defer classify(&err)
	return ww.batch.Flush(ctx)
}

// commit commits a batch of pages (the Batcher's commit function) and
// learns what it stored.
func (ww *WalkWriter) commit(ctx context.Context, pages []*preparedPage) (load.Batch, error) {
	b, err := ww.w.commitBatch(ctx, ww.runID, ww.stream, pages, &ww.state)
	if err != nil {
		// Look the walk up again next time: the error may be that it
		// closed under the writer.
		ww.state.WalkID = 0
		return load.Batch{}, err
	}
	for _, p := range pages {
		p.fields.Into(ww.known)
	}
	return b, nil
}

// loadFields reads card_fields once.
func (ww *WalkWriter) loadFields(ctx context.Context) error {
	if ww.known != nil {
		return nil
	}
	rows, err := ww.w.db.QueryContext(ctx, `SELECT name, json_types FROM card_fields`)
	if err != nil {
		return fmt.Errorf("read fields: %w", err)
	}
	defer rows.Close()
	known := map[string]cardfield.TypeMask{}
	for rows.Next() {
		var name, types string
		if err := rows.Scan(&name, &types); err != nil {
			return fmt.Errorf("read fields: %w", err)
		}
		for t := range strings.SplitSeq(types, ",") {
			known[name] |= cardfield.TypeBit(t)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read fields: %w", err)
	}
	ww.known = known
	return nil
}

// newFields says whether s holds a field or a JSON type of a field that
// card_fields does not.
func (ww *WalkWriter) newFields(s *cardfield.FieldSet) bool { return !s.Within(ww.known) }
