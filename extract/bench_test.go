package extract

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// simPageBody returns the exact body of /cards?page=1 of a sim with 15+ cards.
func simPageBody(tb testing.TB, o sim.Options) []byte {
	tb.Helper()
	s := sim.New(o)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/auth/access-token", strings.NewReader(`{"email":"demo@example.com","password":"demo"}`))
	req.Header.Set("Content-Type", "application/json")
	s.ServeHTTP(rec, req)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := decodeStrict(rec.Body.Bytes(), &tok); err != nil {
		tb.Fatal(err)
	}
	rec = httptest.NewRecorder()
	req = httptest.NewRequest(http.MethodGet, "/cards?page=1", nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	s.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return b
}

// BenchmarkDecodePage decodes a 15-card sim page.
//
//	go test -run '^$' -bench DecodePage -benchmem ./extract/
func BenchmarkDecodePage(b *testing.B) {
	body := simPageBody(b, sim.Options{Seed: 1, Cards: 15})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := decodePage(body, nil)
		if err != nil || len(p.Cards) != 15 {
			b.Fatal(err)
		}
	}
}

// BenchmarkPacing walks 320 pages against the sim at its limit in real
// time with a scaled window (180 requests per second on both sides) and
// reports achieved/allowed rate and the number of 429s. One walk takes
// about 1.8 s; run it once:
//
//	go test -run '^$' -bench Pacing -benchtime 1x ./extract/
func BenchmarkPacing(b *testing.B) {
	const pages, limit = 320, 180
	for b.Loop() {
		s := sim.New(sim.Options{Seed: 1, Cards: pages * 15, Limit: limit, Window: time.Second, AuthLimit: 10})
		srv := httptest.NewServer(s)
		c, err := New(Config{BaseURL: srv.URL, Email: sim.DefaultEmail, Password: sim.DefaultPassword,
			RateLimit: Rate{N: limit, Per: time.Second}})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Authenticate(b.Context()); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		n := 0
		for _, err := range c.Pages(b.Context(), 1) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		elapsed := time.Since(start)
		srv.Close()
		st := s.Stats()
		if n != pages {
			b.Fatalf("pages %d, want %d", n, pages)
		}
		// n requests span n-1 intervals of the allowed rate.
		b.ReportMetric(float64(n-1)/elapsed.Seconds()/limit, "rate_ratio")
		b.ReportMetric(float64(st.RateLimited), "429s")
		b.ReportMetric(float64(st.General.MaxInWindow), "max_in_window")
	}
}
