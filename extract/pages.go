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
	"strconv"
	"time"
)

// Page is one page of GET /cards.
type Page struct {
	// Number is the page number (equal to the requested page).
	Number int
	// Cards are the items, in order, each byte-exact.
	Cards []Card
	// Pagination is meta.pagination as served with this page; total and
	// total_pages may change during a walk.
	Pagination Pagination
	// BodySHA256 is the hex SHA-256 of the response body.
	BodySHA256 string
	// BodyBytes is the size of the response body.
	BodyBytes int
	// Duration is the time of the successful attempt (retries excluded).
	Duration time.Duration
}

// Account fetches GET /account.
func (c *Client) Account(ctx context.Context) (*Account, error) {
	var acct *Account
	_, err := c.do(ctx, &request{
		op:     "fetch account",
		method: http.MethodGet,
		url:    c.endpoint("account", nil),
		token:  true,
		pacer:  c.general,
		decode: func(_ int, b []byte) error {
			var err error
			acct, err = decodeAccount(b, c.cfg.AmountScale)
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
		op:     op,
		method: http.MethodGet,
		url:    c.endpoint("cards", url.Values{"page": {strconv.Itoa(n)}}),
		token:  true,
		pacer:  c.general,
		decode: func(_ int, b []byte) error {
			var err error
			if p, err = decodePage(b); err != nil {
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

// Pages walks GET /cards from page start (values below 1 mean 1), yielding
// each page in order. It stops after the last page (current_page >=
// total_pages, or empty data; a missing links.next before total_pages is
// logged and the walk goes on), or with one error:
// ErrForeignOrigin when links.next names another origin or carries
// userinfo (before that page is yielded), ErrPaginationLoop when the
// walk does not advance or runs past total_pages plus a slack, or the
// request's error. Each request is built from the configured base URL;
// links.next is only checked, never requested.
func (c *Client) Pages(ctx context.Context, start int) iter.Seq2[*Page, error] {
	return func(yield func(*Page, error) bool) {
		if start < 1 {
			start = 1
		}
		seen := make(map[int]bool)
		limit := -1
		warnedNoNext := false
		for n := start; ; n++ {
			if limit >= 0 && n > limit {
				yield(nil, fmt.Errorf("fetch cards page %d: walk passed total_pages plus slack (%d): %w", n, limit, ErrPaginationLoop))
				return
			}
			if seen[n] {
				yield(nil, fmt.Errorf("fetch cards page %d: page seen twice: %w", n, ErrPaginationLoop))
				return
			}
			seen[n] = true
			p, err := c.fetchPage(ctx, n)
			if err != nil {
				yield(nil, err)
				return
			}
			if limit < 0 {
				limit = max(p.Pagination.TotalPages, start) + pageSlack(p.Pagination.TotalPages)
			}
			// total_pages is authoritative: a server that leaves links.next
			// out of a middle page (links [] or {} on every page) must not
			// end the walk early and leave the rest of the cards unsynced.
			last := p.Pagination.CurrentPage >= p.Pagination.TotalPages || len(p.Cards) == 0
			if !last && p.Pagination.Next == "" && !warnedNoNext {
				warnedNoNext = true
				c.log.Warn("links.next missing before the last page; continuing by total_pages",
					"page", n, "total_pages", p.Pagination.TotalPages)
			}
			if p.Pagination.Next != "" {
				if err := c.checkNext(n, p.Pagination.Next, last); err != nil {
					yield(nil, fmt.Errorf("fetch cards page %d: %w", n, err))
					return
				}
			}
			c.log.Debug("page", "page", n, "cards", len(p.Cards), "total", p.Pagination.Total,
				"total_pages", p.Pagination.TotalPages, "bytes", p.BodyBytes, "duration", p.Duration)
			if !yield(p, nil) || last {
				return
			}
		}
	}
}

// checkNext applies the origin rule to links.next and, unless this is the
// last page, checks that it points forward.
func (c *Client) checkNext(cur int, next string, last bool) error {
	reqURL, _ := url.Parse(c.endpoint("cards", url.Values{"page": {strconv.Itoa(cur)}}))
	u, err := reqURL.Parse(next)
	if err != nil {
		return protoErr("meta.pagination.links.next", "not a URL", nil)
	}
	if u.User != nil {
		return fmt.Errorf("links.next carries userinfo: %w", ErrForeignOrigin)
	}
	if !sameOrigin(u, c.base) {
		return fmt.Errorf("links.next points to %s://%s, not the configured origin: %w", u.Scheme, u.Host, ErrForeignOrigin)
	}
	if last {
		return nil
	}
	np, err := strconv.Atoi(u.Query().Get("page"))
	if err != nil {
		return protoErr("meta.pagination.links.next", "has no page number", errors.New(truncate(sanitize(u.RawQuery), 80)))
	}
	if np <= cur {
		return fmt.Errorf("links.next names page %d after page %d: %w", np, cur, ErrPaginationLoop)
	}
	return nil
}
