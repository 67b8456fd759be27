package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cardsync/cardsync/load"
)

// pendingResult is a run's result the warehouse refused to record (a
// database locked for longer than the retries, a full disk): it is kept in
// memory and in a file beside the warehouse, and recorded before the next
// run starts, so the run is never left to look abandoned
// when its real error is known.
type pendingResult struct {
	RunID  int64          `json:"run_id"`
	Result load.RunResult `json:"result"`
}

// pendingResults holds a Job's unrecorded results.
type pendingResults struct {
	mu   sync.Mutex
	list []pendingResult
}

// pendingPath is the file beside the warehouse that holds unrecorded
// results across processes (a backfill that exits).
func (j *Job) pendingPath() string { return j.Warehouse.File() + ".unrecorded" }

// readPending reads the file of unrecorded results (none with
// PostgreSQL).
func (j *Job) readPending() ([]byte, error) {
	if !j.pendingFile() {
		return nil, os.ErrNotExist
	}
	return os.ReadFile(j.pendingPath())
}

// pendingFile reports whether unrecorded results are kept in a file: only
// beside a warehouse kept in a file (load.Destination.File; a server's
// stay in memory).
func (j *Job) pendingFile() bool { return j.Warehouse.File() != "" }

// record stores the run's result, retrying while the warehouse refuses
// (busy, locked, full) until ctx ends; then it keeps the result for the
// next run and logs the real error once.
func (j *Job) record(ctx context.Context, log *slog.Logger, runID int64, rr load.RunResult) error {
	wait := 100 * time.Millisecond
	var err error
	for attempt := 1; ; attempt++ {
		if err = j.Warehouse.FinishRun(ctx, runID, rr); err == nil || errors.Is(err, load.ErrRunNotRunning) {
			return err
		}
		if errors.Is(err, ErrLeaseLost) {
			// Not ours to record any more: the replica that takes the
			// lease marks the run abandoned.
			log.Warn("the run's result cannot be recorded: the account's lease was lost; the next holder marks the run abandoned", "err", err)
			return err
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			break
		}
		log.Warn("the warehouse refused the run's result; retrying", "attempt", attempt, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		if ctx.Err() != nil {
			break
		}
		wait = min(wait*2, 2*time.Second)
	}
	j.pending.mu.Lock()
	j.pending.list = append(j.pending.list, pendingResult{RunID: runID, Result: rr})
	list := append([]pendingResult(nil), j.pending.list...)
	j.pending.mu.Unlock()
	if b, merr := json.Marshal(list); merr == nil && j.pendingFile() {
		if werr := os.WriteFile(j.pendingPath(), b, 0o640); werr != nil {
			log.Debug("could not keep the unrecorded result in a file", "err", werr)
		}
	}
	log.Error("the run's result could not be recorded; the next run records it", "err", err,
		"result_status", rr.Status, "result_error", rr.Error)
	return err
}

// recordPending records the results earlier runs could not (kept in
// memory by this process, or in the file by another), before stale runs
// are marked abandoned. A result whose run is no longer running is dropped.
func (j *Job) recordPending(ctx context.Context, log *slog.Logger) error {
	j.pending.mu.Lock()
	defer j.pending.mu.Unlock()
	list := j.pending.list
	if b, err := j.readPending(); err == nil {
		var fromFile []pendingResult
		if json.Unmarshal(b, &fromFile) == nil {
			seen := map[int64]bool{}
			for _, p := range list {
				seen[p.RunID] = true
			}
			for _, p := range fromFile {
				if !seen[p.RunID] {
					list = append(list, p)
				}
			}
		}
	}
	if len(list) == 0 {
		return nil
	}
	var keep []pendingResult
	for _, p := range list {
		err := j.Warehouse.FinishRun(ctx, p.RunID, p.Result)
		switch {
		case err == nil:
			log.Info("recorded the result of an earlier run", "earlier_run_id", p.RunID, "status", p.Result.Status)
		case errors.Is(err, load.ErrRunNotRunning):
		default:
			keep = append(keep, p)
			j.pending.list = keep
			return err
		}
	}
	j.pending.list = nil
	if !j.pendingFile() {
		return nil
	}
	if err := os.Remove(j.pendingPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: remove %s: %w", ErrWarehouse, j.pendingPath(), err)
	}
	return nil
}
