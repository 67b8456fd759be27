package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
)

// The steps of a run between its start line and its end: the account
// snapshot, the card walk page by page, and the walk's close.

// statsDelta tracks client counters so each page commit carries only what
// happened since the previous commit.
type statsDelta struct {
	c    *extract.Client
	last extract.Stats
}

func (d *statsDelta) take() extract.Stats {
	s := d.c.Stats()
	out := extract.Stats{
		Requests:     s.Requests - d.last.Requests,
		Retries:      s.Retries - d.last.Retries,
		RateLimited:  s.RateLimited - d.last.RateLimited,
		AuthRequests: s.AuthRequests - d.last.AuthRequests,
	}
	d.last = s
	return out
}

// commitTimeout bounds a warehouse write that must finish even after the
// run's context is cancelled, so a page in hand is committed on shutdown.
const commitTimeout = 30 * time.Second

// snapshotAccount reads the account and stores a snapshot. A failed read
// (errors after retries, a body that cannot be parsed, an amount the
// warehouse refuses) does not stop the run: the card walk goes on, no
// snapshot is written and sync_runs.account_error says why. Only an
// interruption or a warehouse failure is returned.
func (j *Job) snapshotAccount(ctx context.Context, client *extract.Client, log *slog.Logger, runID int64, res *Result) error {
	w := j.Warehouse
	acct, err := client.Account(ctx)
	if err == nil {
		if len(acct.Missing) > 0 {
			log.Warn("account response omits fields the spec says are always present; stored as NULL", "fields", acct.Missing)
		}
		if len(acct.Rounded) > 0 {
			log.Warn("account amounts had more decimals than api.amount_scale; rounded half to even (the snapshot's raw JSON keeps the exact text)",
				"fields", acct.Rounded)
		}
		err = w.SaveAccount(ctx, runID, accountSnapshot(acct))
		if err == nil {
			res.AccountSnapshotAt = j.now()
			return nil
		}
		if !errors.Is(err, load.ErrBadData) {
			return err
		}
	}
	if ctx.Err() != nil {
		return err
	}
	res.AccountError = j.Client.Scrub("read account: " + err.Error())
	log.Error("no account snapshot this run; the card walk goes on", "err", err)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	if rerr := w.RecordAccountError(cctx, runID, res.AccountError); rerr != nil {
		return rerr
	}
	return nil
}

// walk reads the cards page by page from first and commits them in
// batches, with a heartbeat now and then; it stops at the last page, at a
// fetch or warehouse error, at a shutdown, or when the run lock is lost.
func (j *Job) walk(ctx context.Context, client *extract.Client, log *slog.Logger, runID int64, first int, delta *statsDelta, res *Result) (err error) {
	wk := j.newWalker(log, runID, res)
	// One line for the walk, after its last commit: the names could be
	// many and long, so only their number.
	defer wk.reportFieldsSkipped()
	// Whatever ends the walk (its last page, a shutdown, a fetch error), the
	// batch in hand commits, as a page in hand always did; not after a
	// warehouse error, which the next commit would likely meet again.
	defer func() { err = wk.flush(ctx, err) }()
	if j.FetchAhead <= 0 {
		var terr error
		ferr := j.fetchPages(ctx, client, first, delta, func(f fetched) bool {
			terr = wk.take(ctx, f)
			return terr == nil
		})
		return cmp.Or(terr, ferr)
	}
	return j.walkAhead(ctx, client, first, delta, wk)
}

// walkAhead is walk with the pages going to the warehouse from a goroutine
// of their own, up to FetchAhead behind the fetch: a commit that waits
// (for its turn on a file other accounts commit to, for a server's WAL
// flush) no longer holds the next request back, so the walk keeps its
// pace.
func (j *Job) walkAhead(ctx context.Context, client *extract.Client, first int, delta *statsDelta, wk *walker) error {
	// A failed commit stops the fetch in progress at once.
	fctx, stopFetch := context.WithCancel(ctx)
	defer stopFetch()
	queue := make(chan fetched, j.FetchAhead)
	failed := make(chan struct{})
	taken := make(chan error, 1)
	go func() {
		err := wk.takeAll(ctx, queue, failed)
		if err != nil {
			stopFetch()
		}
		taken <- err
	}()
	ferr := j.fetchPages(fctx, client, first, delta, func(f fetched) bool {
		select {
		case queue <- f:
			return true
		case <-failed:
			return false
		}
	})
	close(queue)
	if terr := <-taken; terr != nil {
		// The pages fetched after the failed one are not stored; their
		// requests still count.
		for f := range queue {
			wk.count(f.stats)
		}
		return terr
	}
	return ferr
}

// fetched is a page in hand and the client's counters since the previous
// one.
type fetched struct {
	page  *extract.Page
	stats extract.Stats
}

