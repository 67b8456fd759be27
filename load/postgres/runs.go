package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/runrule"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
	"github.com/cardsync/cardsync/redact"
)

func streamOf(s string) string {
	if s == "" {
		return load.StreamCards
	}
	return s
}

func boolInt(b bool) int16 {
	if b {
		return 1
	}
	return 0
}

// clean makes s storable in a text column: valid UTF-8 without NUL bytes
// (PostgreSQL refuses both).
func clean(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// text is clean with card numbers masked and secrets removed
// (load.RedactText): what load stores of reasons and error messages.
func (w *Warehouse) text(s string) string { return load.RedactText(w.policy, clean(s)) }

// StartRun inserts a running sync_runs row and returns its id, as
// sqlite.Warehouse.StartRun.
func (w *Warehouse) StartRun(ctx context.Context, trigger, version string) (_ int64, err error) {
	defer classify(&err)
	if err := runrule.CheckTrigger(trigger); err != nil {
		return 0, fmt.Errorf("start run: %w", err)
	}
	var id int64
	// holder: the replica whose lease the run writes under (NULL without one).
	w.mu.Lock()
	var holder *string
	if h := w.fence.holder; h != "" {
		holder = &h
	}
	w.mu.Unlock()
	err = w.write(ctx, func(tx pgx.Tx) error {
		now := w.stamp()
		// A run of older rules writes rows the current ones would not
		// keep: the warehouse is at its version at most (never raised).
		if _, err := tx.Exec(ctx, sqlshare.LowerRulesVersionSQL("$1"), redact.RulesVersion); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO sync_runs (trigger, started_at, heartbeat_at, status, version, account, holder)
			VALUES ($1, $2, $2, 'running', $3, $4, $5) RETURNING run_id`, trigger, now, clean(version), w.account, holder).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("start run: %w", err)
	}
	return id, nil
}

// Heartbeat stamps heartbeat_at of a running run (load.ErrRunNotRunning
// when it is no longer running).
func (w *Warehouse) Heartbeat(ctx context.Context, runID int64) (err error) {
	defer classify(&err)
	if err := w.updateRunning(ctx, `UPDATE sync_runs SET heartbeat_at = $1 WHERE run_id = $2 AND account = $3 AND status = 'running'`,
		w.stamp(), runID, w.account); err != nil {
		return fmt.Errorf("heartbeat run %d: %w", runID, err)
	}
	return nil
}

// FinishRun records the end of a run, as sqlite.Warehouse.FinishRun.
func (w *Warehouse) FinishRun(ctx context.Context, runID int64, r load.RunResult) (err error) {
	defer classify(&err)
	if err := runrule.CheckFinishStatus(r.Status); err != nil {
		return fmt.Errorf("finish run %d: %w", runID, err)
	}
	var errText *string
	if r.Error != "" {
		s := w.text(r.Error)
		errText = &s
	}
	var consistent *int16
	if r.WalkConsistent != nil {
		c := boolInt(*r.WalkConsistent)
		consistent = &c
	}
	err = w.updateRunning(ctx, `UPDATE sync_runs SET
			status = $1, finished_at = $2, heartbeat_at = $2, error = $3,
			walk_consistent = coalesce($4, walk_consistent),
			requests = requests + $5, retries = retries + $6,
			rate_limited = rate_limited + $7, auth_requests = auth_requests + $8,
			duration_ms = $11
		WHERE run_id = $9 AND account = $10 AND status = 'running'`,
		r.Status, w.stamp(), errText, consistent, r.Requests, r.Retries, r.RateLimited, r.AuthRequests, runID, w.account, runrule.DurationMS(r))
	if err != nil {
		return fmt.Errorf("finish run %d: %w", runID, err)
	}
	return nil
}

// updateRunning runs an UPDATE of one run that must still be running.
func (w *Warehouse) updateRunning(ctx context.Context, query string, args ...any) error {
	return w.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, query, args...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return load.ErrRunNotRunning
		}
		return nil
	})
}

// AbandonStaleRuns marks the account's running runs whose heartbeat is at
// least staleAfter old (every one with 0: right under the account's lease)
// abandoned, as sqlite.Warehouse.AbandonStaleRuns.
func (w *Warehouse) AbandonStaleRuns(ctx context.Context, staleAfter time.Duration) (_ []load.StaleRun, err error) {
	defer classify(&err)
	var runs []load.StaleRun
	err = w.write(ctx, func(tx pgx.Tx) error {
		now := w.stamp()
		cutoff := runrule.StaleCutoff(now, staleAfter)
		rows, err := tx.Query(ctx, `UPDATE sync_runs
			SET status = 'abandoned', finished_at = $1,
			    error = coalesce(error, 'abandoned: the process stopped without recording the run (last heartbeat '
			        || to_char(heartbeat_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ')')
			WHERE account = $2 AND status = 'running' AND heartbeat_at <= $3
			RETURNING run_id, trigger`, now, w.account, cutoff)
		if err != nil {
			return err
		}
		runs, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (load.StaleRun, error) {
			var s load.StaleRun
			return s, r.Scan(&s.ID, &s.Trigger)
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("abandon stale runs: %w", err)
	}
	runrule.SortStaleRuns(runs)
	return runs, nil
}

// Runs returns the account's last n runs, newest first.
func (w *Warehouse) Runs(ctx context.Context, n int) (_ []load.Run, err error) {
	defer classify(&err)
	return runsOf(ctx, w.pool, w.account, n)
}

// runsOf is Runs through q (the pool, or a report's transaction).
func runsOf(ctx context.Context, q rowsQuerier, account string, n int) ([]load.Run, error) {
	rows, err := q.Query(ctx, `SELECT run_id, trigger, status, started_at, finished_at, heartbeat_at,
			pages, cards_seen, cards_new, cards_changed, cards_unchanged, cards_removed, cards_rejected, removals_held,
			requests, retries, rate_limited, auth_requests, walk_consistent, coalesce(error, ''), coalesce(account_error, ''), version, secrets_redacted, cards_returned, duration_ms,
			card_numbers_masked, codes_dropped, track_data_dropped, fields_dropped
		FROM sync_runs WHERE account = $1 ORDER BY run_id DESC LIMIT $2`, account, n)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (load.Run, error) {
		var r load.Run
		var consistent *int16
		err := row.Scan(&r.ID, &r.Trigger, &r.Status, &r.StartedAt, &r.FinishedAt, &r.HeartbeatAt,
			&r.Pages, &r.CardsSeen, &r.CardsNew, &r.CardsChanged, &r.CardsUnchanged, &r.CardsRemoved, &r.CardsRejected, &r.RemovalsHeld,
			&r.Requests, &r.Retries, &r.RateLimited, &r.AuthRequests, &consistent, &r.Error, &r.AccountError, &r.Version, &r.SecretsRedacted, &r.CardsReturned, &r.DurationMS,
			&r.CardNumbersMasked, &r.CodesDropped, &r.TrackDataDropped, &r.FieldsDropped)
		r.StartedAt, r.HeartbeatAt, r.FinishedAt = utc(r.StartedAt), utc(r.HeartbeatAt), utcPtr(r.FinishedAt)
		if consistent != nil {
			b := *consistent == 1
			r.WalkConsistent = &b
		}
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// Summary is sqlite.Warehouse.Summary: Path is the redacted URL,
// SchemaVersion the latest schema_migrations version, DatabaseBytes the
// whole database's size (every account), WALBytes 0, Schema the
// warehouse's schema.
func (w *Warehouse) Summary(ctx context.Context) (_ load.Summary, err error) {
	defer classify(&err)
	st := load.Summary{Path: w.url, Schema: w.schema, Account: w.account}
	if st.Runs, err = w.Runs(ctx, load.SummaryRuns); err != nil {
		return st, err
	}
	if st.Checkpoint, err = w.Checkpoint(ctx, load.StreamCards); err != nil {
		return st, err
	}
	var walkConsistent *bool
	var lastSuccessRun *int64
	err = w.pool.QueryRow(ctx, `SELECT
			(SELECT coalesce(max(version), 0) FROM schema_migrations),
			(SELECT count(*) FROM card_state WHERE account = $1),
			(SELECT count(*) FROM card_state WHERE account = $1 AND removed_at IS NULL),
			(SELECT count(*) FROM removal_pending WHERE account = $1),
			(SELECT count(*) FROM card_versions WHERE account = $1),
			(SELECT count(*) FROM account_snapshots WHERE account = $1),
			(SELECT max(run_id) FROM sync_runs WHERE account = $1 AND status = 'succeeded'),
			(SELECT finished_at FROM sync_runs WHERE run_id = (SELECT max(run_id) FROM sync_runs WHERE account = $1 AND status = 'succeeded')),
			(SELECT count(*) FROM sync_runs WHERE account = $1 AND status IN ('failed', 'abandoned')
				AND run_id > coalesce((SELECT max(run_id) FROM sync_runs WHERE account = $1 AND status = 'succeeded'), 0)),
			(SELECT count(*) FROM sync_runs WHERE account = $1 AND status = 'running'),
			(SELECT outcome = 'complete' FROM sync_walks WHERE account = $1 AND outcome IN ('complete', 'inconsistent') ORDER BY walk_id DESC LIMIT 1),
			(SELECT finished_at FROM sync_walks WHERE account = $1 AND outcome IN ('complete', 'inconsistent') ORDER BY walk_id DESC LIMIT 1),
			(SELECT max(taken_at) FROM account_snapshots WHERE account = $1),
			(SELECT count(*) FROM rejected_cards WHERE account = $1),
			coalesce((SELECT cards_rejected FROM sync_runs WHERE account = $1 ORDER BY run_id DESC LIMIT 1), 0),
			coalesce((SELECT removals_held FROM sync_runs WHERE account = $1 AND walk_consistent IS NOT NULL ORDER BY run_id DESC LIMIT 1), 0),
			pg_database_size(current_database())`, w.account).
		Scan(&st.SchemaVersion, &st.Cards, &st.CurrentCards, &st.PendingRemovals, &st.CardVersions, &st.Snapshots,
			&lastSuccessRun, &st.LastSuccessAt, &st.FailuresInARow, &st.Running, &walkConsistent, &st.LastWalkAt,
			&st.LastSnapshotAt, &st.RejectedCards, &st.LastRunRejected, &st.RemovalsHeld, &st.DatabaseBytes)
	if err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	st.RemovedCards = st.Cards - st.CurrentCards
	if lastSuccessRun != nil {
		st.LastSuccessRun = *lastSuccessRun
	}
	st.LastWalkConsistent = walkConsistent
	if st.RecentWalks, err = w.recentWalks(ctx); err != nil {
		return st, err
	}
	if st.CardsFlatStale, err = w.CardsFlatStale(ctx); err != nil {
		return st, err
	}
	st.LastSuccessAt, st.LastWalkAt, st.LastSnapshotAt = utcPtr(st.LastSuccessAt), utcPtr(st.LastWalkAt), utcPtr(st.LastSnapshotAt)
	return st, nil
}

// PruneAudit deletes the run_pages rows of the account's runs started
// before cutoff, except those of a walk still open, as
// sqlite.Warehouse.PruneAudit.
func (w *Warehouse) PruneAudit(ctx context.Context, cutoff time.Time) (_ int64, err error) {
	defer classify(&err)
	var n int64
	err = w.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM run_pages
			WHERE run_id < coalesce(
					(SELECT min(run_id) FROM sync_runs WHERE account = $2 AND started_at >= $1),
					(SELECT coalesce(max(run_id), 0) + 1 FROM sync_runs))
			  AND run_id IN (SELECT run_id FROM sync_runs WHERE account = $2)
			  AND (walk_id IS NULL OR walk_id NOT IN (SELECT walk_id FROM sync_walks WHERE outcome IS NULL))`,
			cutoff.UTC(), w.account)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune page audit: %w", err)
	}
	return n, nil
}

// SaveAccount stores one account snapshot for the run, amounts as exact
// cents (load.Cents), raw redacted, as sqlite.Warehouse.SaveAccount.
func (w *Warehouse) SaveAccount(ctx context.Context, runID int64, a load.Account) (err error) {
	defer classify(&err)
	row, err := load.PrepareAccount(w.policy, a)
	if err != nil {
		return fmt.Errorf("save account: %w", err)
	}
	// Text must be storable; text cannot hold U+0000, and the snapshot is
	// diagnostics, so the character is replaced rather than the snapshot
	// refused.
	for _, s := range []**string{&row.Name, &row.Email, &row.Timezone} {
		if *s != nil {
			t := clean(**s)
			*s = &t
		}
	}
	// raw is text (migration 9): kept exactly as received, whatever
	// jsonb would refuse or rewrite in it.
	if row.Raw != nil {
		raw := clean(*row.Raw)
		row.Raw = &raw
	}
	err = w.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO account_snapshots (`+sqlshare.AccountSnapshotColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
			row.Args(runID, w.stamp(), w.account)...); err != nil {
			return err
		}
		if row.Secrets == 0 && row.Counts == (load.RuleCounts{}) {
			return nil
		}
		_, err := tx.Exec(ctx, `UPDATE sync_runs SET secrets_redacted = secrets_redacted + $1,
				card_numbers_masked = card_numbers_masked + $4, codes_dropped = codes_dropped + $5, track_data_dropped = track_data_dropped + $6
			WHERE run_id = $2 AND account = $3`,
			row.Secrets, runID, w.account, row.Counts.CardNumbers, row.Counts.Codes, row.Counts.TrackData)
		return err
	})
	if err != nil {
		return fmt.Errorf("save account: %w", err)
	}
	return nil
}

// RecordAccountError notes in sync_runs.account_error why the run took no
// account snapshot, card numbers masked.
func (w *Warehouse) RecordAccountError(ctx context.Context, runID int64, msg string) (err error) {
	defer classify(&err)
	if err := w.exec(ctx, `UPDATE sync_runs SET account_error = $1 WHERE run_id = $2 AND account = $3`,
		w.text(msg), runID, w.account); err != nil {
		return fmt.Errorf("record account error of run %d: %w", runID, err)
	}
	return nil
}

// Checkpoint returns where the next run resumes stream (NextPage 1 for a
// stream never walked).
func (w *Warehouse) Checkpoint(ctx context.Context, stream string) (_ load.Checkpoint, err error) {
	defer classify(&err)
	stream = streamOf(stream)
	cp := load.Checkpoint{Stream: stream, NextPage: 1}
	var runID *int64
	err = w.pool.QueryRow(ctx, `SELECT run_id, next_page, total_pages, total_items, updated_at,
			EXISTS (SELECT 1 FROM sync_walks WHERE account = $2 AND stream = $1 AND finished_at IS NULL)
		FROM sync_checkpoints WHERE account = $2 AND stream = $1`, stream, w.account).
		Scan(&runID, &cp.NextPage, &cp.TotalPages, &cp.TotalItems, &cp.UpdatedAt, &cp.InProgress)
	if errors.Is(err, pgx.ErrNoRows) {
		return cp, nil
	}
	if err != nil {
		return cp, fmt.Errorf("read checkpoint %s: %w", stream, err)
	}
	if runID != nil {
		cp.RunID = *runID
	}
	cp.UpdatedAt = utc(cp.UpdatedAt)
	return cp, nil
}

// ResetCheckpoint abandons the open walk of stream (outcome reset, no
// removals) so the next run starts at page 1.
func (w *Warehouse) ResetCheckpoint(ctx context.Context, stream string) (err error) {
	defer classify(&err)
	stream = streamOf(stream)
	err = w.write(ctx, func(tx pgx.Tx) error {
		now := w.stamp()
		walkID, _, err := openWalk(ctx, tx, w.account, stream)
		if err != nil {
			return err
		}
		if walkID != 0 {
			if _, err := w.closeWalk(ctx, tx, walkID, 0, "reset", load.WalkEnd{}, now); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `UPDATE sync_checkpoints SET next_page = 1, updated_at = $1 WHERE stream = $2 AND account = $3`, now, stream, w.account)
		return err
	})
	if err != nil {
		return fmt.Errorf("reset checkpoint %s: %w", stream, err)
	}
	return nil
}

// openWalk returns the open walk of the account's stream (0 when none) and
// the total its first page reported.
func openWalk(ctx context.Context, tx pgx.Tx, account, stream string) (id int64, firstTotal int, err error) {
	// At most one walk of a stream is open; the aggregate answers 0 for none.
	err = tx.QueryRow(ctx, `SELECT coalesce(max(walk_id), 0), coalesce(max(first_total), 0) FROM sync_walks
		WHERE account = $1 AND stream = $2 AND finished_at IS NULL`, account, stream).Scan(&id, &firstTotal)
	if err != nil {
		return 0, 0, fmt.Errorf("find open walk: %w", err)
	}
	return id, firstTotal, nil
}

// WalkSummary reports on the open walk of stream (zero when none).
func (w *Warehouse) WalkSummary(ctx context.Context, stream string) (_ load.WalkSummary, err error) {
	defer classify(&err)
	stream = streamOf(stream)
	var s load.WalkSummary
	var totalChanged int16
	var pages string
	err = w.pool.QueryRow(ctx, `SELECT walk_id, started_at, started_run, first_total, last_total,
			pages, last_page, runs, total_changed, coalesce(min_total, first_total), coalesce(max_total, first_total),
			coalesce((SELECT total_pages FROM sync_checkpoints WHERE account = $2 AND stream = $1), 0),
			coalesce(inconsistent_reason, ''), coalesce(inconsistent_pages, '')
		FROM sync_walks WHERE account = $2 AND stream = $1 AND finished_at IS NULL`, stream, w.account).
		Scan(&s.WalkID, &s.StartedAt, &s.StartedRun, &s.FirstTotal, &s.LastTotal,
			&s.Pages, &s.LastPage, &s.Runs, &totalChanged, &s.MinTotal, &s.MaxTotal, &s.TotalPages,
			&s.Reason, &pages)
	if errors.Is(err, pgx.ErrNoRows) {
		return load.WalkSummary{}, nil
	}
	if err != nil {
		return s, fmt.Errorf("walk summary %s: %w", stream, err)
	}
	s.StartedAt = utc(s.StartedAt)
	s.AnomalyPages = sqlshare.ParsePages(pages)
	if s.DistinctIDs, s.DuplicateIDs, err = walkIDCounts(ctx, w.pool, s.WalkID); err != nil {
		return s, fmt.Errorf("walk summary %s: %w", stream, err)
	}
	s.TotalChanged = totalChanged == 1 || s.LastTotal != s.FirstTotal
	return s, nil
}

// PendingRemovals counts the account's cards awaiting removal confirmation.
func (w *Warehouse) PendingRemovals(ctx context.Context) (_ int, err error) {
	defer classify(&err)
	var n int
	if err := w.pool.QueryRow(ctx, `SELECT count(*) FROM removal_pending WHERE account = $1`, w.account).Scan(&n); err != nil {
		return 0, fmt.Errorf("count pending removals: %w", err)
	}
	return n, nil
}

// recentWalks is load.Summary.RecentWalks: runrule.RecentWalksQuery.
func (w *Warehouse) recentWalks(ctx context.Context) ([]load.WalkOutcome, error) {
	rows, err := w.pool.Query(ctx, strings.ReplaceAll(runrule.RecentWalksQuery, "?1", "$1"), w.account)
	if err != nil {
		return nil, fmt.Errorf("recent walks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (load.WalkOutcome, error) {
		var o load.WalkOutcome
		var pages string
		err := row.Scan(&o.WalkID, &o.FinishedAt, &o.Outcome, &o.Reason, &pages)
		o.FinishedAt, o.Pages = utc(o.FinishedAt), sqlshare.ParsePages(pages)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("recent walks: %w", err)
	}
	if out == nil {
		out = []load.WalkOutcome{}
	}
	return out, nil
}
