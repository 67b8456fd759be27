package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
)

// Stream is the checkpoint stream of the card walk (load.StreamCards).
const Stream = load.StreamCards

// Triggers recorded in sync_runs.trigger; the values are load's.
const (
	TriggerSchedule = load.TriggerSchedule
	TriggerBackfill = load.TriggerBackfill
	TriggerDemo     = load.TriggerDemo
)

// ErrWarehouse is wrapped by every error that comes from the warehouse (load
// classifies its errors at the source), so callers can tell a local storage
// problem from an upstream one.
var ErrWarehouse = load.ErrWarehouse

// ErrInterrupted is returned when the run stopped because its context was
// cancelled (SIGTERM, Ctrl-C); the checkpoint is kept for the next run.
var ErrInterrupted = errors.New("run interrupted")

// Progress is reported after each commit of a batch of pages (Page is the
// last of them).
type Progress struct {
	RunID      int64
	Page       int
	TotalPages int
	TotalItems int
	Cards      int           // cards committed by this run so far
	Elapsed    time.Duration // since the walk started in this run
	Resumed    bool          // the walk resumed a checkpoint
	StartPage  int
}

// Job runs syncs of one account into one warehouse. Its fields are set by
// the caller; Client, Warehouse and Lock are required.
type Job struct {
	Client *extract.Client
	// Warehouse is where the run writes: *load.Warehouse (SQLite) or
	// *postgres.Warehouse.
	Warehouse load.Destination
	// Lock is the account's run lock (load.OpenAccountLock, or a LeaseLock
	// with PostgreSQL). Run takes it for the run unless the caller already
	// holds it (a backfill takes it before opening the warehouse, so a
	// refused process never touches the file); a lock with a Keep method
	// (a lease) is kept alive while the run goes on.
	Lock    RunLock
	Logger  *slog.Logger
	Version string
	// Now stamps times; default time.Now.
	Now func() time.Time
	// HeartbeatEvery is how often a long page wait refreshes heartbeat_at;
	// default 10s.
	HeartbeatEvery time.Duration
	// Progress, if set, is called after every commit of pages.
	Progress func(Progress)
	// Status, if set, gets a short human status line ("page 37/120").
	Status func(string)
	// AuditRetention, when positive, is how long run_pages audit rows are
	// kept: older ones are pruned after each run.
	AuditRetention time.Duration
	// Observer, if set, is told about every run that recorded a sync_runs
	// row, once its result is recorded (metrics).
	Observer Observer

	starts  startFailures
	pending pendingResults
	// progress is when the current run last moved (unix nanoseconds).
	progress atomic.Int64
}

// markProgress notes that the run in progress moved on (a page committed,
// the account read), for the daemon's watchdog.
func (j *Job) markProgress() { j.progress.Store(time.Now().UnixNano()) }

// ProgressDeadline returns when the run in progress must next show
// progress: the end of the client's request in flight, or a commit's worth
// of time after the last progress, whichever is later. The daemon stops
// feeding systemd's watchdog past it.
func (j *Job) ProgressDeadline() time.Time {
	d := time.Unix(0, j.progress.Load()).Add(commitTimeout + j.Client.Timeout())
	if b := j.Client.BusyUntil(); b.After(d) {
		d = b
	}
	return d
}

// Options change one run.
type Options struct {
	// Restart discards the checkpoint and walks from page 1.
	Restart bool
	// ConfirmRemovals lifts the mass-removal guard for this run's walk
	// (`cardsync backfill -confirm-removals`).
	ConfirmRemovals bool
}

// Observer is told how each run ended. It is called synchronously at the
// end of Job.Run, after the result is recorded and before Run returns, with
// a context that outlives a shutdown by a commit's worth of time.
type Observer interface {
	RunFinished(ctx context.Context, r Result)
}

// StartObserver is an Observer also told about each run that could not
// start (the lock could not be taken or opened, the file check or the run
// row failed): no sync_runs row records those.
type StartObserver interface {
	RunNotStarted(what string, err error)
}