// DefaultFetchAhead is the FetchAhead a serve of several accounts gives
// each: about 10 s at the API's pace. A kill loses the pages
// waiting, as it loses the batch in hand; the next run fetches them again.
const DefaultFetchAhead = 32

// fetchPages walks the pages from first on, handing each to put with the
// client's counters since the previous one, until the walk ends, fails,
// is stopped, or put refuses a page (the warehouse side failed: its error
// is the walk's).
func (j *Job) fetchPages(ctx context.Context, client *extract.Client, first int, delta *statsDelta, put func(fetched) bool) error {
	for page, err := range client.Pages(ctx, first) {
		if err != nil {
			return fmt.Errorf("walk cards: %w", err)
		}
		if !put(fetched{page: page, stats: delta.take()}) {
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err := j.Lock.Check(); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// takeAll commits the fetched pages in order until queue is closed, or
// until one fails: then it closes failed and returns the error.
func (wk *walker) takeAll(ctx context.Context, queue <-chan fetched, failed chan<- struct{}) error {
	for f := range queue {
		if err := wk.take(ctx, f); err != nil {
			close(failed)
			return err
		}
	}
	return nil
}

// walker is the state of one card walk.
type walker struct {
	j     *Job
	log   *slog.Logger
	runID int64
	res   *Result
	// Pages are buffered and committed in batches (the PageWriter: 50
	// pages, 5 s after the first, or 1 s after the first with changes).
	ww             load.PageWriter
	start          time.Time
	lastBeat       time.Time
	every          time.Duration // between heartbeats
	warehouseErr   bool          // a commit or heartbeat failed: the batch in hand is not flushed
	warnedRejected map[string]bool
	// lastPage is the walk's last page as the client knows it (the pages'
	// extract.Page.LastPage): progress counts to it, not to a total_pages
	// the client will never reach.
	lastPage int
}

func (j *Job) newWalker(log *slog.Logger, runID int64, res *Result) *walker {
	wk := &walker{j: j, log: log, runID: runID, res: res}
	wk.start = j.now()
	wk.lastBeat = wk.start
	wk.every = j.HeartbeatEvery
	if wk.every <= 0 {
		wk.every = 10 * time.Second
	}
	wk.ww = j.Warehouse.PageWriter(runID, Stream)
	// One warn line per rejected card per run, even when a page is fetched
	// twice.
	wk.warnedRejected = map[string]bool{}
	return wk
}

// take commits one page (in the batch in hand), logs what it held and
// beats the heartbeat when it is due.
func (wk *walker) take(ctx context.Context, f fetched) error {
	page := f.page
	wk.lastPage = max(wk.lastPage, page.LastPage)
	pr, err := wk.add(ctx, page, f.stats)
	if err != nil {
		wk.warehouseErr = true
		return err
	}
	wk.j.markProgress()
	wk.warnRejected(page.Number, pr.Rejections)
	wk.log.Debug("page read", "page", page.Number, "total_pages", page.Pagination.TotalPages,
		"cards", len(page.Cards), "new", pr.New, "changed", pr.Changed, "returned", pr.Returned, "unchanged", pr.Unchanged,
		"committed_pages", pr.Committed.Pages)
	wk.committed(pr.Committed)
	if now := wk.j.now(); now.Sub(wk.lastBeat) >= wk.every {
		wk.lastBeat = now
		if err := wk.j.Warehouse.Heartbeat(ctx, wk.runID); err != nil && ctx.Err() == nil {
			wk.warehouseErr = true
			return err
		}
	}
	return nil
}

// add hands page to the writer with the client's counters since the
// previous page, and adds those to the run's.
func (wk *walker) add(ctx context.Context, page *extract.Page, d extract.Stats) (load.PageResult, error) {
	cards := make([]load.Card, len(page.Cards))
	for i, c := range page.Cards {
		cards[i] = load.Card{ID: c.ID, Data: c.Raw}
	}
	rejected := make([]load.Rejection, len(page.Rejected))
	for i, r := range page.Rejected {
		rejected[i] = load.Rejection{Index: r.Index, CardID: r.ID, Reason: wk.j.Client.Scrub(r.Reason), Data: r.Raw}
	}
	wk.count(d)
	// The page is in hand: take it even if a shutdown began meanwhile.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	return wk.ww.Add(cctx, load.Page{
		Stream:       Stream,
		Number:       page.Number,
		TotalPages:   page.Pagination.TotalPages,
		TotalItems:   page.Pagination.Total,
		Cards:        cards,
		Rejected:     rejected,
		FetchedAt:    wk.j.now(),
		Duration:     page.Duration,
		BodySHA256:   page.BodySHA256,
		Requests:     d.Requests,
		Retries:      d.Retries,
		RateLimited:  d.RateLimited,
		AuthRequests: d.AuthRequests,
		Anomaly:      string(page.Anomaly),
	})
}

// count adds the client's counters of a page to the run's.
func (wk *walker) count(d extract.Stats) {
	res := wk.res
	res.Requests += d.Requests
	res.Retries += d.Retries
	res.RateLimited += d.RateLimited
	res.AuthRequests += d.AuthRequests
}

// warnRejected logs each card the warehouse set aside, once per run.
func (wk *walker) warnRejected(page int, rejections []load.Rejection) {
	for _, r := range rejections {
		key := fmt.Sprintf("%s\x00%d:%d\x00%s", r.CardID, page, r.Index, r.Reason)
		if r.CardID != "" {
			key = r.CardID + "\x00" + r.Reason
		}
		if !wk.warnedRejected[key] {
			wk.warnedRejected[key] = true
			wk.log.Warn("card set aside in rejected_cards; the rest of the page is stored", "page", page,
				"index", r.Index, "card_id", r.CardID, "reason", r.Reason)
		}
	}
}

// committed adds a committed batch to the run's result and reports the
// progress.
func (wk *walker) committed(b load.Batch) {
	if b.Pages == 0 {
		return
	}
	res := wk.res
	res.Pages += b.Pages
	res.Cards += b.New + b.Changed + b.Returned + b.Unchanged
	res.New += b.New
	res.Changed += b.Changed
	res.Returned += b.Returned
	res.Unchanged += b.Unchanged
	res.Rejected += b.Rejected
	wk.log.Debug("pages committed", "first_page", b.FirstPage, "last_page", b.LastPage, "total_pages", b.TotalPages,
		"cards", b.Cards, "new", b.New, "changed", b.Changed, "returned", b.Returned, "unchanged", b.Unchanged)
	totalPages := b.TotalPages
	if wk.lastPage > 0 {
		totalPages = min(totalPages, max(wk.lastPage, b.LastPage))
	}
	if j := wk.j; j.Progress != nil {
		j.Progress(Progress{RunID: wk.runID, Page: b.LastPage, TotalPages: totalPages,
			TotalItems: b.TotalItems, Cards: res.Cards, Elapsed: j.now().Sub(wk.start),
			Resumed: res.Resumed, StartPage: res.StartPage})
	}
	if j := wk.j; j.Status != nil {
		j.Status(fmt.Sprintf("run %d: page %d/%d", wk.runID, b.LastPage, totalPages))
	}
}

// flush commits the batch in hand when the walk ends, unless a warehouse
// error ended it, and returns the walk's error: err, or the flush's when
// the walk had none (else the flush's is logged).
func (wk *walker) flush(ctx context.Context, err error) error {
	if wk.warehouseErr {
		return err
	}
	b := wk.ww.Buffered()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	if ferr := wk.ww.Flush(cctx); ferr != nil {
		if err == nil {
			return ferr
		}
		wk.log.Error("commit the pages in hand", "err", ferr)
		return err
	}
	wk.committed(b)
	return err
}

// reportFieldsSkipped records, and warns about, the new card fields the
// walk found beyond those a walk may add.
func (wk *walker) reportFieldsSkipped() {
	res := wk.res
	if res.FieldsSkipped = wk.ww.FieldsSkipped(); res.FieldsSkipped > 0 {
		wk.log.Warn("the walk found more new card fields than a walk may add; the rest have no card_fields row or cards_flat column, their values stay in the cards' data",
			"fields_skipped", res.FieldsSkipped, "max_new_fields", load.MaxNewFieldsPerWalk)
	}
}

// finishWalk decides whether the walk was complete and consistent and only
// then lets the warehouse act on the cards it did not see: a first miss
// makes a card pending, a second consecutive one marks it removed.
func (j *Job) finishWalk(ctx context.Context, log *slog.Logger, runID int64, opts Options, res *Result) error {
	w := j.Warehouse
	sum, err := w.WalkSummary(ctx, Stream)
	if err != nil {
		return err
	}
	res.WalkComplete = true
	res.InconsistentReason, res.Inconsistency = inconsistency(sum)
	res.WalkConsistent = res.InconsistentReason == ""
	if !res.WalkConsistent {
		res.InconsistentPages = sum.AnomalyPages
		attrs := []any{"reason", res.InconsistentReason}
		if len(sum.AnomalyPages) > 0 {
			// (duplicate_ids' pages are known once the walk closes: logged then.)
			attrs = append(attrs, "pages", sum.AnomalyPages)
		}
		attrs = append(attrs, "detail", res.Inconsistency,
			"distinct_ids", sum.DistinctIDs, "duplicate_ids", sum.DuplicateIDs,
			"first_total", sum.FirstTotal, "last_total", sum.LastTotal, "min_total", sum.MinTotal, "max_total", sum.MaxTotal)
		log.Warn("walk inconsistent: no removals marked, the next run re-walks", attrs...)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	wr, err := w.FinishWalk(cctx, runID, Stream, load.WalkEnd{Consistent: res.WalkConsistent, ConfirmRemovals: opts.ConfirmRemovals,
		Reason: res.InconsistentReason})
	if err != nil {
		return err
	}
	res.Removed = wr.Removed
	res.RemovalsHeld = wr.Held
	res.PendingRemovals = wr.Pending
	if len(wr.Conflicts) > 0 {
		// The close took back what this run's pages wrote of them.
		res.Changed -= wr.Undone
		res.Unchanged += wr.Undone
		log.Warn("card ids listed on more than one page with different content kept the content stored before the walk (no version); the walk records duplicate_ids with their pages",
			"ids", len(wr.Conflicts), "first", conflictText(wr.Conflicts, 5))
	}
	if wr.Held > 0 {
		log.Error("mass removal held: the walk did not list many live cards, so none were marked removed (an upstream glitch must not wipe the warehouse); if they are really gone, run `"+j.Commands.AccountCommand("backfill", "-confirm-removals")+"`",
			"removals_held", wr.Held, "live_cards", wr.Live, "missed", wr.Missed)
	}
	if wr.Pending > 0 && wr.Held == 0 {
		log.Info("cards not listed by the last complete walk; marked removed if the next consistent walk also misses them",
			"pending_removals", wr.Pending, "removed", wr.Removed)
	}
	return nil
}

// inconsistency says why a walk cannot be trusted for removals: a reason
// of load.WalkReasons and a sentence for people, or "", "" for a complete,
// consistent walk. A page anomaly the walk recorded comes first: it names
// pages the walk could not read as they are.
func inconsistency(s load.WalkSummary) (reason, text string) {
	switch {
	case s.WalkID == 0:
		return load.ReasonNoPages, "no page was committed in this walk"
	case s.Reason != "":
		return s.Reason, pageReasonText(s.Reason)
	case s.TotalChanged:
		return load.ReasonTotalChanged, fmt.Sprintf("the card total changed during the walk: the first page said %d, pages said between %d and %d, the last %d",
			s.FirstTotal, min(s.MinTotal, s.FirstTotal), max(s.MaxTotal, s.FirstTotal), s.LastTotal)
	case s.DuplicateIDs > 0:
		return load.ReasonDuplicateIDs, fmt.Sprintf("%s appeared on more than one page", english.Count(s.DuplicateIDs, "card id"))
	case s.DistinctIDs != s.LastTotal:
		return load.ReasonCountMismatch, fmt.Sprintf("saw %s but the API reports a total of %d", english.Count(s.DistinctIDs, "distinct card"), s.LastTotal)
	}
	return "", ""
}

// conflictText names at most n ids in conflict with their pages, for a
// log line: "7 (pages 1, 3), 12 (pages 2, 5)".
func conflictText(cs []load.IDConflict, n int) string {
	parts := make([]string, 0, min(n, len(cs)))
	for _, c := range cs[:min(n, len(cs))] {
		parts = append(parts, c.ID+" ("+PagesText(c.Pages)+")")
	}
	return strings.Join(parts, ", ")
}

// pageReasonText says what a page reason means; the caller names the
// pages.
func pageReasonText(reason string) string {
	switch reason {
	case load.ReasonEmptyPage:
		return "a page before the last was empty, also when asked for again; the walk read on to its last page"
	case load.ReasonRepeatedPage:
		return "a page listed the same cards as the page before it, also when asked for again"
	case load.ReasonShortPage:
		return "a page before the last held fewer items than per_page, also when asked for again; the walk read on to its last page"
	case load.ReasonFractionalPagination:
		return "a number of meta.pagination had a fraction (read as the next integer up); the walk read on to its last page"
	case load.ReasonPhantomPages:
		return fmt.Sprintf("total_pages claimed more pages than the total bears out (more than %d past ceil(total / per_page)); the walk stopped there and never requested the rest", extract.PhantomSlack)
	case load.ReasonTotalPagesChanged:
		return "total_pages changed during the walk; the walk read on to the last page its pages bear out"
	case load.ReasonDuplicateIDs:
		return "a card id appeared on more than one page with different content; the card kept the content stored before the walk"
	}
	return reason
}

// PagesText names pages for people: "page 2", "pages 2, 3", or "no page
// recorded" when there are none.
func PagesText(pages []int) string {
	switch len(pages) {
	case 0:
		return "no page recorded"
	case 1:
		return "page " + strconv.Itoa(pages[0])
	}
	s := make([]string, len(pages))
	for i, p := range pages {
		s[i] = strconv.Itoa(p)
	}
	return "pages " + strings.Join(s, ", ")
}

func accountSnapshot(a *extract.Account) load.Account {
	return load.Account{Snapshot: a.Snapshot, AmountsRounded: len(a.Rounded) > 0, Raw: a.Raw}
}
