package worker

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
)

// TestStaleCopyMakesNoVersion: a cache behind the API serves a stale copy
// of a card (other content, the same id) on the pages after the card's
// own. Run after run, the card keeps its stored content and no version is
// written; the walk is inconsistent with duplicate_ids, records the pages
// and the run (sync_runs) counts the card unchanged.
func TestStaleCopyMakesNoVersion(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 3, Cards: 45}) // 3 pages
	if _, err := f.job.Run(t.Context(), TriggerSchedule, Options{}); err != nil {
		t.Fatal(err)
	}
	x := f.srv.Cards()[0].ID
	var mu sync.Mutex
	var stale json.RawMessage
	f.job.Client = rewriteClient(t, f, func(b []byte) []byte {
		var body map[string]json.RawMessage
		var data []json.RawMessage
		if json.Unmarshal(b, &body) != nil || json.Unmarshal(body["data"], &data) != nil {
			return b
		}
		mu.Lock()
		defer mu.Unlock()
		for _, it := range data {
			var c struct{ ID json.RawMessage }
			if json.Unmarshal(it, &c) == nil && strings.Trim(string(c.ID), `"`) == x {
				stale = append([]byte(`{"stale":true,`), it[1:]...)
				return b
			}
		}
		if stale == nil {
			return b
		}
		body["data"], _ = json.Marshal(append(data, stale))
		out, _ := json.Marshal(body)
		n := strconv.Itoa(len(data))
		return bytes.Replace(out, []byte(`"count":`+n+`,`), []byte(`"count":`+strconv.Itoa(len(data)+1)+`,`), 1)
	})
	for range 3 {
		res, err := f.job.Run(t.Context(), TriggerSchedule, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// (res.Changed is not checked: the worker counts the batch its
		// last flush commits as the pages were compared, before the
		// commit's transaction recounts them.)
		if res.New != 0 || res.InconsistentReason != load.ReasonDuplicateIDs {
			t.Errorf("run %+v: want nothing new, inconsistent with duplicate_ids", res)
		}
		var versions int
		var data, pages string
		if err := f.wh.DB().QueryRowContext(t.Context(), `SELECT (SELECT count(*) FROM card_versions WHERE card_id = ?1),
				(SELECT data FROM card_state WHERE card_id = ?1),
				(SELECT inconsistent_pages FROM sync_walks ORDER BY walk_id DESC LIMIT 1)`, x).Scan(&versions, &data, &pages); err != nil {
			t.Fatal(err)
		}
		if versions != 1 || strings.Contains(data, "stale") {
			t.Errorf("card %s: %d versions, data %s; want its one version, not the stale copy", x, versions, data)
		}
		if pages != "[1,2,3]" {
			t.Errorf("walk anomaly pages %s, want [1,2,3]", pages)
		}
		var changed int
		if err := f.wh.DB().QueryRowContext(t.Context(), `SELECT cards_changed FROM sync_runs WHERE run_id = ?`, res.RunID).Scan(&changed); err != nil || changed != 0 {
			t.Errorf("sync_runs.cards_changed %d, %v; want 0", changed, err)
		}
	}
}
