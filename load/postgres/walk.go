package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/walk"
)

// sqlSeen is the set of ids walk $1 listed, distinct: a CTE every
// statement of a walk's close starts with. PostgreSQL hashes it, so a
// card's lookup costs the same whatever the size of the walk.
const sqlSeen = `seen AS MATERIALIZED (SELECT DISTINCT u.id AS card_id FROM walk_seen s, unnest(s.ids) AS u(id) WHERE s.walk_id = $1)`

// sqlMissed adds to sqlSeen the current cards of account $2 that walk $1
// did not list.
const sqlMissed = sqlSeen + `, missed AS (SELECT c.card_id FROM card_state c LEFT JOIN seen USING (card_id)
		WHERE c.account = $2 AND c.removed_at IS NULL AND seen.card_id IS NULL)`

// FinishWalk closes the open walk of stream with load's rules (see
// sqlite.Warehouse.FinishWalk): when consistent, a current card no attempt
// of the walk listed is confirmed removed if an earlier consistent walk
// missed it too, else it becomes pending; every card listed leaves
// removal_pending; the mass-removal guard (walk.HoldRemovals) holds
// removals unless end.ConfirmRemovals; the checkpoint goes back to page 1.
func (w *Warehouse) FinishWalk(ctx context.Context, runID int64, stream string, end load.WalkEnd) (_ load.WalkResult, err error) {
	defer classify(&err)
	stream = streamOf(stream)
	var res load.WalkResult
	err = w.write(ctx, func(tx pgx.Tx) error {
		res = load.WalkResult{}
		now := w.stamp()
		// The close's statements each touch every card of the account
		// once: compiling them (JIT, which their cost estimates invite)
		// costs more than running them.
		if _, err := tx.Exec(ctx, `SELECT set_config('jit', 'off', true)`); err != nil {
			return fmt.Errorf("plan the walk's close: %w", err)
		}
		walkID, _, err := openWalk(ctx, tx, w.account, stream)
		if err != nil {
			return err
		}
		if walkID != 0 {
			if res, err = w.closeWalk(ctx, tx, walkID, runID, end.Outcome(), end, now); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE sync_runs SET cards_removed = cards_removed + $1, removals_held = $2, walk_consistent = $3
			WHERE run_id = $4 AND account = $5`, res.Removed, res.Held, boolInt(end.Consistent), runID, w.account); err != nil {
			return fmt.Errorf("count run: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO sync_checkpoints (stream, run_id, next_page, updated_at, account) VALUES ($1, $2, 1, $3, $4)
			ON CONFLICT (account, stream) DO UPDATE SET next_page = 1, run_id = excluded.run_id, updated_at = excluded.updated_at`,
			stream, runID, now, w.account); err != nil {
			return fmt.Errorf("reset checkpoint: %w", err)
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM removal_pending WHERE account = $1`, w.account).Scan(&res.Pending)
	})
	if err != nil {
		return load.WalkResult{}, fmt.Errorf("finish walk %s: %w", stream, err)
	}
	return res, nil
}

// closeWalk closes the walk with walk.CloseWalk, the steps both dialects
// share, over PostgreSQL's statements (walkTx).
func (w *Warehouse) closeWalk(ctx context.Context, tx pgx.Tx, walkID, runID int64, outcome string, end load.WalkEnd, now time.Time) (load.WalkResult, error) {
	return walk.CloseWalk(ctx, &walkTx{w: w, tx: tx, now: now}, walkID, runID, outcome, end, w.fraction)
}

// walkTx is PostgreSQL's walk.WalkTx: the statements that close a walk.
type walkTx struct {
	w   *Warehouse
	tx  pgx.Tx
	now time.Time
}

// ClosingRun implements walk.WalkTx.
func (t *walkTx) ClosingRun(ctx context.Context, walkID, runID int64) (int64, error) {
	var closingRun int64
	if err := t.tx.QueryRow(ctx, `SELECT coalesce(nullif($2::bigint, 0), last_run, started_run) FROM sync_walks WHERE walk_id = $1`,
		walkID, runID).Scan(&closingRun); err != nil {
		return 0, fmt.Errorf("read walk: %w", err)
	}
	return closingRun, nil
}

// PendingRemovals implements walk.WalkTx.
func (t *walkTx) PendingRemovals(ctx context.Context) (int64, error) {
	var pending int64
	if err := t.tx.QueryRow(ctx, `SELECT count(*) FROM removal_pending WHERE account = $1`, t.w.account).Scan(&pending); err != nil {
		return 0, fmt.Errorf("count pending removals: %w", err)
	}
	return pending, nil
}

// ClearListedPending implements walk.WalkTx.
func (t *walkTx) ClearListedPending(ctx context.Context, walkID, closingRun int64) (int64, error) {
	if _, err := t.tx.Exec(ctx, `WITH `+sqlSeen+`
		UPDATE card_state SET last_seen_at = $2, last_seen_run = $3
		WHERE account = $4 AND card_id IN (SELECT p.card_id FROM removal_pending p JOIN seen USING (card_id) WHERE p.account = $4)`,
		walkID, t.now, closingRun, t.w.account); err != nil {
		return 0, fmt.Errorf("stamp pending cards listed again: %w", err)
	}
	tag, err := t.tx.Exec(ctx, `WITH `+sqlSeen+`
		DELETE FROM removal_pending WHERE account = $2 AND card_id IN (SELECT card_id FROM seen)`, walkID, t.w.account)
	if err != nil {
		return 0, fmt.Errorf("clear pending removals of seen cards: %w", err)
	}
	return tag.RowsAffected(), nil
}

// CountMissed implements walk.WalkTx.
func (t *walkTx) CountMissed(ctx context.Context, walkID int64) (live, missed, listed int, err error) {
	err = t.hashJoins(ctx, func() error {
		return t.countMissed(ctx, walkID, &live, &missed, &listed)
	})
	return live, missed, listed, err
}

// countMissed is CountMissed's query.
func (t *walkTx) countMissed(ctx context.Context, walkID int64, live, missed, listed *int) error {
	if err := t.tx.QueryRow(ctx, `WITH `+sqlMissed+`
		SELECT (SELECT count(*) FROM card_state WHERE account = $2 AND removed_at IS NULL),
			(SELECT count(*) FROM missed),
			(SELECT coalesce(sum(cardinality(ids)), 0) FROM walk_seen WHERE walk_id = $1)`,
		walkID, t.w.account).Scan(live, missed, listed); err != nil {
		return fmt.Errorf("count missed cards: %w", err)
	}
	return nil
}

// RemoveConfirmed implements walk.WalkTx.
func (t *walkTx) RemoveConfirmed(ctx context.Context, walkID, runID int64) (n int, err error) {
	err = t.hashJoins(ctx, func() error {
		n, err = t.w.removeConfirmed(ctx, t.tx, walkID, runID, t.now)
		return err
	})
	return n, err
}

// RecordPending implements walk.WalkTx.
func (t *walkTx) RecordPending(ctx context.Context, walkID int64) (n int64, err error) {
	err = t.hashJoins(ctx, func() error {
		n, err = t.w.recordPending(ctx, t.tx, walkID, t.now)
		return err
	})
	return n, err
}

// hashJoins runs fn, whose statements join the account's cards against
// the walk's seen ids (sqlMissed), with nested-loop joins off (then
// restored). The planner cannot estimate the seen set (the distinct
// elements of walk_seen's arrays: it guesses 10 rows), and while
// card_state has not been analysed since a backfill grew it, it may pick
// a nested-loop anti-join that scans the seen set once per card: closing
// a walk of 20,000 new cards took over 25 s, long enough for the lease to
// lapse. A hash or merge join costs one pass over each side whatever the
// sizes. (The penalty that steers the planner away from nested loops,
// which unnest's lateral join still needs, would invite JIT compiling,
// 0.8 s here: FinishWalk turns JIT off.)
func (t *walkTx) hashJoins(ctx context.Context, fn func() error) error {
	var loops string
	if err := t.tx.QueryRow(ctx, `SELECT current_setting('enable_nestloop'), set_config('enable_nestloop', 'off', true)`).Scan(&loops, nil); err != nil {
		return fmt.Errorf("plan the walk's close: %w", err)
	}
	if err := fn(); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `SELECT set_config('enable_nestloop', $1, true)`, loops); err != nil {
		return fmt.Errorf("plan the walk's close: %w", err)
	}
	return nil
}

// EndWalk implements walk.WalkTx.
func (t *walkTx) EndWalk(ctx context.Context, walkID, runID int64, outcome string, removed int, reason any) error {
	var finishedRun *int64
	if runID != 0 {
		finishedRun = &runID
	}
	distinct, duplicates, err := walkIDCounts(ctx, t.tx, walkID)
	if err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `UPDATE sync_walks SET finished_at = $2, finished_run = $3, outcome = $4, removed = $5,
			distinct_ids = $6, duplicate_ids = $7, pending_removals = (SELECT count(*) FROM removal_pending WHERE account = $8),
			inconsistent_reason = coalesce(inconsistent_reason, $9::text)
		WHERE walk_id = $1`, walkID, t.now, finishedRun, outcome, removed, distinct, duplicates, t.w.account, reason); err != nil {
		return fmt.Errorf("close walk: %w", err)
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM walk_seen WHERE walk_id = $1`, walkID); err != nil {
		return fmt.Errorf("clear walk: %w", err)
	}
	return nil
}

// FoldWalk implements walk.WalkTx.
func (t *walkTx) FoldWalk(ctx context.Context, walkID int64) error {
	return foldWalk(ctx, t.tx, walkID)
}

// removeConfirmed marks removed the current cards walk walkID missed that
// an earlier consistent walk missed too (in removal_pending from before
// it): their open versions close, a 'removed' version follows, and they
// leave removal_pending. It returns how many it removed.
func (w *Warehouse) removeConfirmed(ctx context.Context, tx pgx.Tx, walkID, runID int64, now time.Time) (int, error) {
	const gone = sqlMissed + `, gone AS (SELECT card_id FROM missed
		WHERE card_id IN (SELECT card_id FROM removal_pending WHERE account = $2 AND walk_id < $1))`
	if _, err := tx.Exec(ctx, `WITH `+gone+`
		UPDATE card_versions SET valid_to = $3
		WHERE account = $2 AND valid_to IS NULL AND card_id IN (SELECT card_id FROM gone)`, walkID, w.account, now); err != nil {
		return 0, fmt.Errorf("close versions of removed cards: %w", err)
	}
	if _, err := tx.Exec(ctx, `WITH `+gone+`
		INSERT INTO card_versions (card_id, version, valid_from, valid_to, run_id, change, data, account)
		SELECT c.card_id, (SELECT max(version) FROM card_versions v WHERE v.account = c.account AND v.card_id = c.card_id) + 1,
			$3, NULL, $4, 'removed', c.data, c.account
		FROM card_state c WHERE c.account = $2 AND c.card_id IN (SELECT card_id FROM gone)`, walkID, w.account, now, runID); err != nil {
		return 0, fmt.Errorf("version removed cards: %w", err)
	}
	tag, err := tx.Exec(ctx, `WITH `+gone+`
		UPDATE card_state SET removed_at = $3 WHERE account = $2 AND card_id IN (SELECT card_id FROM gone)`, walkID, w.account, now)
	if err != nil {
		return 0, fmt.Errorf("mark removed cards: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM removal_pending p USING card_state c
		WHERE p.account = $1 AND c.account = p.account AND c.card_id = p.card_id AND c.removed_at IS NOT NULL`, w.account); err != nil {
		return 0, fmt.Errorf("clear confirmed removals: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// recordPending puts the current cards walk walkID missed in
// removal_pending (those not there yet) and returns how many it added;
// those keep, as last seen, the last complete walk that listed them.
func (w *Warehouse) recordPending(ctx context.Context, tx pgx.Tx, walkID int64, now time.Time) (int64, error) {
	tag, err := tx.Exec(ctx, `WITH `+sqlMissed+`
		INSERT INTO removal_pending (card_id, walk_id, missed_at, account)
		SELECT card_id, $1, $3, $2 FROM missed
		ON CONFLICT (account, card_id) DO NOTHING`, walkID, w.account, now)
	if err != nil {
		return 0, fmt.Errorf("record pending removals: %w", err)
	}
	added := tag.RowsAffected()
	if added > 0 {
		if _, err := tx.Exec(ctx, `UPDATE card_state SET last_seen_at = w.finished_at, last_seen_run = w.finished_run
			FROM (SELECT finished_at, finished_run FROM sync_walks
				WHERE account = $2 AND outcome = 'complete' AND finished_run IS NOT NULL ORDER BY walk_id DESC LIMIT 1) AS w
			WHERE card_state.account = $2
			  AND card_state.card_id IN (SELECT card_id FROM removal_pending WHERE account = $2 AND walk_id = $1)
			  AND (w.finished_run, w.finished_at) > (card_state.last_seen_run, card_state.last_seen_at)`, walkID, w.account); err != nil {
			return 0, fmt.Errorf("freeze last seen of pending cards: %w", err)
		}
	}
	return added, nil
}

// foldWalk merges a closed, complete walk that wrote no card into the
// identical complete walk before it (walk.FoldWalkQuery, walk.FoldWalkMerge).
func foldWalk(ctx context.Context, tx pgx.Tx, walkID int64) error {
	var prev int64
	err := tx.QueryRow(ctx, pgParams(walk.FoldWalkQuery), walkID).Scan(&prev)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fold walk: %w", err)
	}
	// $1 is typed in the DELETE, which does not otherwise use it.
	for _, q := range []string{
		pgParams(walk.FoldWalkMerge),
		`UPDATE run_pages SET walk_id = $1 WHERE walk_id = $2`,
		`DELETE FROM sync_walks WHERE walk_id = $2 AND $1::bigint IS NOT NULL`,
	} {
		if _, err := tx.Exec(ctx, q, prev, walkID); err != nil {
			return fmt.Errorf("fold walk: %w", err)
		}
	}
	return nil
}

// pgParams writes load's shared statements' numbered parameters ?1 and ?2
// as PostgreSQL's $1 and $2.
func pgParams(query string) string {
	return strings.NewReplacer("?1", "$1", "?2", "$2").Replace(query)
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// walkIDCounts counts the walk's distinct ids and those listed on more
// than one page.
func walkIDCounts(ctx context.Context, q querier, walkID int64) (distinct, duplicates int, err error) {
	err = q.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE pages > 1) FROM (
			SELECT count(DISTINCT s.page) AS pages FROM walk_seen s, unnest(s.ids) AS u(id)
			WHERE s.walk_id = $1 GROUP BY u.id) t`, walkID).Scan(&distinct, &duplicates)
	if err != nil {
		return 0, 0, fmt.Errorf("count the walk's ids: %w", err)
	}
	return distinct, duplicates, nil
}
