package extract

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

func TestPagesFaults(t *testing.T) {
	pagesLinkFaults(t)
	pagesCountLimits(t)
	pagesShapeFaults(t)
	pagesWalkCases(t)
}

// pagesLinkFaults runs the subtests of links.next naming another origin or page.
func pagesLinkFaults(t *testing.T) {
	t.Run("foreign links.next is a warning, never contacted", func(t *testing.T) {
		var other counter
		foreign := httptest.NewServer(&other)
		defer foreign.Close()
		for _, u := range []string{foreign.URL, "https://evil.example", "http://user:pw@" + strings.TrimPrefix(foreign.URL, "http://")} {
			e := newEnv(t, sim.Options{Cards: 100, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultForeignNext, URL: u, Pages: []int{2, 3, 4}}}}, nil)
			pages, err := walk(t, e.c, 1)
			if err != nil || len(pages) != 7 {
				t.Fatalf("%s: pages %d, err = %v; want all 7 pages", u, len(pages), err)
			}
			log := e.log.String()
			if n := strings.Count(log, "links.next names another origin"); n != 1 {
				t.Errorf("%s: %d warnings, want one per walk:\n%s", u, n, log)
			}
			if strings.Contains(log, "pw@") || strings.Contains(log, "user:") {
				t.Errorf("log shows userinfo: %s", log)
			}
		}
		if n := other.n.Load(); n != 0 {
			t.Errorf("foreign server got %d requests", n)
		}
	})
	t.Run("same server under another host name or scheme", func(t *testing.T) {
		for _, from := range []string{"http://127.0.0.1", "http://"} {
			e := newEnv(t, sim.Options{Cards: 100}, nil)
			to := map[string]string{"http://127.0.0.1": "http://localhost", "http://": "https://"}[from]
			e.sim.InjectFault(sim.Fault{Endpoint: "cards", Kind: sim.FaultForeignNext, URL: strings.Replace(e.srv.URL, from, to, 1)})
			pages, err := walk(t, e.c, 1)
			if err != nil || len(pages) != 7 {
				t.Fatalf("%s: pages %d, err = %v; want all 7 pages", to, len(pages), err)
			}
			if !strings.Contains(e.log.String(), "level=WARN") {
				t.Errorf("no warning logged")
			}
		}
	})
	t.Run("links.next pointing back is ignored", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 100, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultLoopNext, LoopTo: 1, Pages: []int{3}}}}, nil)
		pages, err := walk(t, e.c, 1)
		if err != nil || len(pages) != 7 {
			t.Fatalf("pages %d, err = %v; want all 7 pages", len(pages), err)
		}
		if !strings.Contains(e.log.String(), "does not name the next page") {
			t.Errorf("no warning logged:\n%s", e.log.String())
		}
		for p, n := range e.sim.Stats().PageRequests {
			if n != 1 {
				t.Errorf("page %d requested %d times", p, n)
			}
		}
	})
}

