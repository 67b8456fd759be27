package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/cardsync/cardsync/load"
)

// BenchmarkCommitPage measures cards upserted per second through CommitPage
// (15 cards of ~600 bytes a page, synchronous=FULL, on a real file) for new,
// changed and unchanged pages, and database bytes per card.
func BenchmarkCommitPage(b *testing.B) {
	const preload = 100 // pages already stored before the changed/unchanged runs
	for _, mode := range []string{"new", "changed", "unchanged"} {
		b.Run(mode, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "w.db")
			w, err := Open(b.Context(), path, load.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			run, err := w.StartRun(b.Context(), load.TriggerBackfill, "bench")
			if err != nil {
				b.Fatal(err)
			}
			if mode != "new" {
				for n := 1; n <= preload; n++ {
					if _, err := w.CommitPage(b.Context(), run, page(n, idRange(n*15-14, n*15), 0, preload*15)); err != nil {
						b.Fatal(err)
					}
				}
			}
			pages := make([]load.Page, 0, preload)
			for n := 1; n <= preload; n++ {
				pages = append(pages, page(n, idRange(n*15-14, n*15), 0, preload*15))
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
				res, err := w.CommitPage(b.Context(), run, p)
				if err != nil {
					b.Fatal(err)
				}
				if mode == "unchanged" && res.Unchanged != 15 || mode == "changed" && res.Changed != 15 || mode == "new" && res.New != 15 {
					b.Fatalf("%s page: %+v", mode, res)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*15)/b.Elapsed().Seconds(), "cards/s")
			if mode == "new" && b.N >= 100 {
				if err := w.Optimize(b.Context()); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(fileSize(path)+fileSize(path+"-wal"))/float64(b.N*15), "db-bytes/card")
			}
		})
	}
}

// BenchmarkWalkWriter measures cards per second through a WalkWriter, the
// worker's path (15 cards of ~600 bytes a page, synchronous=FULL, a real
// file): new pages (each commits at once), changed pages (every card
// changed: each commits at once) and unchanged pages (a hash compare per
// card, committed in batches of DefaultBatchPages).
func BenchmarkWalkWriter(b *testing.B) {
	const preload = 100
	for _, mode := range []string{"new", "changed", "unchanged"} {
		b.Run(mode, func(b *testing.B) {
			w, err := Open(b.Context(), filepath.Join(b.TempDir(), "w.db"), load.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			run, err := w.StartRun(b.Context(), load.TriggerBackfill, "bench")
			if err != nil {
				b.Fatal(err)
			}
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
