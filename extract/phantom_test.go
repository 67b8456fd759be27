package extract

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// anomalies lists the pages' anomalies as "page:anomaly", in order.
func anomalies(pages []*Page) string {
	var out []string
	for _, p := range pages {
		if p.Anomaly != "" {
			out = append(out, fmt.Sprintf("%d:%s", p.Number, p.Anomaly))
		}
	}
	return strings.Join(out, " ")
}

// cardRequests counts the simulator's /cards requests.
func cardRequests(e *env) int64 { return e.sim.Stats().Requests[sim.EndpointCards] }

// TestPhantomPages: a total_pages its page's total does not bear out
// costs at most PhantomSlack requests more than the real pages, whatever
// it claims and on whichever page, and is one anomaly of the walk, logged
// once; nothing fails.
func TestPhantomPages(t *testing.T) {
	for _, cards := range []int{0, 1, 15, 29, 30, 31, 100} {
		for _, claim := range []int{2000, 100_000, 1_000_000_000, math.MaxInt32} {
			for _, on := range [][]int{nil, {1}, {2}} {
				name := fmt.Sprintf("%d cards, total_pages %d on pages %v", cards, claim, on)
				t.Run(name, func(t *testing.T) {
					e := newEnv(t, sim.Options{Cards: cards, Faults: []sim.Fault{{Endpoint: sim.EndpointCards, Kind: sim.FaultPhantomPages, Claim: claim, Pages: on}}}, nil)
					pages, err := walk(t, e.c, 1)
					if err != nil {
						t.Fatalf("walk failed after %d pages: %v", len(pages), err)
					}
					realPages := max((cards+14)/15, 1)
					if n := cardRequests(e); n > int64(realPages+PhantomSlack) || n < int64(realPages) {
						t.Errorf("%d requests for %d real pages, want at most %d", n, realPages, realPages+PhantomSlack)
					}
					got := 0
					for _, p := range pages {
						got += len(p.Cards)
					}
					if got != cards {
						t.Errorf("read %d cards, want %d", got, cards)
					}
					// Phantom when the claim was served on a page of the walk
					// and exceeds what that page's total bears out.
					claimed := len(on) == 0 || on[0] <= realPages
					first := anomalies(pages)
					if claimed {
						page := 1
						if len(on) > 0 {
							page = on[0]
						}
						if want := fmt.Sprintf("%d:phantom_pages", page); !strings.HasPrefix(first, want) {
							t.Errorf("anomalies %q, want the first %s", first, want)
						}
						if n := strings.Count(first, "phantom_pages"); n != 1 {
							t.Errorf("anomalies %q: phantom_pages %d times, want once per walk", first, n)
						}
						if n := strings.Count(e.log.String(), "total_pages claims more pages"); n != 1 {
							t.Errorf("%d phantom warnings, want one", n)
						}
					}
					for _, p := range pages {
						if p.Refetched {
							t.Errorf("page %d asked for twice", p.Number)
						}
						if p.LastPage > realPages+PhantomSlack {
							t.Errorf("page %d: LastPage %d, more than %d", p.Number, p.LastPage, realPages+PhantomSlack)
						}
					}
				})
			}
		}
	}
}

// TestPhantomPagesOneBehaviour: the review's case (total 30, per_page 15,
// total_pages 2000 on every page) and total_pages 1e9 on the first or on a
// later page walk alike: pages 1 to 4, each asked for once, phantom_pages
// on the page that claimed it.
func TestPhantomPagesOneBehaviour(t *testing.T) {
	for _, tt := range []struct {
		name      string
		fault     sim.Fault
		anomalies string
	}{
		{"2000 on every page", sim.Fault{Endpoint: "cards", Kind: sim.FaultPhantomPages}, "1:phantom_pages"},
		{"1e9 on page 1", sim.Fault{Endpoint: "cards", Kind: sim.FaultPhantomPages, Claim: 1e9, Pages: []int{1}}, "1:phantom_pages 2:total_pages_changed"},
		{"1e9 on page 2", sim.Fault{Endpoint: "cards", Kind: sim.FaultPhantomPages, Claim: 1e9, Pages: []int{2}}, "2:phantom_pages 3:total_pages_changed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, sim.Options{Cards: 30, Faults: []sim.Fault{tt.fault}}, nil)
			pages, err := walk(t, e.c, 1)
			if err != nil || len(pages) != 4 {
				t.Fatalf("pages %d, err %v; want 4 pages (2 real and PhantomSlack), no error", len(pages), err)
			}
			if got := anomalies(pages); got != tt.anomalies {
				t.Errorf("anomalies %q, want %q", got, tt.anomalies)
			}
			for n, c := range e.sim.Stats().PageRequests {
				if c != 1 || n > 4 {
					t.Errorf("page %d requested %d times; want pages 1-4 once each", n, c)
				}
			}
		})
	}
}

// synthPages serves pages of perPage synthetic cards out of cards, whose
// envelope env(n) writes: its total, per_page and total_pages as JSON
// text. It counts the requests.
func synthPages(t *testing.T, cards, perPage int, env func(n int) (total, per, totalPages string)) (*Client, *atomic.Int64) {
	t.Helper()
	var requests atomic.Int64
	c, _, _ := handlerEnv(t, pageHandler(func(n int) string {
		requests.Add(1)
		var items []string
		for i := (n - 1) * perPage; i < min(n*perPage, cards); i++ {
			items = append(items, fmt.Sprintf(`{"id":%d}`, i+1))
		}
		total, per, tp := env(n)
		return fmt.Sprintf(`{"data":[%s],"meta":{"pagination":{"total":%s,"count":%d,"per_page":%s,"current_page":%d,"total_pages":%s,"links":{}}}}`,
			strings.Join(items, ","), total, len(items), per, n, tp)
	}), nil)
	return c, &requests
}

