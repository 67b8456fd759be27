package extract

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// Page is one page of GET /cards.
type Page struct {
	// Number is the page number (equal to the requested page).
	Number int
	// Cards are the items that are cards, in order, each byte-exact.
	Cards []Card
	// Rejected are the items that cannot be stored as cards.
	Rejected []Rejected
	// Pagination is meta.pagination as served with this page; total and
	// total_pages may change during a walk.
	Pagination Pagination
	// BodySHA256 is the hex SHA-256 of the response body.
	BodySHA256 string
	// BodyBytes is the size of the response body.
	BodyBytes int
	// Duration is the time of the successful attempt (retries excluded).
	Duration time.Duration
	// Anomaly, when not "", says why the walk cannot trust what this page
	// holds (see Anomaly); the page is yielded all the same and the walk
	// goes on to its last page.
	Anomaly Anomaly
	// Refetched says the page was requested twice: its first answer looked
	// wrong (empty, short or repeated before the last page) and this is the
	// second answer.
	Refetched bool
	// LastPage is the walk's last page as known when the page was yielded:
	// the largest last page its pages so far bear out (see Client.Pages),
	// never more than the largest total_pages they reported.
	LastPage int
}

// Anomaly is why a page of a walk cannot be trusted, as Page.Anomaly and
// the warehouse's sync_walks.inconsistent_reason name it.
type Anomaly string

// The anomalies a walk checks for on each page, most telling first: a page
// shows at most one.
const (
	// AnomalyEmptyPage: a page before the last held no item, twice.
	AnomalyEmptyPage Anomaly = "empty_page"
	// AnomalyRepeatedPage: a page listed the same ids, in the same order,
	// as the page before it, twice.
	AnomalyRepeatedPage Anomaly = "repeated_page"
	// AnomalyShortPage: a page before the last held fewer items than its
	// per_page, twice.
	AnomalyShortPage Anomaly = "short_page"
	// AnomalyFractionalPagination: a number of meta.pagination had a
	// fraction (2.5; an integral 2.0 or 1e1 is that integer). Recorded once
	// a walk (see Client.Pages).
	AnomalyFractionalPagination Anomaly = "fractional_pagination"
	// AnomalyPhantomPages: the page's total_pages claimed more pages than
	// its total bears out (more than PhantomSlack past ceil(total /
	// per_page) and past the last page that held items); the pages past
	// what it bears out are never requested. Recorded once a walk (see
	// Client.Pages).
	AnomalyPhantomPages Anomaly = "phantom_pages"
	// AnomalyTotalPagesChanged: the page reported another total_pages than
	// the page before it in the walk.
	AnomalyTotalPagesChanged Anomaly = "total_pages_changed"
)

// Anomalies lists every Anomaly, most telling first.
func Anomalies() []Anomaly {
	return []Anomaly{AnomalyEmptyPage, AnomalyRepeatedPage, AnomalyShortPage, AnomalyFractionalPagination,
		AnomalyPhantomPages, AnomalyTotalPagesChanged}
}

