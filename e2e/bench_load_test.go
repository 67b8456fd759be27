//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
)

// benchPages splits the simulator's cards into 15-card pages exactly as
// served, for the in-process load benchmarks.
func benchPages(cards []sim.Card) []load.Page {
	var pages []load.Page
	for i := 0; i < len(cards); i += 15 {
		p := load.Page{Stream: "cards", Number: len(pages) + 1, TotalPages: (len(cards) + 14) / 15,
			TotalItems: len(cards), BodySHA256: strings.Repeat("0", 64), Requests: 1}
		for _, c := range cards[i:min(i+15, len(cards))] {
			p.Cards = append(p.Cards, load.Card{ID: c.ID, Data: c.JSON()})
		}
		pages = append(pages, p)
	}
	return pages
}

// commitAll writes every page in one run through a WalkWriter, as the
// worker does, flushes, and closes the walk and the run.
func commitAll(b *testing.B, w *sqlite.Warehouse, pages []load.Page) load.PageResult {
	b.Helper()
	ctx := b.Context()
	run, err := w.StartRun(ctx, "backfill", "bench")
	if err != nil {
		b.Fatal(err)
	}
	var sum load.PageResult
	ww := w.NewWalkWriter(run, "cards")
	for _, p := range pages {
		r, err := ww.Add(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		sum.New += r.New
		sum.Changed += r.Changed
		sum.Unchanged += r.Unchanged
	}
	if err := ww.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := w.FinishWalk(ctx, run, "cards", load.WalkEnd{Consistent: true}); err != nil {
		b.Fatal(err)
	}
	if err := w.FinishRun(ctx, run, load.RunResult{Status: "succeeded"}); err != nil {
		b.Fatal(err)
	}
	return sum
}

// BenchmarkLoadOnly commits the same 10,000 cards as BenchmarkThroughput
// (raw JSON taken from the simulator, 667 pages of 15) in process with
// sqlite.Warehouse.CommitPage, defaults (synchronous=FULL): into an empty
// warehouse ("new") and again with no change ("unchanged"). The
// "sqlite-utils" case times `sqlite-utils upsert bench.db cards cards.json
// --pk id` of the same cards as a JSON array (new, then unchanged) when
// sqlite-utils is on PATH, and reports load's speed as a multiple of it.
//
// load's own BenchmarkCommitPage measures single page commits of synthetic
// cards; this one is the whole walk of the simulator's cards, walk close
// included, so it lines up with BenchmarkThroughput.
func BenchmarkLoadOnly(b *testing.B) {
	if testing.Short() {
		b.Skip("benchmark writes 10,000 cards")
	}
	cards := benchCards(10000)
	all := sim.New(sim.Options{Seed: 1, Cards: cards}).Cards()
	pages := benchPages(all)
	rates := map[string]float64{}

	b.Run("new", func(b *testing.B) {
		var elapsed time.Duration
		for i := 0; b.Loop(); i++ {
			w, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), fmt.Sprintf("w%d.db", i)), load.Options{})
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			r := commitAll(b, w, pages)
			elapsed += time.Since(start)
			w.Close()
			if r.New != cards {
				b.Fatalf("%d new, want %d", r.New, cards)
			}
		}
		rates["new"] = float64(cards*b.N) / elapsed.Seconds()
		b.ReportMetric(rates["new"], "cards/s")
	})
	b.Run("unchanged", func(b *testing.B) {
		w, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "w.db"), load.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		commitAll(b, w, pages)
		var elapsed time.Duration
		for b.Loop() {
			start := time.Now()
			r := commitAll(b, w, pages)
			elapsed += time.Since(start)
			if r.Unchanged != cards {
				b.Fatalf("%d unchanged, want %d", r.Unchanged, cards)
			}
		}
		rates["unchanged"] = float64(cards*b.N) / elapsed.Seconds()
		b.ReportMetric(rates["unchanged"], "cards/s")
	})
	b.Run("sqlite-utils", func(b *testing.B) {
		tool, err := exec.LookPath("sqlite-utils")
		if err != nil {
			b.Skip("sqlite-utils not on PATH (apt-get install sqlite-utils)")
		}
		dir := b.TempDir()
		var arr bytes.Buffer
		arr.WriteByte('[')
		for i, c := range all {
			if i > 0 {
				arr.WriteByte(',')
			}
			arr.Write(c.JSON())
		}
		arr.WriteByte(']')
		jsonPath := filepath.Join(dir, "cards.json")
		if err := os.WriteFile(jsonPath, arr.Bytes(), 0o600); err != nil {
			b.Fatal(err)
		}
		upsert := func(db string) time.Duration {
			cmd := exec.CommandContext(b.Context(), tool, "upsert", db, "cards", jsonPath, "--pk", "id")
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("sqlite-utils upsert: %v\n%s", err, out)
			}
			return time.Since(start)
		}
		var tNew, tSame time.Duration
		for i := 0; b.Loop(); i++ {
			db := filepath.Join(dir, fmt.Sprintf("bench%d.db", i))
			tNew += upsert(db)
			tSame += upsert(db)
		}
		newRate := float64(cards*b.N) / tNew.Seconds()
		sameRate := float64(cards*b.N) / tSame.Seconds()
		b.ReportMetric(newRate, "new_cards/s")
		b.ReportMetric(sameRate, "unchanged_cards/s")
		if r, ok := rates["new"]; ok {
			b.ReportMetric(r/newRate, "load/sqlite-utils_new")
		}
		if r, ok := rates["unchanged"]; ok {
			b.ReportMetric(r/sameRate, "load/sqlite-utils_unchanged")
		}
	})
}
