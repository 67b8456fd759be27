package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// get asks h for path and returns the status and body.
func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// TestHealthzFollowsRuns drives /healthz through start-up, successes and
// failures on an injected clock: each step advances the clock, may end a
// run, and states the answer.
func TestHealthzFollowsRuns(t *testing.T) {
	clk := sim.NewClock()
	m := New(Options{Now: clk.Now, HealthyWithin: 30 * time.Minute})
	h := m.Handler()
	steps := []struct {
		name    string
		advance time.Duration
		run     string // status of a run ending now; "" none
		want    int
		reason  string
	}{
		{"just started", 0, "", 200, "starting: no successful run yet"},
		{"a failed run within the grace", 10 * time.Minute, load.StatusFailed, 200, "the last run ended failed 0s ago"},
		{"grace over, no success", 20*time.Minute + time.Second, "", 503, "unhealthy: no successful run in the 30m1s since start-up"},
		{"a success", time.Minute, load.StatusSucceeded, 200, "ok: the last successful run ended 0s ago"},
		{"a failure after it", 20 * time.Minute, load.StatusFailed, 200, "ok: the last successful run ended 20m0s ago"},
		{"exactly healthy_within", 10 * time.Minute, "", 200, "ok: the last successful run ended 30m0s ago"},
		{"success too old", time.Second, "", 503, "unhealthy: the last successful run ended 30m1s ago, more than healthy_within 30m0s; the last run ended failed 10m1s ago"},
		{"an interrupted run does not help", time.Minute, load.StatusInterrupted, 503, "the last run ended interrupted 0s ago"},
		{"a success again", time.Minute, load.StatusSucceeded, 200, "ok"},
	}
	for _, s := range steps {
		clk.Advance(s.advance)
		if s.run != "" {
			m.RunFinished(load.DefaultAccount, worker.Result{Trigger: worker.TriggerSchedule, Status: s.run})
		}
		code, body := get(t, h, "/healthz")
		if code != s.want || !strings.Contains(body, s.reason) {
			t.Errorf("%s: /healthz = %d %q, want %d containing %q", s.name, code, body, s.want, s.reason)
		}
		if code == 503 && !strings.Contains(body, "cardsync status") {
			t.Errorf("%s: a 503 should say what to run: %q", s.name, body)
		}
	}
}

// TestHealthzAfterRestart: a daemon restarted on a warehouse whose last
// success is old has healthy_within from start-up to bring it up to date.
func TestHealthzAfterRestart(t *testing.T) {
	clk := sim.NewClock()
	old := clk.Now().Add(-3 * time.Hour)
	m := New(Options{Now: clk.Now, HealthyWithin: 45 * time.Minute})
	wh := &fakeWarehouse{s: load.Summary{LastSuccessAt: &old, Runs: []load.Run{{ID: 3, Status: load.StatusSucceeded, FinishedAt: &old}}}}
	if err := m.Refresh(t.Context(), wh); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, m.Handler(), "/healthz"); code != 200 || !strings.Contains(body, "starting: the last successful run ended 3h0m0s ago") {
		t.Errorf("after restart: %d %q, want 200 starting", code, body)
	}
	clk.Advance(46 * time.Minute)
	if code, body := get(t, m.Handler(), "/healthz"); code != 503 {
		t.Errorf("46m after restart with no success: %d %q, want 503", code, body)
	}
	m.SetHealthyWithin(6 * time.Hour)
	if code, body := get(t, m.Handler(), "/healthz"); code != 200 {
		t.Errorf("after SetHealthyWithin(6h): %d %q, want 200", code, body)
	}
	if got := mustValue(t, families(t, m), "cardsync_healthy_within_seconds", ""); got != 6*3600 {
		t.Errorf("cardsync_healthy_within_seconds = %v, want %v", got, 6*3600)
	}
}

func TestHandlerServesMetrics(t *testing.T) {
	m := New(Options{})
	m.BackupSucceeded(time.Unix(1_700_000_000, 0))
	code, body := get(t, m.Handler(), "/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		"cardsync_backup_last_success_timestamp_seconds 1.7e+09",
		`cardsync_runs_total{account="default",status="succeeded",trigger="schedule"} 0`,
		"go_goroutines ",
		"process_start_time_seconds ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, _ := get(t, m.Handler(), "/nope"); code != 404 {
		t.Errorf("/nope = %d, want 404", code)
	}
}

func TestServerListensAndShutsDown(t *testing.T) {
	m := New(Options{})
	s, err := Listen("127.0.0.1:0", m.Handler(), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + s.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz over TCP = %d, want 200", resp.StatusCode)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if _, err := http.Get("http://" + s.Addr().String() + "/healthz"); err == nil {
		t.Error("still serving after Shutdown")
	}
	if _, err := Listen(s.Addr().String()+"0", m.Handler(), nil); err == nil {
		t.Error("Listen on a bad port succeeded")
	}
}
