package sim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// discard is a minimal ResponseWriter, so the in-process benchmark
// measures the simulator and not a recorder.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// benchServer serves 100 pages of cards without a practical rate limit and
// returns the server, a valid token and the base URL.
func benchServer(b *testing.B) (s *sim.Server, token, base string) {
	b.Helper()
	s = sim.New(sim.Options{Cards: 1500, Seed: 1, Limit: 1 << 30, ExtraFields: true})
	ts := httptest.NewServer(s)
	b.Cleanup(ts.Close)
	res, err := http.Post(ts.URL+"/auth/access-token", "application/json",
		strings.NewReader(`{"email":"demo@example.com","password":"demo"}`))
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		b.Fatal(err)
	}
	return s, body.AccessToken, ts.URL
}

// BenchmarkServeCards serves /cards pages in process (handler only).
func BenchmarkServeCards(b *testing.B) {
	s, tok, _ := benchServer(b)
	reqs := make([]*http.Request, 100)
	for i := range reqs {
		r := httptest.NewRequest(http.MethodGet, "/cards?page="+strconv.Itoa(i+1), nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		reqs[i] = r
	}
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		clear(w.h)
		s.ServeHTTP(w, reqs[i%len(reqs)])
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkServeCardsHTTP serves /cards pages over real loopback HTTP
// from parallel keep-alive clients.
func BenchmarkServeCardsHTTP(b *testing.B) {
	_, tok, base := benchServer(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.Cleanup(client.CloseIdleConnections)
	var n, failed atomic.Int64
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			page := n.Add(1)%100 + 1
			req, _ := http.NewRequest(http.MethodGet, base+"/cards?page="+strconv.FormatInt(page, 10), nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			res, err := client.Do(req)
			if err != nil {
				failed.Add(1)
				continue
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				failed.Add(1)
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	if failed.Load() > 0 {
		b.Fatalf("%d requests failed", failed.Load())
	}
}