// Account fetches GET /account.
func (c *Client) Account(ctx context.Context) (*Account, error) {
	var acct *Account
	_, err := c.do(ctx, &request{
		op:       "fetch account",
		endpoint: EndpointAccount,

		method: http.MethodGet,
		url:    c.endpoint("account", nil),
		token:  true,
		pacer:  c.general,
		decode: func(_ int, b []byte) error {
			var err error
			acct, err = decodeAccount(b, c.cfg.AmountScale, c.scrub)
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	return acct, nil
}

// fetchPage fetches and validates one page.
func (c *Client) fetchPage(ctx context.Context, n int) (*Page, error) {
	var p *Page
	var body []byte
	op := "fetch cards page " + strconv.Itoa(n)
	res, err := c.do(ctx, &request{
		op:       op,
		endpoint: EndpointCards,
		method:   http.MethodGet,
		url:      c.endpoint("cards", url.Values{"page": {strconv.Itoa(n)}}),
		token:    true,
		pacer:    c.general,
		decode: func(_ int, b []byte) error {
			var err error
			if p, err = decodePage(b, c.scrub); err != nil {
				return err
			}
			// A fractional current_page names no page: the page is the one
			// requested (its anomaly says the envelope was odd).
			if p.Pagination.fractional("current_page") {
				p.Number, p.Pagination.CurrentPage = n, n
			}
			if p.Pagination.CurrentPage != n {
				return protoErr("meta.pagination.current_page", fmt.Sprintf("%d, but page %d was requested", p.Pagination.CurrentPage, n), nil)
			}
			body = b
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	p.BodySHA256 = hex.EncodeToString(sum[:])
	p.BodyBytes = len(body)
	p.Duration = res.duration
	return p, nil
}

// pageSlack is how many pages a walk may go past the first page's last
// page (cards added during the walk) before it counts as a loop.
func pageSlack(totalPages int) int { return 5 + totalPages/20 }

// PhantomSlack is how many pages past those its total fills (at its
// per_page) a page's total_pages may claim before the claim is phantom:
// the walk goes no further than that (AnomalyPhantomPages).
const PhantomSlack = 2

// ErrTooManyPages is wrapped when a page of a walk bears out more pages
// than Config.MaxPages (its total_pages, and its total at its per_page):
// that page is not yielded.
var ErrTooManyPages = errors.New("the API claims more pages than api.max_pages")

// Pages walks GET /cards from page start (values below 1 mean 1), yielding
// each page in order. Every request is built from the configured base URL:
// links.next is never requested, only read for its page number.
//
// The walk never ends early: it goes on to its last page, the largest
// last page any of its pages bears out (bounded by Config.MaxPages),
// whatever a page held. The last page a page bears out is its
// total_pages, but no more than PhantomSlack pages past the pages its total
// fills at its per_page (ceil(total / per_page)), or past the last page of
// the walk that held items when that is later (a total too small for the
// data); a total_pages beyond that is phantom: those pages are never
// requested, and the first page of the walk that claims them gets
// AnomalyPhantomPages (logged once; when that page shows a more telling
// anomaly, the next page without one gets it). When per_page is null, absent or
// fractional the page size is the most items a page of the walk held.
//
// A page before the last one that comes back empty, with fewer items than
// its per_page, or with the same ids as the page before it is requested
// once more; the second answer is yielded, with Page.Anomaly set when it
// shows the same fault (Page.Refetched either way). A page past those its
// own total fills may be empty, and the last page its total fills may be
// short: neither is asked for again. The first page with a fractional
// number in meta.pagination gets AnomalyFractionalPagination (in the same
// way, logged once); a page whose
// total_pages differs from the page before it gets
// AnomalyTotalPagesChanged. The caller marks such a walk inconsistent.
//
// It stops after the last page (links.next missing, or in a shape other
// than a string, changes nothing), or with one error: ErrTooManyPages when
// a page bears out more than MaxPages pages (before yielding it; for the
// first page, before yielding anything), ErrPaginationLoop when the walk
// runs past the first page's last page plus a slack, or the request's
// error. A links.next on another origin (a TLS-terminating proxy writing
// http:// links, localhost for 127.0.0.1) is logged once per walk at warn
// and otherwise ignored.
func (c *Client) Pages(ctx context.Context, start int) iter.Seq2[*Page, error] {
	return func(yield func(*Page, error) bool) {
		if start < 1 {
			start = 1
		}
		limit := -1
		w := &walkState{}
		var warnedForeign, warnedNextPage bool
		for n := start; ; n++ {
			if limit >= 0 && n > limit {
				yield(nil, fmt.Errorf("fetch cards page %d: walk passed total_pages plus slack (%d): %w", n, limit, ErrPaginationLoop))
				return
			}
			p, err := c.fetchPage(ctx, n)
			if err != nil {
				yield(nil, err)
				return
			}
			claim, err := c.claim(w, p)
			if err != nil {
				yield(nil, err)
				return
			}
			if limit < 0 {
				limit = min(max(claim.last, start)+pageSlack(claim.last), c.cfg.MaxPages+pageSlack(c.cfg.MaxPages))
			}
			// An empty, short or repeated page before the last is a glitch
			// or a list that moved under the walk: ask once more, and go on
			// with the second answer whatever it holds.
			if a := w.anomaly(p, claim); a.refetch() {
				c.log.Warn("page looks wrong before the last page; requesting it once more",
					"page", n, "anomaly", string(a), "items", p.items(), "per_page", p.Pagination.PerPage,
					"total_pages", p.Pagination.TotalPages)
				if p, err = c.fetchPage(ctx, n); err != nil {
					yield(nil, err)
					return
				}
				p.Refetched = true
				if claim, err = c.claim(w, p); err != nil {
					yield(nil, err)
					return
				}
			}
			// The envelope anomalies are warned about once per walk, at the
			// first page that shows them.
			if claim.phantom && !w.phantomSeen {
				w.phantomSeen = true
				c.log.Warn("total_pages claims more pages than the page's total bears out; the walk stops at the last page it bears out, never requests the rest, and will be marked inconsistent",
					"page", n, "anomaly", string(AnomalyPhantomPages), "total_pages", p.Pagination.TotalPages, "total", p.Pagination.Total,
					"per_page", p.Pagination.PerPage, "bears_out", claim.bearable, "last_page", w.lastPage)
			}
			if len(p.Pagination.Fractional) > 0 && !w.fractionalSeen {
				w.fractionalSeen = true
				c.log.Warn("meta.pagination has a number with a fraction; read as the next integer up (per_page as unknown, count and current_page unchecked), and the walk will be marked inconsistent",
					"page", n, "anomaly", string(AnomalyFractionalPagination), "fields", p.Pagination.Fractional, "last_page", w.lastPage)
			}
			p.Anomaly = w.anomaly(p, claim)
			p.LastPage = w.lastPage
			switch p.Anomaly {
			case "":
			case AnomalyPhantomPages:
				w.phantomRecorded = true
			case AnomalyFractionalPagination:
				w.fractionalRecorded = true
			default:
				c.log.Warn("page anomaly: the walk goes on to its last page and will be marked inconsistent",
					"page", n, "anomaly", string(p.Anomaly), "refetched", p.Refetched, "items", p.items(),
					"per_page", p.Pagination.PerPage, "total_pages", p.Pagination.TotalPages, "last_page", w.lastPage)
			}
			// The last page is authoritative: a server that leaves
			// links.next out of a middle page (links [] or {} on every
			// page, or links in a shape of its own) must not end the walk
			// early and leave the rest of the cards unsynced.
			last := n >= w.lastPage
			if p.Pagination.Next != "" {
				c.readNext(n, p.Pagination.Next, last, &warnedForeign, &warnedNextPage)
			}
			c.log.Debug("page", "page", n, "cards", len(p.Cards), "rejected", len(p.Rejected), "total", p.Pagination.Total,
				"total_pages", p.Pagination.TotalPages, "last_page", w.lastPage, "bytes", p.BodyBytes, "duration", p.Duration)
			if !yield(p, nil) || last {
				return
			}
			w.prev = p
		}
	}
}

// walkState is what a walk has learnt from its pages so far.
type walkState struct {
	// lastPage is the largest last page a page bore out, bounded by
	// MaxPages; prev the page before (nil at the walk's first page).
	lastPage int
	prev     *Page
	// maxItems is the most items a page held, lastHeld the highest page
	// number that held an item (0: none yet).
	maxItems, lastHeld int
	// The envelope anomalies are recorded once per walk, on the first page
	// that shows one (or the next page with no other anomaly): a server
	// that shows one likely shows it on every page. Seen: a page showed
	// it; recorded: a page carries it.
	phantomSeen, phantomRecorded       bool
	fractionalSeen, fractionalRecorded bool
}

// pageClaim is what one page bears out.
type pageClaim struct {
	// fills is how many pages the page's total fills at its page size
	// (ceil(total / page size)); known is false when no page size is known
	// yet (no usable per_page, and no page of the walk held items).
	fills int
	known bool
	// bearable is the last page the envelope and the data bear out: fills
	// (or the last page that held items, when later) plus PhantomSlack.
	bearable int
	// last is the page's total_pages, at most bearable.
	last int
	// phantom says total_pages claimed more than bearable.
	phantom bool
}

// claim records page p in the walk and returns what it bears out, moving
// the walk's last page on to it; a page bearing out more than MaxPages
// ends the walk with ErrTooManyPages.
func (c *Client) claim(w *walkState, p *Page) (pageClaim, error) {
	items := p.items()
	w.maxItems = max(w.maxItems, items)
	if items > 0 {
		w.lastHeld = max(w.lastHeld, p.Number)
	}
	pg := p.Pagination
	var cl pageClaim
	size := pg.PerPage
	if size <= 0 {
		size = w.maxItems
	}
	if size > 0 {
		cl.fills, cl.known = pg.Total/size, true
		if pg.Total%size != 0 {
			cl.fills++
		}
	}
	cl.bearable = max(cl.fills, w.lastHeld) + PhantomSlack
	cl.last = min(pg.TotalPages, cl.bearable)
	cl.phantom = pg.TotalPages > cl.bearable
	if cl.last > c.cfg.MaxPages {
		return cl, fmt.Errorf("fetch cards page %d: the page bears out %d pages (total_pages %d, total %d, per_page %d), more than api.max_pages %d; refusing the walk: %w",
			p.Number, cl.last, pg.TotalPages, pg.Total, pg.PerPage, c.cfg.MaxPages, ErrTooManyPages)
	}
	w.lastPage = max(w.lastPage, cl.last)
	return cl, nil
}

// anomaly says what is wrong with page p of the walk, cl being what it
// bears out, or "" when nothing is. The last page may be short or empty,
// and so may a page past those its own total fills (the last one it fills
// may be short).
func (w *walkState) anomaly(p *Page, cl pageClaim) Anomaly {
	items := p.items()
	before := p.Number < w.lastPage
	prev := w.prev
	switch {
	case before && items == 0 && (!cl.known || p.Number <= cl.fills):
		return AnomalyEmptyPage
	case prev != nil && items > 0 && slices.Equal(p.ids(), prev.ids()):
		return AnomalyRepeatedPage
	case before && p.Pagination.PerPage > 0 && items < p.Pagination.PerPage && p.Number < cl.fills:
		return AnomalyShortPage
	case (w.fractionalSeen || len(p.Pagination.Fractional) > 0) && !w.fractionalRecorded:
		return AnomalyFractionalPagination
	case (w.phantomSeen || cl.phantom) && !w.phantomRecorded:
		return AnomalyPhantomPages
	case prev != nil && p.Pagination.TotalPages != prev.Pagination.TotalPages:
		return AnomalyTotalPagesChanged
	}
	return ""
}

// refetch says whether a page showing the anomaly is asked for once more:
// one that may be a glitch of that answer.
func (a Anomaly) refetch() bool {
	switch a {
	case AnomalyEmptyPage, AnomalyRepeatedPage, AnomalyShortPage:
		return true
	}
	return false
}

// items counts the page's items: its cards and its rejected items.
func (p *Page) items() int { return len(p.Cards) + len(p.Rejected) }

// ids lists the ids of the page's items in order: its cards', and those
// of its rejected items that had one.
func (p *Page) ids() []string {
	ids := make([]string, 0, len(p.Cards)+len(p.Rejected))
	for _, c := range p.Cards {
		ids = append(ids, c.ID)
	}
	for _, r := range p.Rejected {
		if r.ID != "" {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// Empty reports whether the page has no items at all.
func (p *Page) Empty() bool { return len(p.Cards) == 0 && len(p.Rejected) == 0 }

// readNext looks at links.next only to tell the operator when it disagrees
// with what the client does: another origin (never contacted: the next
// request goes to the configured base URL) or a page number other than the
// next one. Each is logged once per walk; neither is an error.
func (c *Client) readNext(cur int, next string, last bool, warnedForeign, warnedPage *bool) {
	reqURL, _ := url.Parse(c.endpoint("cards", url.Values{"page": {strconv.Itoa(cur)}}))
	u, err := reqURL.Parse(next)
	if err != nil {
		if !*warnedPage {
			*warnedPage = true
			c.log.Warn("links.next is not a URL; ignored (pages are requested from the configured base URL)", "page", cur)
		}
		return
	}
	if (u.User != nil || !sameOrigin(u, c.base)) && !*warnedForeign {
		*warnedForeign = true
		c.log.Warn("links.next names another origin; ignored (pages are requested from the configured base URL, the token goes nowhere else)",
			"page", cur, "links_next_origin", c.scrub(u.Scheme+"://"+u.Host), "configured_origin", c.base.Scheme+"://"+c.base.Host)
	}
	if last {
		return
	}
	if np, err := strconv.Atoi(u.Query().Get("page")); (err != nil || np != cur+1) && !*warnedPage {
		*warnedPage = true
		c.log.Warn("links.next does not name the next page; ignored (the walk goes by page number)",
			"page", cur, "links_next_page", c.scrub(truncate(u.Query().Get("page"), 40)))
	}
}
