package load

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Defaults for Options.BatchPages, Options.BatchDelay and
// Options.ChangeDelay.
const (
	DefaultBatchPages  = 50
	DefaultBatchDelay  = 5 * time.Second
	DefaultChangeDelay = time.Second
)

// batchLimits bounds a WalkWriter's buffer.
type batchLimits struct {
	pages       int
	delay       time.Duration
	changeDelay time.Duration
}

func newBatchLimits(pages int, delay, changeDelay time.Duration) batchLimits {
	if pages <= 0 {
		pages = DefaultBatchPages
	}
	if delay <= 0 {
		delay = DefaultBatchDelay
	}
	if changeDelay == 0 {
		changeDelay = DefaultChangeDelay
	}
	return batchLimits{pages: pages, delay: delay, changeDelay: changeDelay}
}

// WalkWriter commits one run's pages of one stream, several pages to a
// transaction. Most runs list exactly what the warehouse holds, and a page
// that changes nothing need not cost a transaction (and an fsync) of its
// own: pages are buffered and committed together when the buffer holds
// Options.BatchPages pages, when Options.BatchDelay has passed since its
// first page, when Options.ChangeDelay has passed since its first page that
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

	buf      []*preparedPage
	bufSince time.Time
	// changeSince is when the first page with changes joined the buffer
	// (zero: none has).
	changeSince time.Time
	// state is what the writer's commits learnt: the open walk and the
	// fields this run recorded.
	state walkState
	// known are the fields and JSON types card_fields holds, read at the
	// first Add and kept up to date with every commit.
	known map[string]typeMask
}

// NewWalkWriter returns a WalkWriter for the run's walk of stream
// (StreamCards when "").
func (w *Warehouse) NewWalkWriter(runID int64, stream string) *WalkWriter {
	return &WalkWriter{w: w, runID: runID, stream: streamOf(stream)}
}

// Add takes the next page of the walk. It compares the page's cards with the
// warehouse (after redaction, one query, no write) and either buffers the
// page, when it changes nothing and the buffer has room, or commits it with
// the pages buffered before it. PageResult.Committed says what was
// committed. On error nothing of the failed batch is stored and the page is
// not taken (Add it again to retry); the pages buffered before it stay
// buffered.
func (ww *WalkWriter) Add(ctx context.Context, p Page) (_ PageResult, err error) {
	defer classify(&err)
	if p.Stream != "" && p.Stream != ww.stream {
		return PageResult{}, fmt.Errorf("add page %d: stream %q to a writer of %q", p.Number, p.Stream, ww.stream)
	}
	if ww.w.readOnly {
		return PageResult{}, ErrReadOnly
	}
	if err := ww.loadFields(ctx); err != nil {
		return PageResult{}, fmt.Errorf("add page %d: %w", p.Number, err)
	}
	pp, err := ww.w.preparePage(ctx, p)
	if err != nil {
		return PageResult{}, fmt.Errorf("add page %d: %w", p.Number, err)
	}
	now := ww.w.now()
	if len(ww.buf) == 0 {
		ww.bufSince = now
	}
	ww.buf = append(ww.buf, pp)
	if (pp.changes() || ww.newFields(&pp.fields)) && ww.changeSince.IsZero() {
		ww.changeSince = now
	}
	full := len(ww.buf) >= ww.w.batch.pages || now.Sub(ww.bufSince) >= ww.w.batch.delay ||
		!ww.changeSince.IsZero() && now.Sub(ww.changeSince) >= ww.w.batch.changeDelay
	if !full {
		return pp.res, nil
	}
	b, err := ww.commit(ctx)
	if err != nil {
		// The page was not taken; the ones before it stay buffered.
		ww.buf = ww.buf[:len(ww.buf)-1]
		return PageResult{}, fmt.Errorf("add page %d: %w", p.Number, err)
	}
	res := pp.res
	res.Committed = b
	return res, nil
}

// Buffered reports the pages Add has buffered and not committed yet: what
// Flush would commit.
func (ww *WalkWriter) Buffered() Batch {
	var b Batch
	for _, p := range ww.buf {
		b.add(p)
	}
	return b
}

// Flush commits the buffered pages, if any, in one transaction.
func (ww *WalkWriter) Flush(ctx context.Context) (err error) {
	defer classify(&err)
	if len(ww.buf) == 0 {
		return nil
	}
	first := ww.buf[0].number
	if _, err := ww.commit(ctx); err != nil {
		return fmt.Errorf("flush pages from %d: %w", first, err)
	}
	return nil
}

func (ww *WalkWriter) commit(ctx context.Context) (Batch, error) {
	b, err := ww.w.commitBatch(ctx, ww.runID, ww.stream, ww.buf, &ww.state)
	if err != nil {
		// Look the walk up again next time: the error may be that it
		// closed under the writer.
		ww.state.walkID = 0
		return Batch{}, err
	}
	for _, p := range ww.buf {
		p.fields.into(ww.known)
	}
	clear(ww.buf)
	ww.buf = ww.buf[:0]
	ww.changeSince = time.Time{}
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
	known := map[string]typeMask{}
	for rows.Next() {
		var name, types string
		if err := rows.Scan(&name, &types); err != nil {
			return fmt.Errorf("read fields: %w", err)
		}
		for t := range strings.SplitSeq(types, ",") {
			known[name] |= typeBit(t)
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
func (ww *WalkWriter) newFields(s *fieldSet) bool { return !s.within(ww.known) }