// Result summarises one run.
type Result struct {
	RunID int64
	// Trigger is the run's sync_runs.trigger (TriggerSchedule, ...).
	Trigger string
	// Status is the run's final sync_runs.status (load.StatusSucceeded, ...).
	Status    string
	Pages     int
	Cards     int
	New       int
	Changed   int
	Unchanged int
	// Removed counts cards marked removed: missed by this walk and by the
	// previous consistent one.
	Removed int
	// PendingRemovals counts cards not listed by the last complete,
	// consistent walk and not yet confirmed removed: the next consistent
	// walk marks them removed if it misses them too. Set when the walk
	// finished (WalkComplete).
	PendingRemovals int
	// RemovalsHeld counts cards the walk missed but the mass-removal guard
	// did not mark removed.
	RemovalsHeld int
	// Rejected counts page items set aside in rejected_cards.
	Rejected int
	// AccountError says why no account snapshot was taken ("" if it was).
	AccountError string
	// AccountSnapshotAt is when this run stored its account snapshot; zero
	// when it took none.
	AccountSnapshotAt time.Time
	// Abandoned lists the triggers of the runs this run found left running
	// by a dead process and marked abandoned before it started, one entry a
	// run.
	Abandoned      []string
	Resumed        bool
	StartPage      int
	WalkComplete   bool
	WalkConsistent bool
	Inconsistency  string
	Requests       int64
	Retries        int64
	RateLimited    int64
	AuthRequests   int64
	Duration       time.Duration
}

func (j *Job) logger() *slog.Logger {
	if j.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return j.Logger
}

func (j *Job) now() time.Time {
	if j.Now == nil {
		return time.Now()
	}
	return j.Now()
}

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