// pagesCountLimits runs the subtests of page counts past api.max_pages and empty pages.
func pagesCountLimits(t *testing.T) {
	t.Run("total_pages beyond api.max_pages", func(t *testing.T) {
		c, _, _ := handlerEnv(t, pageHandler(func(n int) string { return synthPage(n, math.MaxInt32, "") }), func(c *Config) { c.MaxPages = 1000 })
		pages, err := walk(t, c, 1)
		if !errors.Is(err, ErrTooManyPages) || len(pages) != 0 || !strings.Contains(err.Error(), "2147483647") {
			t.Fatalf("pages %d, err = %v; want ErrTooManyPages naming the claim before any page", len(pages), err)
		}
	})
	t.Run("default api.max_pages", func(t *testing.T) {
		c, _, _ := handlerEnv(t, pageHandler(func(n int) string { return synthPage(n, DefaultMaxPages+1, "") }), nil)
		if _, err := walk(t, c, 1); !errors.Is(err, ErrTooManyPages) {
			t.Fatalf("err = %v, want ErrTooManyPages", err)
		}
	})
	t.Run("empty pages do not end the walk before total_pages", func(t *testing.T) {
		var requests [7]int
		c, _, _ := handlerEnv(t, pageHandler(func(n int) string {
			requests[n]++
			if n >= 3 {
				return fmt.Sprintf(`{"data":[],"meta":{"pagination":{"total":6,"count":0,"per_page":1,"current_page":%d,"total_pages":6,"links":{}}}}`, n)
			}
			return synthPage(n, 6, "")
		}), nil)
		pages, err := walk(t, c, 1)
		if err != nil || len(pages) != 6 {
			t.Fatalf("pages %d, err = %v; want all 6 pages", len(pages), err)
		}
		for _, p := range pages {
			want := AnomalyEmptyPage
			if p.Number < 3 || p.Number == 6 {
				want = "" // the last page may be empty
			}
			if p.Anomaly != want || p.Refetched != (want != "") {
				t.Errorf("page %d: anomaly %q refetched %v, want %q", p.Number, p.Anomaly, p.Refetched, want)
			}
		}
		if got, want := fmt.Sprint(requests[1:]), "[1 1 2 2 2 1]"; got != want {
			t.Errorf("requests per page %s, want %s (an empty page before the last is asked for twice)", got, want)
		}
	})
}

// pagesShapeFaults runs the subtests of odd links, totals, growth and bodies.
func pagesShapeFaults(t *testing.T) {
	t.Run("links as []", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 40, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultLinksArray}}}, nil)
		pages, err := walk(t, e.c, 1)
		if err != nil || len(pages) != 3 {
			t.Fatalf("pages %d, err %v; want 3, nil", len(pages), err)
		}
	})
	t.Run("total changing mid-walk is reported per page", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 100, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultTotalChange, TotalDelta: 20, Pages: []int{4, 5}}}}, nil)
		pages, err := walk(t, e.c, 1)
		if err != nil {
			t.Fatal(err)
		}
		var totals []string
		for _, p := range pages {
			totals = append(totals, fmt.Sprintf("%d/%d", p.Pagination.Total, p.Pagination.TotalPages))
		}
		// The walk goes on to the largest total_pages seen: page 8.
		if got, want := strings.Join(totals, " "), "100/7 100/7 100/7 120/8 120/8 100/7 100/7 100/7"; got != want {
			t.Errorf("totals %q, want %q", got, want)
		}
		var anomalies []string
		for _, p := range pages {
			if p.Anomaly != "" {
				anomalies = append(anomalies, fmt.Sprintf("%d:%s", p.Number, p.Anomaly))
			}
		}
		// Page 7 holds the 10 cards its total (100) leaves for it: short
		// by per_page but not by its envelope, so no short_page.
		if got, want := strings.Join(anomalies, " "), "4:total_pages_changed 6:total_pages_changed"; got != want {
			t.Errorf("anomalies %q, want %q", got, want)
		}
	})
	t.Run("cards added mid-walk", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 30}, nil)
		e.sim.OnPageServed(func(p int) {
			for range 20 {
				e.sim.AddCard()
			}
		})
		// 20 new cards per 15-card page: the walk can never end by itself.
		pages, err := walk(t, e.c, 1)
		if !errors.Is(err, ErrPaginationLoop) {
			t.Fatalf("err = %v, want ErrPaginationLoop from the cap", err)
		}
		if len(pages) != 2+pageSlack(2) {
			t.Errorf("pages before the cap = %d, want %d", len(pages), 2+pageSlack(2))
		}
	})
	t.Run("oversized body", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 40, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultOversize, PadBytes: 300 << 10, Pages: []int{2}}}},
			func(c *Config) { c.MaxBodyBytes = 256 << 10 })
		pages, err := walk(t, e.c, 1)
		var pe *ProtocolError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "262144 bytes") || len(pages) != 1 {
			t.Fatalf("pages %d, err = %v; want a *ProtocolError naming the limit after 1 page", len(pages), err)
		}
		if errors.Is(err, ErrUnavailable) || e.sim.Stats().PageRequests[2] != 1 {
			t.Errorf("oversized body retried or classified as unavailable: %v", err)
		}
	})
}