// TestWalkBound: the walk's last page is what each page's envelope bears
// out, also when total is inconsistent with the data or per_page is
// missing or varies.
func TestWalkBound(t *testing.T) {
	itoa := strconv.Itoa
	tests := []struct {
		name      string
		cards     int
		perPage   int
		env       func(n int) (string, string, string)
		pages     int // requested, each once
		anomalies string
	}{
		{"total too small: the data carries the walk on", 45, 15, func(n int) (string, string, string) { return "0", "15", "2000" },
			3 + PhantomSlack, "1:phantom_pages"},
		{"total too small, total_pages right: every page read", 75, 15, func(n int) (string, string, string) { return "0", "15", "5" },
			5, "1:phantom_pages"},
		{"per_page null: the page size is the pages'", 30, 15, func(n int) (string, string, string) { return "30", "null", "2000" },
			2 + PhantomSlack, "1:phantom_pages"},
		{"per_page fractional: the page size is the pages'", 30, 15, func(n int) (string, string, string) { return "30", "15.5", "2000" },
			2 + PhantomSlack, "1:fractional_pagination 2:phantom_pages"},
		{"per_page varies", 30, 10, func(n int) (string, string, string) {
			if n%2 == 0 {
				return "30", "15", "2000"
			}
			return "30", "10", "2000"
		}, 3 + PhantomSlack, "1:phantom_pages"},
		{"total_pages honest: no slack walked", 30, 15, func(n int) (string, string, string) { return "30", "15", "2" }, 2, ""},
		{"total_pages within the slack: read, no anomaly", 30, 15, func(n int) (string, string, string) { return "30", "15", itoa(2 + PhantomSlack) },
			2 + PhantomSlack, ""},
		{"total_pages as floats", 38, 15, func(n int) (string, string, string) { return "38.0", "15.0", "3.0" }, 3, ""},
		{"total_pages in exponent form", 100, 10, func(n int) (string, string, string) { return "1e2", "1E1", "100e-1" }, 10, ""},
		{"total_pages 1e9 in exponent form", 30, 15, func(n int) (string, string, string) { return "30", "15", "1e9" },
			2 + PhantomSlack, "1:phantom_pages"},
		{"total_pages beyond int64", 30, 15, func(n int) (string, string, string) { return "30", "15", "1e99999999999" },
			2 + PhantomSlack, "1:phantom_pages"},
		{"total_pages without ceil()", 38, 15, func(n int) (string, string, string) { return "38", "15", "2.533333333333333" },
			3, "1:fractional_pagination"},
		{"fractional total", 38, 15, func(n int) (string, string, string) { return "37.5", "15", "3" }, 3, "1:fractional_pagination"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, requests := synthPages(t, tt.cards, tt.perPage, tt.env)
			pages, err := walk(t, c, 1)
			if err != nil {
				t.Fatalf("walk failed after %d pages: %v", len(pages), err)
			}
			if len(pages) != tt.pages || requests.Load() != int64(tt.pages) {
				t.Errorf("%d pages in %d requests, want %d in as many", len(pages), requests.Load(), tt.pages)
			}
			got := 0
			for _, p := range pages {
				got += len(p.Cards)
			}
			if got != tt.cards {
				t.Errorf("read %d cards, want %d", got, tt.cards)
			}
			if a := anomalies(pages); a != tt.anomalies {
				t.Errorf("anomalies %q, want %q", a, tt.anomalies)
			}
		})
	}
}

// TestTooManyPagesOnAnyPage: a page whose total bears out its total_pages
// beyond api.max_pages ends the walk before it is yielded, the first page
// or a later one alike.
func TestTooManyPagesOnAnyPage(t *testing.T) {
	for _, on := range []int{1, 2} {
		t.Run(fmt.Sprintf("page %d", on), func(t *testing.T) {
			c, _, _ := handlerEnv(t, pageHandler(func(n int) string {
				if n == on {
					return synthPage(n, 5000, "")
				}
				return synthPage(n, 3, "")
			}), func(c *Config) { c.MaxPages = 1000 })
			pages, err := walk(t, c, 1)
			if !errors.Is(err, ErrTooManyPages) || len(pages) != on-1 || !strings.Contains(err.Error(), "5000") {
				t.Fatalf("pages %d, err %v; want ErrTooManyPages naming 5000 after %d pages", len(pages), err, on-1)
			}
		})
	}
}

// TestFractionalCurrentPageAndCount: a fractional current_page or count
// is an anomaly, not a halt: the page is the one requested, its items
// counted.
func TestFractionalCurrentPageAndCount(t *testing.T) {
	c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"t"}`, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("page"))
		writeJSON(w, 200, fmt.Sprintf(`{"data":[{"id":%d}],"meta":{"pagination":{"total":2,"count":2.5,"per_page":1,"current_page":%d.5,"total_pages":2}}}`, n, n-1))
	}), nil)
	pages, err := walk(t, c, 1)
	if err != nil || len(pages) != 2 {
		t.Fatalf("pages %d, err %v; want 2", len(pages), err)
	}
	if got := anomalies(pages); got != "1:fractional_pagination" {
		t.Errorf("anomalies %q, want 1:fractional_pagination", got)
	}
	for i, p := range pages {
		if p.Number != i+1 || p.Pagination.CurrentPage != i+1 || p.Pagination.Count != 1 {
			t.Errorf("page %d: number %d, pagination %+v", i+1, p.Number, p.Pagination)
		}
	}
}
