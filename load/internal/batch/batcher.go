package batch

import (
	"context"
	"fmt"
	"time"

	"github.com/cardsync/cardsync/load"
)

// Batchable is what a Batcher buffers: a destination's prepared page, which
// embeds PreparedPage (and so has its Prepared method).
type Batchable interface {
	Prepared() *PreparedPage
}

// Batcher is a WalkWriter's buffer of prepared pages and its rule for when
// they commit, whatever the database: pages are buffered and committed
// together, by the commit function it was made with, when the buffer holds
// BatchLimits.Pages pages, when BatchLimits.Delay has passed since its first
// page, when BatchLimits.CommitDelay has passed since its first page that
// changes something, or on Flush. Times are those given to Add. Both
// WalkWriters (SQLite's and package load/postgres's) are a Batcher with the
// preparation of a page in front of it. A Batcher is not safe for
// concurrent use.
type Batcher[P Batchable] struct {
	limits load.BatchLimits
	commit func(ctx context.Context, pages []P) (load.Batch, error)

	pages []P
	since time.Time
	// changeSince is when the first page with changes joined the buffer
	// (zero: none has).
	changeSince time.Time
}

// NewBatcher returns an empty Batcher with limits (their defaults filled
// in) that commits a batch with commit: the pages in order, in one
// transaction, or nothing on error. commit may keep nothing of the slice.
func NewBatcher[P Batchable](limits load.BatchLimits, commit func(ctx context.Context, pages []P) (load.Batch, error)) *Batcher[P] {
	return &Batcher[P]{limits: limits.WithDefaults(), commit: commit}
}

// Add buffers p, taken at now (changes: p changes something), and commits
// the buffer when that makes it full. A card p compared as new that a
// buffered page already writes is compared with that page's instead
// (resolveRepeats), so the batch stores it once. It returns p's result, whose
// Committed says what was committed (nothing when p was only buffered). On
// a failed commit nothing of the batch is stored, p is dropped from the
// buffer (it was not taken: Add it again to retry), the pages buffered
// before it stay, and the commit's error is returned as it is.
func (b *Batcher[P]) Add(ctx context.Context, p P, now time.Time, changes bool) (load.PageResult, error) {
	if len(b.pages) == 0 {
		b.since = now
	}
	b.resolveRepeats(p.Prepared())
	b.pages = append(b.pages, p)
	if changes && b.changeSince.IsZero() {
		b.changeSince = now
	}
	full := len(b.pages) >= b.limits.Pages || now.Sub(b.since) >= b.limits.Delay ||
		!b.changeSince.IsZero() && now.Sub(b.changeSince) >= b.limits.CommitDelay
	if !full {
		return p.Prepared().res, nil
	}
	committed, err := b.flush(ctx)
	if err != nil {
		// The page was not taken; the ones before it stay buffered.
		b.pages = b.pages[:len(b.pages)-1]
		return load.PageResult{}, err
	}
	// Read after the commit: its write transaction has the last word on
	// the page's counts.
	res := p.Prepared().res
	res.Committed = committed
	return res, nil
}

// resolveRepeats settles the cards p compared as new that a buffered page
// already writes (PreparedPage.ResolveRepeats): the pages of a batch were
// all compared with the warehouse as it was before the batch, and a card
// inserted by one of them is no longer new for the next.
func (b *Batcher[P]) resolveRepeats(p *PreparedPage) {
	if len(p.fresh) == 0 || len(b.pages) == 0 {
		return
	}
	earlier := map[string][]byte{}
	for _, q := range b.pages {
		q := q.Prepared()
		for _, c := range q.fresh {
			earlier[c.id] = c.hash
		}
		for _, c := range q.writes {
			earlier[c.id] = c.hash
		}
	}
	p.ResolveRepeats(earlier)
}

// Buffered reports the pages buffered and not committed yet: what Flush
// would commit.
func (b *Batcher[P]) Buffered() load.Batch {
	var batch load.Batch
	for _, p := range b.pages {
		p.Prepared().AddTo(&batch)
	}
	return batch
}

// Flush commits the buffered pages, if any, in one transaction.
func (b *Batcher[P]) Flush(ctx context.Context) error {
	if len(b.pages) == 0 {
		return nil
	}
	first := b.pages[0].Prepared().number
	if _, err := b.flush(ctx); err != nil {
		return fmt.Errorf("flush pages from %d: %w", first, err)
	}
	return nil
}

// flush commits the buffer and empties it when the commit succeeds.
func (b *Batcher[P]) flush(ctx context.Context) (load.Batch, error) {
	committed, err := b.commit(ctx, b.pages)
	if err != nil {
		return load.Batch{}, err
	}
	clear(b.pages)
	b.pages = b.pages[:0]
	b.changeSince = time.Time{}
	return committed, nil
}
