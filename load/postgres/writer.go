package postgres

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cardsync/cardsync/load"
)

// WalkWriter commits one run's pages of one stream, several pages to a
// transaction, with the rules of load.WalkWriter: a batch commits when it
// holds BatchPages pages, BatchDelay after its first page, ChangeDelay
// after its first page that changes something, or on Flush, together with
// the checkpoint after its last page and the run's counters. It is not
// safe for concurrent use.
type WalkWriter struct {
	w      *Warehouse
	runID  int64
	stream string

	buf         []*preparedPage
	bufSince    time.Time
	changeSince time.Time
	walk        walkState
}

// walkState is what a WalkWriter's commits learnt: the open walk.
type walkState struct {
	walkID     int64
	firstTotal int
}

// NewWalkWriter returns a WalkWriter for the run's walk of stream
// (load.StreamCards when "").
func (w *Warehouse) NewWalkWriter(runID int64, stream string) *WalkWriter {
	return &WalkWriter{w: w, runID: runID, stream: streamOf(stream)}
}

// Add takes the next page of the walk, as load.WalkWriter.Add: it compares
// the page's cards with the warehouse (one query, no write), then buffers
// the page or commits it with the pages buffered before it. On error
// nothing of the failed batch is stored and the page is not taken; a
// refused lease is an *LeaseLostError.
func (ww *WalkWriter) Add(ctx context.Context, p load.Page) (_ load.PageResult, err error) {
	defer classify(&err)
	if p.Stream != "" && p.Stream != ww.stream {
		return load.PageResult{}, fmt.Errorf("add page %d: stream %q to a writer of %q", p.Number, p.Stream, ww.stream)
	}
	pp, err := ww.w.preparePage(ctx, p)
	if err != nil {
		return load.PageResult{}, fmt.Errorf("add page %d: %w", p.Number, err)
	}
	now := ww.w.now()
	if len(ww.buf) == 0 {
		ww.bufSince = now
	}
	ww.buf = append(ww.buf, pp)
	if pp.changes() && ww.changeSince.IsZero() {
		ww.changeSince = now
	}
	lim := ww.w.batch
	full := len(ww.buf) >= lim.pages || now.Sub(ww.bufSince) >= lim.delay ||
		!ww.changeSince.IsZero() && now.Sub(ww.changeSince) >= lim.changeDelay
	if !full {
		return pp.res, nil
	}
	b, err := ww.commit(ctx)
	if err != nil {
		ww.buf = ww.buf[:len(ww.buf)-1]
		return load.PageResult{}, fmt.Errorf("add page %d: %w", p.Number, err)
	}
	res := pp.res
	res.Committed = b
	return res, nil
}