func (j *Job) walk(ctx context.Context, client *extract.Client, log *slog.Logger, runID int64, first int, delta *statsDelta, res *Result) (err error) {
	w := j.Warehouse
	walkStart := j.now()
	lastBeat := walkStart
	every := j.HeartbeatEvery
	if every <= 0 {
		every = 10 * time.Second
	}
	// Pages are buffered and committed in batches (load.WalkWriter: 50
	// pages, 5 s after the first, or 1 s after the first with changes).
	ww := w.PageWriter(runID, Stream)
	committed := func(b load.Batch) {
		if b.Pages == 0 {
			return
		}
		res.Pages += b.Pages
		res.Cards += b.New + b.Changed + b.Unchanged
		res.New += b.New
		res.Changed += b.Changed
		res.Unchanged += b.Unchanged
		res.Rejected += b.Rejected
		log.Debug("pages committed", "first_page", b.FirstPage, "last_page", b.LastPage, "total_pages", b.TotalPages,
			"cards", b.Cards, "new", b.New, "changed", b.Changed, "unchanged", b.Unchanged)
		if j.Progress != nil {
			j.Progress(Progress{RunID: runID, Page: b.LastPage, TotalPages: b.TotalPages,
				TotalItems: b.TotalItems, Cards: res.Cards, Elapsed: j.now().Sub(walkStart),
				Resumed: res.Resumed, StartPage: res.StartPage})
		}
		if j.Status != nil {
			j.Status(fmt.Sprintf("run %d: page %d/%d", runID, b.LastPage, b.TotalPages))
		}
	}
	// Whatever ends the walk (its last page, a shutdown, a fetch error), the
	// batch in hand commits, as a page in hand always did; not after a
	// warehouse error, which the next commit would likely meet again.
	warehouseErr := false
	defer func() {
		if warehouseErr {
			return
		}
		b := ww.Buffered()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
		defer cancel()
		if ferr := ww.Flush(cctx); ferr != nil {
			if err == nil {
				err = ferr
			} else {
				log.Error("commit the pages in hand", "err", ferr)
			}
			return
		}
		committed(b)
	}()
	// One warn line per rejected card per run, even when a page is fetched
	// twice.
	warned := map[string]bool{}
	for page, err := range client.Pages(ctx, first) {
		if err != nil {
			return fmt.Errorf("walk cards: %w", err)
		}
		cards := make([]load.Card, len(page.Cards))
		for i, c := range page.Cards {
			cards[i] = load.Card{ID: c.ID, Data: c.Raw}
		}
		rejected := make([]load.Rejection, len(page.Rejected))
		for i, r := range page.Rejected {
			rejected[i] = load.Rejection{Index: r.Index, CardID: r.ID, Reason: j.Client.Scrub(r.Reason), Data: r.Raw}
		}
		d := delta.take()
		res.Requests += d.Requests
		res.Retries += d.Retries
		res.RateLimited += d.RateLimited
		res.AuthRequests += d.AuthRequests
		// The page is in hand: take it even if a shutdown began meanwhile.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
		pr, err := ww.Add(cctx, load.Page{
			Stream:       Stream,
			Number:       page.Number,
			TotalPages:   page.Pagination.TotalPages,
			TotalItems:   page.Pagination.Total,
			Cards:        cards,
			Rejected:     rejected,
			FetchedAt:    j.now(),
			Duration:     page.Duration,
			BodySHA256:   page.BodySHA256,
			Requests:     d.Requests,
			Retries:      d.Retries,
			RateLimited:  d.RateLimited,
			AuthRequests: d.AuthRequests,
		})
		cancel()
		if err != nil {
			warehouseErr = true
			return err
		}
		j.markProgress()
		for _, r := range pr.Rejections {
			key := fmt.Sprintf("%s\x00%d:%d\x00%s", r.CardID, page.Number, r.Index, r.Reason)
			if r.CardID != "" {
				key = r.CardID + "\x00" + r.Reason
			}
			if !warned[key] {
				warned[key] = true
				log.Warn("card set aside in rejected_cards; the rest of the page is stored", "page", page.Number,
					"index", r.Index, "card_id", r.CardID, "reason", r.Reason)
			}
		}
		log.Debug("page read", "page", page.Number, "total_pages", page.Pagination.TotalPages,
			"cards", len(cards), "new", pr.New, "changed", pr.Changed, "unchanged", pr.Unchanged,
			"committed_pages", pr.Committed.Pages)
		committed(pr.Committed)
		if now := j.now(); now.Sub(lastBeat) >= every {
			lastBeat = now
			if err := w.Heartbeat(ctx, runID); err != nil && ctx.Err() == nil {
				warehouseErr = true
				return err
			}
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if c, ok := j.Lock.(interface{ Check() error }); ok {
			if err := c.Check(); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
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
	res.Inconsistency = inconsistency(sum)
	res.WalkConsistent = res.Inconsistency == ""
	if !res.WalkConsistent {
		log.Warn("walk inconsistent: the card list changed while it was read; no removals marked, the next run re-walks",
			"reason", res.Inconsistency, "distinct_ids", sum.DistinctIDs, "duplicate_ids", sum.DuplicateIDs,
			"first_total", sum.FirstTotal, "last_total", sum.LastTotal, "min_total", sum.MinTotal, "max_total", sum.MaxTotal)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	wr, err := w.FinishWalk(cctx, runID, Stream, load.WalkEnd{Consistent: res.WalkConsistent, ConfirmRemovals: opts.ConfirmRemovals})
	if err != nil {
		return err
	}
	res.Removed = wr.Removed
	res.RemovalsHeld = wr.Held
	res.PendingRemovals = wr.Pending
	if wr.Held > 0 {
		log.Error("mass removal held: the walk did not list many live cards, so none were marked removed (an upstream glitch must not wipe the warehouse); if they are really gone, run `cardsync backfill -confirm-removals`",
			"removals_held", wr.Held, "live_cards", wr.Live, "missed", wr.Missed)
	}
	if wr.Pending > 0 && wr.Held == 0 {
		log.Info("cards not listed by the last complete walk; marked removed if the next consistent walk also misses them",
			"pending_removals", wr.Pending, "removed", wr.Removed)
	}
	return nil
}

// inconsistency explains why a walk cannot be trusted for removals, or
// returns "" for a complete, consistent walk.
func inconsistency(s load.WalkSummary) string {
	switch {
	case s.WalkID == 0:
		return "no page was committed in this walk"
	case s.TotalChanged:
		return fmt.Sprintf("the card total changed during the walk: the first page said %d, pages said between %d and %d, the last %d",
			s.FirstTotal, min(s.MinTotal, s.FirstTotal), max(s.MaxTotal, s.FirstTotal), s.LastTotal)
	case s.DuplicateIDs > 0:
		return fmt.Sprintf("%d card ids appeared on more than one page", s.DuplicateIDs)
	case s.DistinctIDs != s.LastTotal:
		return fmt.Sprintf("saw %d distinct cards but the API reports a total of %d", s.DistinctIDs, s.LastTotal)
	}
	return ""
}

func accountSnapshot(a *extract.Account) load.Account {
	return load.Account{Snapshot: a.Snapshot, AmountsRounded: len(a.Rounded) > 0, Raw: a.Raw}
}