// pagesWalkCases runs the subtests of where a walk starts and stops.
func pagesWalkCases(t *testing.T) {
	t.Run("string ids and extra fields", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 40, StringIDs: true, ExtraFields: true, PHPEscaping: true, IncludePAN: true, PreviousLinks: true}, nil)
		pages, err := walk(t, e.c, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := e.sim.Cards()
		i := 0
		for _, p := range pages {
			for _, c := range p.Cards {
				if c.ID != want[i].ID || string(c.Raw) != string(want[i].JSON()) {
					t.Fatalf("card %d differs", i)
				}
				i++
			}
		}
	})
	t.Run("resume from page 3", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 100}, nil)
		pages, err := walk(t, e.c, 3)
		if err != nil || len(pages) != 5 || pages[0].Number != 3 {
			t.Fatalf("pages %d (first %d), err %v; want 5 from 3", len(pages), pages[0].Number, err)
		}
	})
	t.Run("empty account", func(t *testing.T) {
		e := newEnv(t, sim.Options{}, nil)
		pages, err := walk(t, e.c, 1)
		if err != nil || len(pages) != 1 || len(pages[0].Cards) != 0 {
			t.Fatalf("pages %d, err %v; want one empty page", len(pages), err)
		}
	})
	t.Run("start past the end", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 20}, nil)
		pages, err := walk(t, e.c, 9)
		if err != nil || len(pages) != 1 || len(pages[0].Cards) != 0 {
			t.Fatalf("pages %d, err %v; want one empty page", len(pages), err)
		}
	})
	t.Run("caller stops early", func(t *testing.T) {
		e := newEnv(t, sim.Options{Cards: 100}, nil)
		for p, err := range e.c.Pages(t.Context(), 1) {
			if err != nil || p.Number != 1 {
				t.Fatal(p, err)
			}
			break
		}
		if n := e.sim.Stats().Requests[sim.EndpointCards]; n != 1 {
			t.Errorf("cards requests = %d, want 1", n)
		}
	})
}

// pageHandler serves synthetic card pages: page(n) returns the body.
func pageHandler(page func(n int) string) http.HandlerFunc {
	return tokenThen(`{"access_token":"t"}`, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("page"))
		writeJSON(w, 200, page(n))
	})
}

func synthPage(n, totalPages int, next string) string {
	return fmt.Sprintf(`{"data":[{"id":%d}],"meta":{"pagination":{"total":%d,"count":1,"per_page":1,"current_page":%d,"total_pages":%d,"links":{"next":%q}}}}`,
		n, totalPages, n, totalPages, next)
}

