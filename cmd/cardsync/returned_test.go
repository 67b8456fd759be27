package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// TestReturnedCardNotChanged: a card removed by two walks that the API
// lists again unchanged is counted as returned, never as changed, by the
// run (backfill's summary, sync_runs), by status (text and -json) and by
// the report, which says so in the same words its runs table uses.
func TestReturnedCardNotChanged(t *testing.T) {
	srv, e := newEnv(t, sim.Options{Seed: 7, Cards: 40})
	backfill := func() string {
		t.Helper()
		code, out, errOut := e.run(t.Context(), "backfill")
		if code != 0 {
			t.Fatalf("backfill exit %d\n%s\n%s", code, out, errOut)
		}
		return out
	}
	backfill()
	gone := srv.Cards()[11]
	srv.RemoveCard(gone.ID)
	backfill()
	if out := backfill(); !strings.Contains(out, "1 removed") {
		t.Fatalf("second walk without card %s does not remove it:\n%s", gone.ID, out)
	}
	if !srv.RestoreCard(gone) {
		t.Fatalf("RestoreCard(%s) = false", gone.ID)
	}
	if out := backfill(); !strings.Contains(out, "40 cards (0 new, 0 changed, 1 returned, 39 unchanged), 0 removed") {
		t.Errorf("summary of the run the card returned in:\n%s\nwant 0 changed, 1 returned", out)
	}
	db := openDB(t, e.db)
	var returned, changed int
	var change string
	if err := db.QueryRow(`SELECT cards_returned, cards_changed FROM sync_runs ORDER BY run_id DESC LIMIT 1`).Scan(&returned, &changed); err != nil ||
		returned != 1 || changed != 0 {
		t.Errorf("sync_runs: cards_returned %d, cards_changed %d (%v); want 1, 0", returned, changed, err)
	}
	if err := db.QueryRow(`SELECT change FROM card_versions WHERE card_id = ? AND valid_to IS NULL`, gone.ID).Scan(&change); err != nil || change != "returned" {
		t.Errorf("current version of %s: %q (%v), want returned", gone.ID, change, err)
	}

	code, out, errOut := e.run(t.Context(), "status")
	if code != 0 {
		t.Fatalf("status exit %d\n%s\n%s", code, out, errOut)
	}
	lines := strings.Split(out, "\n")
	var head, last []string
	for i, l := range lines {
		if strings.HasPrefix(l, "RUN ") && i+1 < len(lines) {
			head, last = strings.Fields(l), strings.Fields(lines[i+1])
			break
		}
	}
	col := func(name string) string {
		for i, h := range head {
			if h == name && i < len(last) {
				return last[i]
			}
		}
		return ""
	}
	// STARTED is one field; DURATION one: the columns line up with the header.
	if col("CHANGED") != "0" || col("RETURNED") != "1" {
		t.Errorf("status text: CHANGED %q, RETURNED %q of the last run; want 0, 1\n%s", col("CHANGED"), col("RETURNED"), out)
	}

	code, out, errOut = e.run(t.Context(), "status", "-json")
	if code != 0 {
		t.Fatalf("status -json exit %d\n%s\n%s", code, out, errOut)
	}
	var doc struct {
		Accounts []struct {
			Runs []struct {
				CardsChanged  *int64 `json:"cards_changed"`
				CardsReturned *int64 `json:"cards_returned"`
			} `json:"runs"`
		} `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Accounts) != 1 || len(doc.Accounts[0].Runs) == 0 {
		t.Fatalf("status -json: %v\n%s", err, out)
	}
	if r := doc.Accounts[0].Runs[0]; r.CardsChanged == nil || *r.CardsChanged != 0 || r.CardsReturned == nil || *r.CardsReturned != 1 {
		t.Errorf("status -json runs[0]: cards_changed %v, cards_returned %v; want 0, 1", r.CardsChanged, r.CardsReturned)
	}

	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := e.run(t.Context(), "report", "-o", page, "-since", "7d"); code != 0 {
		t.Fatalf("report exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if !strings.Contains(html, `<th scope="col" class="n">returned</th>`) ||
		!strings.Contains(html, "No card's content changed in this period. 1 returned") {
		i := strings.Index(html, `id="h-changed"`)
		t.Errorf("report does not say the card returned:\n%.600s", html[max(i, 0):])
	}
}
