package worker

import (
	"database/sql"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

// TestRunResultRecordedDespiteALockedWarehouse: another connection holds
// the write lock when a failed run ends (longer than busy_timeout): the
// result is retried until it lands, with its real error, not left to look
// abandoned.
func TestRunResultRecordedDespiteALockedWarehouse(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a lock for 7 seconds of real time (busy_timeout is real time)")
	}
	f := newFixture(t, sim.Options{Seed: 6, Cards: 30})
	f.srv.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultStatus, Status: 403})
	held := make(chan struct{})
	f.job.Client = rewriteClientWith(t, f, func(r *http.Request) {
		if r.URL.Path != "/cards" {
			return
		}
		go func() {
			other, err := sql.Open("sqlite", "file:"+f.wh.Path()+"?_txlock=immediate")
			if err != nil {
				t.Error(err)
				return
			}
			defer other.Close()
			tx, err := other.Begin()
			if err != nil {
				t.Error(err)
				return
			}
			close(held)
			time.Sleep(7 * time.Second) // past the writer's 5s busy_timeout
			tx.Rollback()
		}()
		<-held
	}, nil)
	var logs strings.Builder
	f.job.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	res, err := f.job.Run(t.Context(), TriggerSchedule, Options{})
	if err == nil || res.Status != "failed" {
		t.Fatalf("run %+v err %v, want failed", res, err)
	}
	var status, errText string
	f.wh.DB().QueryRow(`SELECT status, error FROM sync_runs WHERE run_id = ?`, res.RunID).Scan(&status, &errText)
	if status != "failed" || !strings.Contains(errText, "403") {
		t.Errorf("sync_runs: %s %q, want failed with the 403", status, errText)
	}
	if !strings.Contains(logs.String(), "the warehouse refused the run's result; retrying") {
		t.Errorf("no retry logged:\n%s", logs.String())
	}
}

// TestPendingResultRecordedByTheNextRun: a result the warehouse refused to
// the end (kept in <warehouse>.unrecorded by a process that then exited) is
// recorded by the next run, before stale runs are marked abandoned.
func TestPendingResultRecordedByTheNextRun(t *testing.T) {
	f := newFixture(t, sim.Options{Seed: 7, Cards: 15})
	lost, err := f.wh.StartRun(t.Context(), TriggerBackfill, "test")
	if err != nil {
		t.Fatal(err)
	}
	pending := `[{"run_id":` + strconv.FormatInt(lost, 10) + `,"result":{"Status":"failed","Error":"walk cards: disk full: the real cause"}}]`
	if err := os.WriteFile(f.wh.Path()+".unrecorded", []byte(pending), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := f.job.Run(t.Context(), TriggerSchedule, Options{}); err != nil {
		t.Fatal(err)
	}
	var status, errText string
	f.wh.DB().QueryRow(`SELECT status, error FROM sync_runs WHERE run_id = ?`, lost).Scan(&status, &errText)
	if status != "failed" || errText != "walk cards: disk full: the real cause" {
		t.Errorf("the earlier run: %s %q, want failed with its real cause", status, errText)
	}
	if _, err := os.Stat(f.wh.Path() + ".unrecorded"); !os.IsNotExist(err) {
		t.Errorf("the pending file is still there: %v", err)
	}
}
