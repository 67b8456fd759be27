package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/runrule"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
	"github.com/cardsync/cardsync/redact"
)

// timeFormat is how every time is stored: UTC, seconds, 'Z'.
const timeFormat = "2006-01-02T15:04:05Z"

func (w *Warehouse) stamp() string { return w.now().UTC().Format(timeFormat) }

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeFormat, s)
	return t
}

func parseNullTime(s sql.NullString) *time.Time {
	if !s.Valid {
		return nil
	}
	t := parseTime(s.String)
	return &t
}

// write runs fn in one BEGIN IMMEDIATE transaction.
func (w *Warehouse) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if w.readOnly {
		return load.ErrReadOnly
	}
	release, err := w.opts.WriteTurns.Take(ctx)
	if err != nil {
		return err
	}
	defer release()
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// StartRun inserts a `running` row and returns its id. trigger is one of
// schedule, backfill, demo; version is the binary's version string.
func (w *Warehouse) StartRun(ctx context.Context, trigger, version string) (_ int64, err error) {
	defer classify(&err)
	if err := runrule.CheckTrigger(trigger); err != nil {
		return 0, fmt.Errorf("start run: %w", err)
	}
	var id int64
	err = w.write(ctx, func(tx *sql.Tx) error {
		now := w.stamp()
		// A run of older rules writes rows the current ones would not
		// keep: the warehouse is at its version at most (never raised).
		if _, err := tx.ExecContext(ctx, sqlshare.LowerRulesVersionSQL("?1"), redact.RulesVersion); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `INSERT INTO sync_runs (trigger, started_at, heartbeat_at, status, version, account)
			VALUES (?, ?, ?, 'running', ?, ?) RETURNING run_id`, trigger, now, now, version, w.account).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("start run: %w", err)
	}
	return id, nil
}

// Heartbeat stamps heartbeat_at of a running run. It returns an error
// wrapping ErrRunNotRunning if the run finished or was marked abandoned.
func (w *Warehouse) Heartbeat(ctx context.Context, runID int64) (err error) {
	defer classify(&err)
	err = w.updateRunning(ctx, `UPDATE sync_runs SET heartbeat_at = ? WHERE run_id = ? AND account = ? AND status = 'running'`, w.stamp(), runID, w.account)
	if err != nil {
		return fmt.Errorf("heartbeat run %d: %w", runID, err)
	}
	return nil
}

// AbandonStale marks `running` runs whose heartbeat is at least staleAfter
// old as `abandoned` (their checkpoint stays, so the next run resumes the
// walk) and returns their ids. With staleAfter 0 it marks every running
// run: right for a caller that holds the writer lock, since no live process
// can be running one.
func (w *Warehouse) AbandonStale(ctx context.Context, staleAfter time.Duration) ([]int64, error) {
	runs, err := w.AbandonStaleRuns(ctx, staleAfter)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids, nil
}