func TestPagesProtocol(t *testing.T) {
	t.Run("endless growth hits the cap", func(t *testing.T) {
		var base string
		c, srv, _ := handlerEnv(t, pageHandler(func(n int) string {
			return synthPage(n, n+1, fmt.Sprintf("%s/cards?page=%d", base, n+1))
		}), nil)
		base = srv.URL
		pages, err := walk(t, c, 1)
		if !errors.Is(err, ErrPaginationLoop) || len(pages) != 2+pageSlack(2) {
			t.Fatalf("pages %d, err %v; want %d then ErrPaginationLoop", len(pages), err, 2+pageSlack(2))
		}
	})
	t.Run("wrong current_page", func(t *testing.T) {
		c, _, _ := handlerEnv(t, pageHandler(func(n int) string { return synthPage(1, 5, "") }), nil)
		_, err := walk(t, c, 2)
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Field != "meta.pagination.current_page" {
			t.Fatalf("err = %v, want a current_page protocol error", err)
		}
	})
	t.Run("relative next is fine", func(t *testing.T) {
		c, _, _ := handlerEnv(t, pageHandler(func(n int) string {
			next := fmt.Sprintf("/cards?page=%d", n+1)
			if n == 3 {
				next = ""
			}
			return synthPage(n, 3, next)
		}), nil)
		pages, err := walk(t, c, 1)
		if err != nil || len(pages) != 3 {
			t.Fatalf("pages %d, err %v", len(pages), err)
		}
	})
	t.Run("redirect to another origin", func(t *testing.T) {
		var other counter
		foreign := httptest.NewServer(&other)
		defer foreign.Close()
		c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"t"}`, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, foreign.URL+r.URL.Path, http.StatusFound)
		}), nil)
		_, err := walk(t, c, 1)
		if !errors.Is(err, ErrForeignOrigin) || other.n.Load() != 0 {
			t.Fatalf("err = %v, foreign requests %d; want ErrForeignOrigin and 0", err, other.n.Load())
		}
	})
	t.Run("HTML 200", func(t *testing.T) {
		n := 0
		c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"t"}`, func(w http.ResponseWriter, r *http.Request) {
			n++
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<html>login</html>"))
		}), nil)
		_, err := walk(t, c, 1)
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Transient || errors.Is(err, ErrUnavailable) || n != 1 {
			t.Fatalf("err = %v after %d requests; want a permanent *ProtocolError after 1", err, n)
		}
	})
	t.Run("vnd+json accepted", func(t *testing.T) {
		c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"t"}`, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/vnd.api+json; charset=utf-8")
			_, _ = w.Write([]byte(synthPage(1, 1, "")))
		}), nil)
		if _, err := walk(t, c, 1); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("close-delimited truncated body is retried", func(t *testing.T) {
		n := 0
		c, _, _ := handlerEnv(t, tokenThen(`{"access_token":"t"}`, func(w http.ResponseWriter, r *http.Request) {
			if n++; n == 1 {
				writeJSON(w, 200, synthPage(1, 1, "")[:40])
				return
			}
			writeJSON(w, 200, synthPage(1, 1, ""))
		}), nil)
		if _, err := walk(t, c, 1); err != nil || n != 2 {
			t.Fatalf("err %v after %d requests; want success after 2", err, n)
		}
	})
}

// TestMissingNextBeforeLastPage: a server that sends links without next on
// every page (links [] or {}) must still be walked to total_pages.
func TestMissingNextBeforeLastPage(t *testing.T) {
	for _, links := range []string{`[]`, `{}`} {
		t.Run(links, func(t *testing.T) {
			s := sim.New(sim.Options{Cards: 50, Email: testEmail, Password: testPassword})
			strip := regexp.MustCompile(`"links":\{[^}]*\}`)
			c, _, _ := handlerEnv(t, func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, r)
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				body := strip.ReplaceAll(rec.Body.Bytes(), []byte(`"links":`+links))
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				w.WriteHeader(rec.Code)
				w.Write(body)
			}, nil)
			pages, err := walk(t, c, 1)
			if err != nil || len(pages) != 4 {
				t.Fatalf("pages %d, err %v; want all 4 pages", len(pages), err)
			}
		})
	}
}

// TestWalkNeverEndsEarly: a page before the last that comes back empty,
// short or repeated is asked for once more, the walk goes on to the
// largest total_pages seen, and each page that still looks wrong carries
// its anomaly.
func TestWalkNeverEndsEarly(t *testing.T) {
	type want struct {
		pages     int
		anomalies string // page:anomaly, in order
		requests  string // per page
	}
	tests := []struct {
		name   string
		cards  int
		faults []sim.Fault
		want   want
	}{
		{"empty page 2 of 3", 45, []sim.Fault{{Endpoint: "cards", Kind: sim.FaultEmptyPage}},
			want{3, "2:empty_page", "1 2 1"}},
		{"empty once: the refetch gets it", 45, []sim.Fault{{Endpoint: "cards", Kind: sim.FaultEmptyPage, Times: 1}},
			want{3, "", "1 2 1"}},
		{"empty last page is no anomaly", 45, []sim.Fault{{Endpoint: "cards", Kind: sim.FaultEmptyPage, Pages: []int{3}}},
			want{3, "", "1 1 1"}},
		{"total_pages shrinks on page 2", 45, []sim.Fault{{Endpoint: "cards", Kind: sim.FaultShrinkingTotal}},
			want{3, "2:total_pages_changed", "1 1 1"}},
		{"the same items on every page", 45, []sim.Fault{{Endpoint: "cards", Kind: sim.FaultRepeatedPage}},
			want{3, "2:repeated_page 3:repeated_page", "1 2 2"}},
		{"total_pages dips on page 2 only", 45, []sim.Fault{{Endpoint: "cards", Kind: sim.FaultShrinkingTotal, Shrink: 1, Pages: []int{2}}},
			want{3, "2:total_pages_changed 3:total_pages_changed", "1 1 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, sim.Options{Cards: tt.cards, Faults: tt.faults}, nil)
			pages, err := walk(t, e.c, 1)
			if err != nil || len(pages) != tt.want.pages {
				t.Fatalf("pages %d, err = %v; want %d", len(pages), err, tt.want.pages)
			}
			var anomalies, requests []string
			for _, p := range pages {
				if p.Anomaly != "" {
					anomalies = append(anomalies, fmt.Sprintf("%d:%s", p.Number, p.Anomaly))
				}
				requests = append(requests, strconv.FormatInt(e.sim.Stats().PageRequests[p.Number], 10))
			}
			if got := strings.Join(anomalies, " "); got != tt.want.anomalies {
				t.Errorf("anomalies %q, want %q", got, tt.want.anomalies)
			}
			if got := strings.Join(requests, " "); got != tt.want.requests {
				t.Errorf("requests per page %q, want %q", got, tt.want.requests)
			}
		})
	}
	t.Run("a short page before the last", func(t *testing.T) {
		c, _, _ := handlerEnv(t, pageHandler(func(n int) string {
			if n == 2 {
				return `{"data":[{"id":"b1"}],"meta":{"pagination":{"total":5,"count":1,"per_page":2,"current_page":2,"total_pages":3,"links":{}}}}`
			}
			return fmt.Sprintf(`{"data":[{"id":"x%d"},{"id":"y%d"}],"meta":{"pagination":{"total":5,"count":2,"per_page":2,"current_page":%d,"total_pages":3,"links":{}}}}`, n, n, n)
		}), nil)
		pages, err := walk(t, c, 1)
		if err != nil || len(pages) != 3 {
			t.Fatalf("pages %d, err = %v; want 3", len(pages), err)
		}
		if p := pages[1]; p.Anomaly != AnomalyShortPage || !p.Refetched {
			t.Errorf("page 2: anomaly %q refetched %v, want short_page after a refetch", p.Anomaly, p.Refetched)
		}
		if pages[2].Anomaly != "" {
			t.Errorf("page 3: anomaly %q; the last page may be short", pages[2].Anomaly)
		}
	})
	t.Run("bounded by api.max_pages", func(t *testing.T) {
		c, _, _ := handlerEnv(t, pageHandler(func(n int) string {
			tp := 3
			if n == 2 {
				tp = 50
			}
			return fmt.Sprintf(`{"data":[{"id":"x%d"}],"meta":{"pagination":{"total":3,"count":1,"per_page":1,"current_page":%d,"total_pages":%d,"links":{}}}}`, n, n, tp)
		}), func(c *Config) { c.MaxPages = 5 })
		pages, err := walk(t, c, 1)
		if err != nil || len(pages) != 5 {
			t.Fatalf("pages %d, err = %v; want 5 (max_pages)", len(pages), err)
		}
	})
}