// Buffered reports the pages buffered and not committed yet.
func (ww *WalkWriter) Buffered() load.Batch {
	var b load.Batch
	for _, p := range ww.buf {
		p.addTo(&b)
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

func (ww *WalkWriter) commit(ctx context.Context) (load.Batch, error) {
	b, err := ww.w.commitBatch(ctx, ww.runID, ww.stream, ww.buf, &ww.walk)
	if err != nil {
		ww.walk = walkState{}
		return load.Batch{}, err
	}
	clear(ww.buf)
	ww.buf = ww.buf[:0]
	ww.changeSince = time.Time{}
	return b, nil
}

// CommitPage stores one page now, in one transaction, as
// load.Warehouse.CommitPage.
func (w *Warehouse) CommitPage(ctx context.Context, runID int64, p load.Page) (_ load.PageResult, err error) {
	defer classify(&err)
	pp, err := w.preparePage(ctx, p)
	if err != nil {
		return load.PageResult{}, fmt.Errorf("commit page %d: %w", p.Number, err)
	}
	b, err := w.commitBatch(ctx, runID, streamOf(p.Stream), []*preparedPage{pp}, &walkState{})
	if err != nil {
		return load.PageResult{}, fmt.Errorf("commit page %d: %w", p.Number, err)
	}
	res := pp.res
	res.Committed = b
	return res, nil
}

// preparedPage is a page redacted and compared with the warehouse.
type preparedPage struct {
	number, totalPages, totalItems int
	fetchedAt                      time.Time
	duration                       time.Duration
	bodySHA256                     string
	requests, retries, limited     int64
	authRequests                   int64
	items, cards                   int
	ids                            []string
	fresh, writes                  []cardWrite
	rejected                       []load.Rejection
	res                            load.PageResult
}

type cardWrite struct {
	id, data string
	hash     []byte
	change   string
}

func (p *preparedPage) changes() bool {
	return len(p.fresh) > 0 || len(p.writes) > 0 || len(p.rejected) > 0
}

// addTo is load.Batch's accounting of one page.
func (p *preparedPage) addTo(b *load.Batch) {
	if b.Pages == 0 {
		b.FirstPage = p.number
	}
	b.Pages++
	b.LastPage = p.number
	b.TotalPages, b.TotalItems = p.totalPages, p.totalItems
	b.Cards += p.cards
	b.New += p.res.New
	b.Changed += p.res.Changed
	b.Unchanged += p.res.Unchanged
	b.Rejected += p.res.Rejected
}

// pgUnstorable says why PostgreSQL cannot store a card load accepted, or "".
func pgUnstorable(c load.PreparedCard) string {
	switch {
	case !utf8.ValidString(c.ID) || strings.ContainsRune(c.ID, 0):
		return "cannot be stored: the card id is not UTF-8 text without NUL (PostgreSQL text)"
	case bytes.Contains(c.Data, []byte(`\u0000`)):
		return `cannot be stored: a string holds \u0000, which PostgreSQL jsonb refuses`
	}
	return ""
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

func (w *Warehouse) preparePage(ctx context.Context, p load.Page) (*preparedPage, error) {
	items, err := load.PreparePageItems(w.policy, p)
	if err != nil {
		return nil, err
	}
	pp := &preparedPage{
		number: p.Number, totalPages: p.TotalPages, totalItems: p.TotalItems,
		fetchedAt: p.FetchedAt, duration: p.Duration, bodySHA256: p.BodySHA256,
		requests: p.Requests, retries: p.Retries, limited: p.RateLimited, authRequests: p.AuthRequests,
		items: len(p.Cards) + len(p.Rejected),
	}
	if pp.fetchedAt.IsZero() {
		pp.fetchedAt = w.now()
	}
	// Cards PostgreSQL cannot store join the rejected items; the ids keep
	// load's order: cards, then rejected items.
	cards := items.Cards[:0:0]
	rejected := items.Rejected
	var late []load.Rejection
	for _, c := range items.Cards {
		if why := pgUnstorable(c); why != "" {
			i := indexOf(p.Cards, c.ID)
			late = append(late, load.Rejection{Index: i, CardID: clean(c.ID), Reason: why, Data: p.Cards[i].Data})
			continue
		}
		cards = append(cards, c)
	}
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
	rejected = append(rejected, late...)
	pp.cards = len(cards)
	pp.rejected = rejected
	pp.res.Rejected = len(rejected)
	for _, r := range rejected {
		r.Data = nil
		pp.res.Rejections = append(pp.res.Rejections, r)
	}
	if len(cards) == 0 {
		return pp, nil
	}
	rows, err := w.pool.Query(ctx, `SELECT c.card_id IS NOT NULL, c.removed_at IS NOT NULL, c.data_hash
		FROM unnest($1::text[]) WITH ORDINALITY AS j(id, ord)
		LEFT JOIN card_state c ON c.account = $2 AND c.card_id = j.id
		ORDER BY j.ord`, pp.ids[:len(cards)], w.account)
	if err != nil {
		return nil, fmt.Errorf("compare cards: %w", err)
	}
	var have []storedCard
	for rows.Next() {
		var c storedCard
		if err := rows.Scan(&c.exists, &c.removed, &c.hash); err != nil {
			rows.Close()
			return nil, fmt.Errorf("compare cards: %w", err)
		}
		have = append(have, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("compare cards: %w", err)
	}
	if len(have) != len(cards) {
		return nil, fmt.Errorf("compare cards: %d of %d cards answered", len(have), len(cards))
	}
	for i, c := range cards {
		s := have[i]
		change := ""
		switch {
		case !s.exists:
			change = "new"
			pp.res.New++
		case s.removed:
			change = "returned"
			pp.res.Changed++
		case !bytes.Equal(s.hash, c.Hash):
			change = "changed"
			pp.res.Changed++
		default:
			pp.res.Unchanged++
		}
		cw := cardWrite{id: c.ID, data: string(c.Data), hash: c.Hash, change: change}
		switch change {
		case "new":
			pp.fresh = append(pp.fresh, cw)
		case "":
		default:
			pp.writes = append(pp.writes, cw)
		}
	}
	return pp, nil
}

// storedCard is what the warehouse holds of a card, for the comparison.
type storedCard struct {
	exists, removed bool
	hash            []byte
}

func indexOf(cards []load.Card, id string) int {
	for i, c := range cards {
		if c.ID == id {
			return i
		}
	}
	return -1
}
