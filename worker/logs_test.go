package worker

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// TestRunLogLines reads a run's JSON log as an on-call engineer would: one
// start line (run id, trigger, first page) and one end line; every line
// logged once the run row exists carries run_id, the client's retry lines
// included; stale-run recovery names each run id; a retry names its cause
// (a truncated body as truncated); durations are logged as time.Duration
// (cmd/cardsync prints them as text, TestLogDurationsAsText); and no error
// repeats its own prefix.
func TestRunLogLines(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 3, Cards: 45,
		Faults: []sim.Fault{{Kind: sim.FaultTruncate, Endpoint: "cards", Pages: []int{2}, Times: 1}}})
	ctx := t.Context()
	// A run left "running" by a process that died.
	stale, err := f.wh.StartRun(ctx, TriggerSchedule, "old")
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	// Durations reach the handler as time.Duration, so cmd/cardsync's
	// handler prints them as text ("1m0s"); a duration-named attribute of
	// another kind (nanoseconds as an int) would print as a bare number.
	var notDurations []string
	durationKeys := []string{"wait", "duration", "elapsed", "after", "took", "max_wait"}
	f.job.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if slices.Contains(durationKeys, a.Key) && a.Value.Kind() != slog.KindDuration {
				notDurations = append(notDurations, a.String())
			}
			return a
		}}))
	res, err := f.job.Run(ctx, TriggerBackfill, Options{})
	if err != nil || res.Status != "succeeded" {
		t.Fatalf("run: %+v, %v", res, err)
	}

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, l)
		}
		lines = append(lines, m)
	}
	count := func(msg string) (n int, first map[string]any) {
		for _, m := range lines {
			if m["msg"] == msg {
				if n++; n == 1 {
					first = m
				}
			}
		}
		return n, first
	}
	if n, m := count("run started"); n != 1 {
		t.Errorf("%d start lines, want 1", n)
	} else if m["run_id"] != float64(res.RunID) || m["trigger"] != TriggerBackfill || m["first_page"] != float64(1) {
		t.Errorf("start line %v: want run_id %d, trigger %s, first_page 1", m, res.RunID, TriggerBackfill)
	}
	if n, m := count("run finished"); n != 1 {
		t.Errorf("%d end lines, want 1", n)
	} else if m["run_id"] != float64(res.RunID) {
		t.Errorf("end line %v: want run_id %d", m, res.RunID)
	}

	started := false
	var staleLine, retryLine map[string]any
	for _, m := range lines {
		msg, _ := m["msg"].(string)
		if strings.Contains(msg, "abandoned") {
			staleLine = m
		}
		if msg == "retrying" {
			retryLine = m
		}
		if msg == "run started" {
			started = true
		}
		if started && m["run_id"] == nil {
			t.Errorf("line logged during the run has no run_id: %v", m)
		}
		if e, ok := m["err"].(string); ok && doubled(e) {
			t.Errorf("error repeats its prefix: %q", e)
		}
	}
	if len(notDurations) > 0 {
		t.Errorf("duration attributes logged as another kind: %v", notDurations)
	}
	if staleLine == nil {
		t.Errorf("no line about the stale run %d", stale)
	} else if ids, _ := staleLine["run_ids"].([]any); len(ids) != 1 || ids[0] != float64(stale) {
		t.Errorf("stale-run line %v: want run_ids [%d]", staleLine, stale)
	}
	if retryLine == nil {
		t.Fatalf("no retry line for the truncated page:\n%s", logs.String())
	}
	if retryLine["reason"] != "truncated body" || retryLine["run_id"] != float64(res.RunID) {
		t.Errorf("retry line %v: want reason \"truncated body\" and run_id %d", retryLine, res.RunID)
	}
	if e, _ := retryLine["err"].(string); !strings.Contains(e, "truncated body") {
		t.Errorf("retry error %q does not say the body was truncated", e)
	}
}

// doubled reports an error text with the same prefix twice in a row
// ("authenticate: authenticate: ...").
func doubled(e string) bool {
	parts := strings.Split(e, ": ")
	for i := 1; i < len(parts)-1; i++ {
		if parts[i] == parts[i-1] {
			return true
		}
	}
	return false
}
