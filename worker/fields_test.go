package worker

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
)

// TestWalkBoundsCardFields: a walk over cards holding 1,500 field names of
// their own records load.MaxNewFieldsPerWalk fields and logs one warn line
// with the number left out (never a name); a run that completes a walk
// prunes a field no run has seen within the retention, and the next walk
// adds the fields the first one left out.
func TestWalkBoundsCardFields(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 2, Cards: 300, UniqueFields: 1500, FieldNameBytes: 64})
	ctx := t.Context()
	var logs strings.Builder
	f.job.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	res, err := f.job.Run(ctx, TriggerBackfill, Options{})
	if err != nil || res.Status != load.StatusSucceeded || !res.WalkComplete {
		t.Fatalf("run: %+v, %v", res, err)
	}
	db := f.wh.DB()
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	if got := count(`SELECT count(*) FROM card_fields`); got != load.MaxNewFieldsPerWalk {
		t.Errorf("card_fields has %d rows, want %d", got, load.MaxNewFieldsPerWalk)
	}
	distinct := count(`SELECT count(DISTINCT key) FROM cards, json_each(cards.data)`)
	if want := distinct - load.MaxNewFieldsPerWalk; res.FieldsSkipped != want || want < 500 {
		t.Errorf("FieldsSkipped = %d, want %d (%d distinct fields in data)", res.FieldsSkipped, want, distinct)
	}
	warned := 0
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, l)
		}
		if strings.Contains(m["msg"].(string), "more new card fields") {
			warned++
			if m["level"] != "WARN" || m["fields_skipped"] != float64(res.FieldsSkipped) {
				t.Errorf("warning %s, want WARN with fields_skipped=%d", l, res.FieldsSkipped)
			}
		}
	}
	if warned != 1 {
		t.Errorf("%d warnings about skipped fields, want 1", warned)
	}
	if strings.Contains(logs.String(), "u1499_") {
		t.Error("the log names a field")
	}

	// A field no card holds any more, last seen long ago.
	if _, err := db.ExecContext(ctx, `INSERT INTO card_fields (name, json_types, first_run, last_run, first_seen_at, column_name, in_flat_view, last_seen_at)
		VALUES ('gone', 'string', ?1, ?1, '2020-01-01T00:00:00Z', 'gone', 1, '2020-01-01T00:00:00Z')`, res.RunID); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	res, err = f.job.Run(ctx, TriggerBackfill, Options{})
	if err != nil || res.Status != load.StatusSucceeded || res.FieldsSkipped != 0 {
		t.Fatalf("second run: %+v, %v", res, err)
	}
	if got := count(`SELECT count(*) FROM card_fields WHERE name = 'gone'`); got != 0 {
		t.Error("a field unseen for years was not pruned")
	}
	if got := count(`SELECT count(*) FROM card_fields`); got != distinct {
		t.Errorf("card_fields has %d rows after the second walk, want every field (%d)", got, distinct)
	}
	if !strings.Contains(logs.String(), `"msg":"pruned card fields`) {
		t.Errorf("no line says fields were pruned:\n%s", logs.String())
	}
}
