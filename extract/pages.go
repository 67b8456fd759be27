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
	// AnomalyTotalPagesChanged: the page reported another total_pages than
	// the page before it in the walk.
	AnomalyTotalPagesChanged Anomaly = "total_pages_changed"
)

// Anomalies lists every Anomaly, most telling first.
func Anomalies() []Anomaly {
	return []Anomaly{AnomalyEmptyPage, AnomalyRepeatedPage, AnomalyShortPage, AnomalyTotalPagesChanged}
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

// pageSlack is how many pages a walk may go past the first page's
// total_pages (cards added during the walk) before it counts as a loop.
func pageSlack(totalPages int) int { return 5 + totalPages/20 }

// ErrTooManyPages is wrapped when the first page of a walk claims more pages
// than Config.MaxPages: nothing of the walk is yielded.
var ErrTooManyPages = errors.New("the API claims more pages than api.max_pages")

// Pages walks GET /cards from page start (values below 1 mean 1), yielding
// each page in order. Every request is built from the configured base URL:
// links.next is never requested, only read for its page number.
//
// The walk never ends early: it goes on to its last page, the largest
// total_pages any of its pages reported (bounded by Config.MaxPages),
// whatever a page held. A page before that one that comes back empty,
// with fewer items than its per_page, or with the same ids as the page
// before it is requested once more; the second answer is yielded, with
// Page.Anomaly set when it shows the same fault (Page.Refetched either
// way). A page whose total_pages differs from the page before it gets
// AnomalyTotalPagesChanged. The caller marks such a walk inconsistent.
//
// It stops after the last page (links.next missing, or in a shape other
// than a string, changes nothing), or with one error: ErrTooManyPages when the first
// page fetched claims more than MaxPages pages (before yielding it),
// ErrPaginationLoop when the walk runs past the first page's total_pages
// plus a slack, or the request's error. A links.next on another origin (a
// TLS-terminating proxy writing http:// links, localhost for 127.0.0.1) is
// logged once per walk at warn and otherwise ignored.
func (c *Client) Pages(ctx context.Context, start int) iter.Seq2[*Page, error] {
	return func(yield func(*Page, error) bool) {
		if start < 1 {
			start = 1
		}
		limit := -1
		// lastPage is the largest total_pages seen, bounded by MaxPages;
		// prev the page before (nil at the walk's first page).
		lastPage := 0
		var prev *Page
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
			if limit < 0 {
				if tp := p.Pagination.TotalPages; tp > c.cfg.MaxPages {
					yield(nil, fmt.Errorf("fetch cards page %d: total_pages is %d, more than api.max_pages %d; refusing the walk: %w",
						n, tp, c.cfg.MaxPages, ErrTooManyPages))
					return
				}
				limit = min(max(p.Pagination.TotalPages, start)+pageSlack(p.Pagination.TotalPages), c.cfg.MaxPages+pageSlack(c.cfg.MaxPages))
			}
			lastPage = min(max(lastPage, p.Pagination.TotalPages), c.cfg.MaxPages)
			// An empty, short or repeated page before the last is a glitch
			// or a list that moved under the walk: ask once more, and go on
			// with the second answer whatever it holds.
			if a := pageAnomaly(p, prev, lastPage); a != "" && a != AnomalyTotalPagesChanged {
				c.log.Warn("page looks wrong before the last page; requesting it once more",
					"page", n, "anomaly", string(a), "items", len(p.Cards)+len(p.Rejected), "per_page", p.Pagination.PerPage,
					"total_pages", p.Pagination.TotalPages)
				if p, err = c.fetchPage(ctx, n); err != nil {
					yield(nil, err)
					return
				}
				p.Refetched = true
				lastPage = min(max(lastPage, p.Pagination.TotalPages), c.cfg.MaxPages)
			}
			p.Anomaly = pageAnomaly(p, prev, lastPage)
			if p.Anomaly != "" {
				c.log.Warn("page anomaly: the walk goes on to its last page and will be marked inconsistent",
					"page", n, "anomaly", string(p.Anomaly), "refetched", p.Refetched, "items", len(p.Cards)+len(p.Rejected),
					"per_page", p.Pagination.PerPage, "total_pages", p.Pagination.TotalPages, "last_page", lastPage)
			}
			// total_pages is authoritative: a server that leaves links.next
			// out of a middle page (links [] or {} on every page, or links
			// in a shape of its own) must not end the walk early and leave
			// the rest of the cards unsynced.
			last := n >= lastPage
			if p.Pagination.Next != "" {
				c.readNext(n, p.Pagination.Next, last, &warnedForeign, &warnedNextPage)
			}
			c.log.Debug("page", "page", n, "cards", len(p.Cards), "rejected", len(p.Rejected), "total", p.Pagination.Total,
				"total_pages", p.Pagination.TotalPages, "bytes", p.BodyBytes, "duration", p.Duration)
			if !yield(p, nil) || last {
				return
			}
			prev = p
		}
	}
}

// pageAnomaly says what is wrong with page p of a walk whose last page is
// lastPage, prev being the page before it (nil when p is the first page
// this walk fetched), or "" when nothing is. The last page may be short or
// empty.
func pageAnomaly(p, prev *Page, lastPage int) Anomaly {
	items := len(p.Cards) + len(p.Rejected)
	before := p.Number < lastPage
	switch {
	case before && items == 0:
		return AnomalyEmptyPage
	case prev != nil && items > 0 && slices.Equal(p.ids(), prev.ids()):
		return AnomalyRepeatedPage
	case before && p.Pagination.PerPage > 0 && items < p.Pagination.PerPage:
		return AnomalyShortPage
	case prev != nil && p.Pagination.TotalPages != prev.Pagination.TotalPages:
		return AnomalyTotalPagesChanged
	}
	return ""
}

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