// AbandonStaleRuns is AbandonStale returning each run's trigger too (the
// run metrics count abandoned runs by trigger), in run id order.
func (w *Warehouse) AbandonStaleRuns(ctx context.Context, staleAfter time.Duration) (_ []load.StaleRun, err error) {
	defer classify(&err)
	var runs []load.StaleRun
	err = w.write(ctx, func(tx *sql.Tx) error {
		runs = nil
		now := w.now()
		cutoff := formatTime(runrule.StaleCutoff(now, staleAfter))
		rows, err := tx.QueryContext(ctx, `UPDATE sync_runs
			SET status = 'abandoned', finished_at = ?,
			    error = coalesce(error, 'abandoned: the process stopped without recording the run (last heartbeat ' || heartbeat_at || ')')
			WHERE account = ? AND status = 'running' AND heartbeat_at <= ?
			RETURNING run_id, trigger`, formatTime(now), w.account, cutoff)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r load.StaleRun
			if err := rows.Scan(&r.ID, &r.Trigger); err != nil {
				return err
			}
			runs = append(runs, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("abandon stale runs: %w", err)
	}
	runrule.SortStaleRuns(runs)
	return runs, nil
}

// FinishRun records the end of a run. The run must still be `running`
// (errors.Is(err, ErrRunNotRunning) otherwise).
func (w *Warehouse) FinishRun(ctx context.Context, runID int64, r load.RunResult) (err error) {
	defer classify(&err)
	if err := runrule.CheckFinishStatus(r.Status); err != nil {
		return fmt.Errorf("finish run %d: %w", runID, err)
	}
	var errText, consistent any
	if r.Error != "" {
		errText = w.redactText(r.Error)
	}
	if r.WalkConsistent != nil {
		consistent = boolInt(*r.WalkConsistent)
	}
	now := w.stamp()
	err = w.updateRunning(ctx, `UPDATE sync_runs SET
			status = ?, finished_at = ?, heartbeat_at = ?, error = ?,
			walk_consistent = coalesce(?, walk_consistent),
			requests = requests + ?, retries = retries + ?,
			rate_limited = rate_limited + ?, auth_requests = auth_requests + ?,
			duration_ms = ?
		WHERE run_id = ? AND account = ? AND status = 'running'`,
		r.Status, now, now, errText, consistent,
		r.Requests, r.Retries, r.RateLimited, r.AuthRequests, runrule.DurationMS(r), runID, w.account)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", runID, err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Runs returns the last n runs, newest first.
func (w *Warehouse) Runs(ctx context.Context, n int) (_ []load.Run, err error) {
	defer classify(&err)
	return runs(ctx, w.db, w.account, n)
}

// runs lists the last n runs through q: the pool, or a transaction (a
// writer has one connection, so a query on the pool while a transaction
// is open would wait forever).
func runs(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, account string, n int) ([]load.Run, error) {
	rows, err := q.QueryContext(ctx, `SELECT run_id, trigger, status, started_at, finished_at, heartbeat_at,
			pages, cards_seen, cards_new, cards_changed, cards_unchanged, cards_removed, cards_rejected, removals_held,
			requests, retries, rate_limited, auth_requests, walk_consistent, error, account_error, version, secrets_redacted, cards_returned, duration_ms,
			card_numbers_masked, codes_dropped, track_data_dropped, fields_dropped
		FROM sync_runs WHERE account = ? ORDER BY run_id DESC LIMIT ?`, account, n)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []load.Run
	for rows.Next() {
		var r load.Run
		var started, heartbeat string
		var finished, errText, accountErr sql.NullString
		var consistent, durationMS sql.NullInt64
		if err := rows.Scan(&r.ID, &r.Trigger, &r.Status, &started, &finished, &heartbeat,
			&r.Pages, &r.CardsSeen, &r.CardsNew, &r.CardsChanged, &r.CardsUnchanged, &r.CardsRemoved, &r.CardsRejected, &r.RemovalsHeld,
			&r.Requests, &r.Retries, &r.RateLimited, &r.AuthRequests, &consistent, &errText, &accountErr, &r.Version, &r.SecretsRedacted, &r.CardsReturned, &durationMS,
			&r.CardNumbersMasked, &r.CodesDropped, &r.TrackDataDropped, &r.FieldsDropped); err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		r.StartedAt, r.HeartbeatAt = parseTime(started), parseTime(heartbeat)
		r.FinishedAt = parseNullTime(finished)
		r.Error = errText.String
		r.AccountError = accountErr.String
		if durationMS.Valid {
			r.DurationMS = &durationMS.Int64
		}
		if consistent.Valid {
			b := consistent.Int64 == 1
			r.WalkConsistent = &b
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// Summary summarises the warehouse: the last SummaryRuns runs, the card
// checkpoint, row counts (including removals awaiting confirmation), last
// success, failures since then and the last walk's consistency.
func (w *Warehouse) Summary(ctx context.Context) (_ load.Summary, err error) {
	defer classify(&err)
	st := load.Summary{Path: w.path, Account: w.account}
	if st.Runs, err = w.Runs(ctx, load.SummaryRuns); err != nil {
		return st, err
	}
	if st.Checkpoint, err = w.Checkpoint(ctx, load.StreamCards); err != nil {
		return st, err
	}
	var lastSuccess, lastWalk, lastSnapshot sql.NullString
	var lastSuccessRun sql.NullInt64
	var walkConsistent sql.NullInt64
	// Every count is the account's (?1).
	err = w.db.QueryRowContext(ctx, `SELECT
			(SELECT user_version FROM pragma_user_version),
			(SELECT count(*) FROM card_state WHERE account = ?1),
			(SELECT count(*) FROM card_state WHERE account = ?1 AND removed_at IS NULL),
			(SELECT count(*) FROM removal_pending WHERE account = ?1),
			(SELECT count(*) FROM card_versions WHERE account = ?1),
			(SELECT count(*) FROM account_snapshots WHERE account = ?1),
			(SELECT max(run_id) FROM sync_runs WHERE account = ?1 AND status = 'succeeded'),
			(SELECT finished_at FROM sync_runs WHERE run_id = (SELECT max(run_id) FROM sync_runs WHERE account = ?1 AND status = 'succeeded')),
			(SELECT count(*) FROM sync_runs WHERE account = ?1 AND status IN ('failed', 'abandoned')
				AND run_id > coalesce((SELECT max(run_id) FROM sync_runs WHERE account = ?1 AND status = 'succeeded'), 0)),
			(SELECT count(*) FROM sync_runs WHERE account = ?1 AND status = 'running'),
			(SELECT outcome = 'complete' FROM sync_walks WHERE account = ?1 AND outcome IN ('complete', 'inconsistent') ORDER BY walk_id DESC LIMIT 1),
			(SELECT finished_at FROM sync_walks WHERE account = ?1 AND outcome IN ('complete', 'inconsistent') ORDER BY walk_id DESC LIMIT 1),
			(SELECT max(taken_at) FROM account_snapshots WHERE account = ?1),
			(SELECT count(*) FROM rejected_cards WHERE account = ?1),
			coalesce((SELECT cards_rejected FROM sync_runs WHERE account = ?1 ORDER BY run_id DESC LIMIT 1), 0),
			coalesce((SELECT removals_held FROM sync_runs WHERE account = ?1 AND walk_consistent IS NOT NULL ORDER BY run_id DESC LIMIT 1), 0)`, w.account).
		Scan(&st.SchemaVersion, &st.Cards, &st.CurrentCards, &st.PendingRemovals, &st.CardVersions, &st.Snapshots,
			&lastSuccessRun, &lastSuccess, &st.FailuresInARow, &st.Running, &walkConsistent, &lastWalk,
			&lastSnapshot, &st.RejectedCards, &st.LastRunRejected, &st.RemovalsHeld)
	if err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	st.RemovedCards = st.Cards - st.CurrentCards
	st.LastSuccessRun = lastSuccessRun.Int64
	st.LastSuccessAt = parseNullTime(lastSuccess)
	st.LastWalkAt = parseNullTime(lastWalk)
	st.LastSnapshotAt = parseNullTime(lastSnapshot)
	if walkConsistent.Valid {
		b := walkConsistent.Int64 == 1
		st.LastWalkConsistent = &b
	}
	if st.RecentWalks, err = w.recentWalks(ctx); err != nil {
		return st, err
	}
	st.DatabaseBytes = fileSize(w.path)
	st.WALBytes = fileSize(w.path + "-wal")
	return st, nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// PruneAudit deletes the run_pages audit rows of the account's runs that
// started before cutoff, keeping those of a walk still open (its summary needs them). The
// table gains one row per page that changed something (a quiet walk's
// rows fold into the identical walk before it), so without pruning a busy
// account's audit grows with every run. It returns the number of rows
// deleted.
func (w *Warehouse) PruneAudit(ctx context.Context, cutoff time.Time) (_ int64, err error) {
	defer classify(&err)
	var n int64
	err = w.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM run_pages
			WHERE run_id < coalesce(
					(SELECT min(run_id) FROM sync_runs WHERE account = ?2 AND started_at >= ?1),
					(SELECT coalesce(max(run_id), 0) + 1 FROM sync_runs))
			  AND run_id IN (SELECT run_id FROM sync_runs WHERE account = ?2)
			  AND (walk_id IS NULL OR walk_id NOT IN (SELECT walk_id FROM sync_walks WHERE outcome IS NULL))`,
			formatTime(cutoff), w.account)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune page audit: %w", err)
	}
	return n, nil
}

// RunsNotTriggeredBy counts the runs whose trigger is not trigger (the demo
// refuses to replace a warehouse that holds anything but demo runs). It
// counts the runs of every account: the demo replaces the whole file.
func (w *Warehouse) RunsNotTriggeredBy(ctx context.Context, trigger string) (n int, err error) {
	defer classify(&err)
	err = w.db.QueryRowContext(ctx, `SELECT count(*) FROM sync_runs WHERE trigger != ?`, trigger).Scan(&n)
	return n, err
}

// updateRunning runs an UPDATE of one run that must still be running:
// ErrRunNotRunning when it changed no row.
func (w *Warehouse) updateRunning(ctx context.Context, query string, args ...any) error {
	return w.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return load.ErrRunNotRunning
		}
		return nil
	})
}

func (w *Warehouse) recentWalks(ctx context.Context) ([]load.WalkOutcome, error) {
	rows, err := w.db.QueryContext(ctx, runrule.RecentWalksQuery, w.account)
	if err != nil {
		return nil, fmt.Errorf("recent walks: %w", err)
	}
	defer rows.Close()
	out := []load.WalkOutcome{}
	for rows.Next() {
		var o load.WalkOutcome
		var finished, pages string
		if err := rows.Scan(&o.WalkID, &finished, &o.Outcome, &o.Reason, &pages); err != nil {
			return nil, fmt.Errorf("recent walks: %w", err)
		}
		o.FinishedAt, o.Pages = parseTime(finished), sqlshare.ParsePages(pages)
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recent walks: %w", err)
	}
	return out, nil
}

// ForeignRuns counts the runs in the warehouse file at path that trigger
// did not start. It reads a file of any schema version this binary can
// upgrade (sync_runs.trigger exists since the first), read-only: demo asks
// it before it replaces a file, so a demo warehouse of an older release is
// replaced while a real warehouse of any release is refused.
func ForeignRuns(ctx context.Context, path, trigger string) (n int, err error) {
	defer classify(&err)
	w, err := OpenReadOnly(ctx, path)
	if err == nil {
		defer w.Close()
		return w.RunsNotTriggeredBy(ctx, trigger)
	}
	var old *load.SchemaVersionError
	if !errors.As(err, &old) {
		return 0, err
	}
	abs, aerr := filepath.Abs(path)
	if aerr != nil {
		return 0, aerr
	}
	db, err := sql.Open("sqlite", dsn(abs, []string{"mode=ro", "_pragma=query_only(1)",
		"_pragma=busy_timeout(" + strconv.Itoa(int(busyTimeout/time.Millisecond)) + ")"}))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM sync_runs WHERE trigger != ?`, trigger).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count runs of %s (schema %d): %w", path, old.Database, err)
	}
	return n, nil
}
