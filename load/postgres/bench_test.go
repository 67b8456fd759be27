package postgres

import (
	"testing"

	"github.com/cardsync/cardsync/load"
)

// BenchmarkWalkWriter is load's BenchmarkWalkWriter on PostgreSQL: cards
// per second through a WalkWriter (15 cards of ~600 bytes a page) for new
// pages, changed pages and unchanged pages (a hash compare per card,
// committed in batches of load.DefaultBatchPages). A batch's new cards
// go in one statement over arrays (unnest) for card_state and
// card_versions together, pipelined with its audit rows and bookkeeping in
// one round trip; changed cards are re-read, then written set-based. The
// test server runs with fsync off: the figures measure cardsync's side,
// not the disk (e2e's BenchmarkPostgresBackfill measures with fsync on).
func BenchmarkWalkWriter(b *testing.B) {
	const preload = 100
	for _, mode := range []string{"new", "changed", "unchanged"} {
		b.Run(mode, func(b *testing.B) {
			w, _, _ := openPG(b, Options{})
			run := startRun(b, w)
			ww := w.NewWalkWriter(run, load.StreamCards)
			pages := make([]load.Page, 0, preload)
			for n := 1; n <= preload; n++ {
				pages = append(pages, page(n, idRange(n*15-14, n*15), 0, preload*15))
			}
			if mode != "new" {
				for _, p := range pages {
					if _, err := ww.Add(b.Context(), p); err != nil {
						b.Fatal(err)
					}
				}
				if err := ww.Flush(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				var p load.Page
				switch mode {
				case "new":
					n := i + 1
					p = page(n, idRange(n*15-14, n*15), 0, b.N*15)
				case "changed":
					n := i%preload + 1
					p = page(n, idRange(n*15-14, n*15), i/preload+1, preload*15)
				case "unchanged":
					p = pages[i%preload]
				}
				res, err := ww.Add(b.Context(), p)
				if err != nil {
					b.Fatal(err)
				}
				if mode == "unchanged" && res.Unchanged != 15 || mode == "changed" && res.Changed != 15 || mode == "new" && res.New != 15 {
					b.Fatalf("%s page: %+v", mode, res)
				}
			}
			if err := ww.Flush(b.Context()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*15)/b.Elapsed().Seconds(), "cards/s")
		})
	}
}

// BenchmarkCommitPage is load's BenchmarkCommitPage on PostgreSQL: one
// transaction per page.
func BenchmarkCommitPage(b *testing.B) {
	const preload = 100
	for _, mode := range []string{"new", "changed", "unchanged"} {
		b.Run(mode, func(b *testing.B) {
			w, _, _ := openPG(b, Options{})
			run := startRun(b, w)
			if mode != "new" {
				for n := 1; n <= preload; n++ {
					commit(b, w, run, page(n, idRange(n*15-14, n*15), 0, preload*15))
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				var p load.Page
				switch mode {
				case "new":
					n := i + 1
					p = page(n, idRange(n*15-14, n*15), 0, b.N*15)
				case "changed":
					n := i%preload + 1
					p = page(n, idRange(n*15-14, n*15), i/preload+1, preload*15)
				case "unchanged":
					n := i%preload + 1
					p = page(n, idRange(n*15-14, n*15), 0, preload*15)
				}
				if _, err := w.CommitPage(b.Context(), run, p); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*15)/b.Elapsed().Seconds(), "cards/s")
		})
	}
}
