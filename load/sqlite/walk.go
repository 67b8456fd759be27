package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
	"github.com/cardsync/cardsync/load/internal/walk"
)

// Checkpoint returns where the next run resumes stream. A stream never
// walked has NextPage 1.
func (w *Warehouse) Checkpoint(ctx context.Context, stream string) (_ load.Checkpoint, err error) {
	defer classify(&err)
	stream = walk.StreamOf(stream)
	cp := load.Checkpoint{Stream: stream, NextPage: 1}
	var runID sql.NullInt64
	var updated string
	err = w.db.QueryRowContext(ctx, `SELECT run_id, next_page, total_pages, total_items, updated_at,
			EXISTS (SELECT 1 FROM sync_walks WHERE account = ?2 AND stream = ?1 AND finished_at IS NULL)
		FROM sync_checkpoints WHERE account = ?2 AND stream = ?1`, stream, w.account).
		Scan(&runID, &cp.NextPage, &cp.TotalPages, &cp.TotalItems, &updated, &cp.InProgress)
	if errors.Is(err, sql.ErrNoRows) {
		return cp, nil
	}
	if err != nil {
		return cp, fmt.Errorf("read checkpoint %s: %w", stream, err)
	}
	cp.RunID = runID.Int64
	cp.UpdatedAt = parseTime(updated)
	return cp, nil
}

// ResetCheckpoint abandons the open walk of stream (no removals are marked)
// so the next run starts at page 1.
func (w *Warehouse) ResetCheckpoint(ctx context.Context, stream string) (err error) {
	defer classify(&err)
	stream = walk.StreamOf(stream)
	err = w.write(ctx, func(tx *sql.Tx) error {
		now := w.stamp()
		walkID, err := openWalk(ctx, tx, w.account, stream)
		if err != nil {
			return err
		}
		if walkID != 0 {
			if _, err := w.closeWalk(ctx, tx, walkID, 0, "reset", load.WalkEnd{}, now); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE sync_checkpoints SET next_page = 1, updated_at = ? WHERE stream = ? AND account = ?`, now, stream, w.account)
		return err
	})
	if err != nil {
		return fmt.Errorf("reset checkpoint %s: %w", stream, err)
	}
	return nil
}

func openWalk(ctx context.Context, tx *sql.Tx, account, stream string) (int64, error) {
	id, _, err := openWalkTotal(ctx, tx, account, stream)
	return id, err
}

// openWalkTotal returns the open walk of the account's stream (0 when
// none) and the total its first page reported.
func openWalkTotal(ctx context.Context, tx *sql.Tx, account, stream string) (id int64, firstTotal int, err error) {
	// At most one walk of a stream is open; the aggregate answers 0 for none.
	err = tx.QueryRowContext(ctx, `SELECT coalesce(max(walk_id), 0), coalesce(max(first_total), 0) FROM sync_walks
		WHERE account = ? AND stream = ? AND finished_at IS NULL`, account, stream).Scan(&id, &firstTotal)
	if err != nil {
		return 0, 0, fmt.Errorf("find open walk: %w", err)
	}
	return id, firstTotal, nil
}

// WalkSummary reports on the open walk of stream (zero WalkSummary when none).
// The running counts come from sync_walks, kept up to date by every commit;
// the distinct and duplicated ids are counted over the walk's seen ids.
func (w *Warehouse) WalkSummary(ctx context.Context, stream string) (_ load.WalkSummary, err error) {
	defer classify(&err)
	stream = walk.StreamOf(stream)
	var s load.WalkSummary
	var started, pages string
	err = w.db.QueryRowContext(ctx, `SELECT walk_id, started_at, started_run, first_total, last_total,
			pages, last_page, runs, total_changed, coalesce(min_total, first_total), coalesce(max_total, first_total),
			coalesce((SELECT total_pages FROM sync_checkpoints WHERE account = ?2 AND stream = ?1), 0),
			coalesce(inconsistent_reason, ''), coalesce(inconsistent_pages, '')
		FROM sync_walks WHERE account = ?2 AND stream = ?1 AND finished_at IS NULL`, stream, w.account).
		Scan(&s.WalkID, &started, &s.StartedRun, &s.FirstTotal, &s.LastTotal,
			&s.Pages, &s.LastPage, &s.Runs, &s.TotalChanged, &s.MinTotal, &s.MaxTotal, &s.TotalPages,
			&s.Reason, &pages)
	if errors.Is(err, sql.ErrNoRows) {
		return load.WalkSummary{}, nil
	}
	if err != nil {
		return s, fmt.Errorf("walk summary %s: %w", stream, err)
	}
	s.StartedAt = parseTime(started)
	s.AnomalyPages = sqlshare.ParsePages(pages)
	if s.DistinctIDs, s.DuplicateIDs, err = walkIDCounts(ctx, w.db, s.WalkID); err != nil {
		return s, fmt.Errorf("walk summary %s: %w", stream, err)
	}
	s.TotalChanged = s.TotalChanged || s.LastTotal != s.FirstTotal
	return s, nil
}

// Set-based views of the ids walk ?1 saw. json_each unpacks each page's
// array; SQLite sorts or indexes the values in its own cache (spilling to
// a temporary file), so memory does not grow with the number of cards.
const (
	sqlSeenIDs   = `SELECT j.value FROM walk_seen s, json_each(s.ids) j WHERE s.walk_id = ?1`
	sqlListedIDs = `(SELECT coalesce(sum(json_array_length(ids)), 0) FROM walk_seen WHERE walk_id = ?1)`
)

// walkIDCounts counts, in one pass over the walk's seen ids, the distinct
// ids and those listed on more than one page.
func walkIDCounts(ctx context.Context, q queryer, walkID int64) (distinct, duplicates int, err error) {
	err = q.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(pages > 1), 0) FROM (
			SELECT count(DISTINCT s.page) AS pages FROM walk_seen s, json_each(s.ids) j
			WHERE s.walk_id = ?1 GROUP BY j.value)`, walkID).Scan(&distinct, &duplicates)
	if err != nil {
		return 0, 0, fmt.Errorf("count the walk's ids: %w", err)
	}
	return distinct, duplicates, nil
}

// FinishWalk closes the open walk of stream.
//
// One walk missing a card is not proof that it is gone: with offset
// pagination a card removed before the cursor while another is added after
// it shifts a listed card out of the pages read, and no count notices. So
// removal takes two consecutive complete walks. When consistent (the caller
// saw every page and the ids add up), a current card that no attempt of the
// walk saw is either confirmed — it was already in removal_pending from an
// earlier consistent walk: it gets removed_at and a closing "removed"
// version and leaves removal_pending — or becomes pending (a removal_pending
// row, nothing else changes). Whatever the outcome, every card the walk saw
// leaves removal_pending, and an inconsistent walk adds and removes nothing.
//
// The mass-removal guard: when a consistent walk missed more than
// Options.MaxRemovedFraction of the live cards and more than 10 of them, or
// listed no card at all while cards are live, it marks nothing removed (an
// upstream glitch returning an empty or truncated list must not wipe the
// warehouse): misses still become pending, sync_runs.removals_held records
// the count, and a walk finished with ConfirmRemovals applies them.
// The checkpoint goes back to page 1. With no walk open it only resets the
// checkpoint. Call WalkWriter.Flush first: FinishWalk closes the walk as
// committed.
func (w *Warehouse) FinishWalk(ctx context.Context, runID int64, stream string, end load.WalkEnd) (_ load.WalkResult, err error) {
	defer classify(&err)
	stream = walk.StreamOf(stream)
	var res load.WalkResult
	err = w.write(ctx, func(tx *sql.Tx) error {
		res = load.WalkResult{}
		now := w.stamp()
		walkID, err := openWalk(ctx, tx, w.account, stream)
		if err != nil {
			return err
		}
		if walkID != 0 {
			if res, err = w.closeWalk(ctx, tx, walkID, runID, end.Outcome(), end, now); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sync_runs SET cards_removed = cards_removed + ?, removals_held = ?, walk_consistent = ? WHERE run_id = ? AND account = ?`,
			res.Removed, res.Held, boolInt(end.Consistent), runID, w.account); err != nil {
			return fmt.Errorf("count run: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sync_checkpoints (stream, run_id, next_page, updated_at, account) VALUES (?, ?, 1, ?, ?)
			ON CONFLICT (account, stream) DO UPDATE SET next_page = 1, run_id = excluded.run_id, updated_at = excluded.updated_at`,
			stream, runID, now, w.account); err != nil {
			return fmt.Errorf("reset checkpoint: %w", err)
		}
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM removal_pending WHERE account = ?`, w.account).Scan(&res.Pending)
	})
	if err != nil {
		return load.WalkResult{}, fmt.Errorf("finish walk %s: %w", stream, err)
	}
	return res, nil
}

// PendingRemovals returns how many cards are awaiting removal confirmation:
// the last complete, consistent walk did not list them, and the next one
// marks them removed if it misses them too.
func (w *Warehouse) PendingRemovals(ctx context.Context) (_ int, err error) {
	defer classify(&err)
	var n int
	if err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM removal_pending WHERE account = ?`, w.account).Scan(&n); err != nil {
		return 0, fmt.Errorf("count pending removals: %w", err)
	}
	return n, nil
}

// closeWalk closes the walk with walk.CloseWalk, the steps both dialects
// share, over SQLite's statements (walkTx).
func (w *Warehouse) closeWalk(ctx context.Context, tx *sql.Tx, walkID, runID int64, outcome string, end load.WalkEnd, now string) (load.WalkResult, error) {
	return walk.CloseWalk(ctx, &walkTx{w: w, tx: tx, now: now}, walkID, runID, outcome, end, w.maxRemovedFraction)
}

// walkTx is SQLite's walk.WalkTx: the statements that close a walk.
type walkTx struct {
	w   *Warehouse
	tx  *sql.Tx
	now string
}

// sqlMissed selects the current cards walk ?1 did not see (one pass over
// card_state). ?A, the account, is numbered per statement (withAccount).
const sqlMissed = `SELECT card_id FROM card_state WHERE account = ?A AND removed_at IS NULL AND card_id NOT IN (` + sqlSeenIDs + `)`

// ClosingRun implements walk.WalkTx.
func (t *walkTx) ClosingRun(ctx context.Context, walkID, runID int64) (int64, error) {
	var closingRun int64
	if err := t.tx.QueryRowContext(ctx, `SELECT coalesce(nullif(?2, 0), last_run, started_run) FROM sync_walks WHERE walk_id = ?1`,
		walkID, runID).Scan(&closingRun); err != nil {
		return 0, fmt.Errorf("read walk: %w", err)
	}
	return closingRun, nil
}

// PendingRemovals implements walk.WalkTx.
func (t *walkTx) PendingRemovals(ctx context.Context) (int64, error) {
	var pending int64
	if err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM removal_pending WHERE account = ?`, t.w.account).Scan(&pending); err != nil {
		return 0, fmt.Errorf("count pending removals: %w", err)
	}
	return pending, nil
}

// ClearListedPending implements walk.WalkTx.
func (t *walkTx) ClearListedPending(ctx context.Context, walkID, closingRun int64) (int64, error) {
	if _, err := t.tx.ExecContext(ctx, `UPDATE card_state SET last_seen_at = ?2, last_seen_run = ?3
		WHERE account = ?4 AND card_id IN (SELECT card_id FROM removal_pending WHERE account = ?4 AND card_id IN (`+sqlSeenIDs+`))`,
		walkID, t.now, closingRun, t.w.account); err != nil {
		return 0, fmt.Errorf("stamp pending cards listed again: %w", err)
	}
	r, err := t.tx.ExecContext(ctx, `DELETE FROM removal_pending WHERE account = ?2 AND card_id IN (`+sqlSeenIDs+`)`, walkID, t.w.account)
	if err != nil {
		return 0, fmt.Errorf("clear pending removals of seen cards: %w", err)
	}
	cleared, _ := r.RowsAffected()
	return cleared, nil
}

// CountMissed implements walk.WalkTx.
func (t *walkTx) CountMissed(ctx context.Context, walkID int64) (live, missed, listed int, err error) {
	if err := t.tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(card_id NOT IN (`+sqlSeenIDs+`)), 0), `+sqlListedIDs+`
		FROM card_state WHERE account = ?2 AND removed_at IS NULL`,
		walkID, t.w.account).Scan(&live, &missed, &listed); err != nil {
		return 0, 0, 0, fmt.Errorf("count missed cards: %w", err)
	}
	return live, missed, listed, nil
}

// RemoveConfirmed implements walk.WalkTx.
func (t *walkTx) RemoveConfirmed(ctx context.Context, walkID, runID int64) (int, error) {
	tx, now, account := t.tx, t.now, t.w.account
	const gone = sqlMissed + ` AND card_id IN (SELECT card_id FROM removal_pending WHERE account = ?A AND walk_id < ?1)`
	if _, err := tx.ExecContext(ctx, withAccount(`UPDATE card_versions SET valid_to = ?2
		WHERE account = ?A AND valid_to IS NULL AND card_id IN (`+gone+`)`, 3), walkID, now, account); err != nil {
		return 0, fmt.Errorf("close versions of removed cards: %w", err)
	}
	if _, err := tx.ExecContext(ctx, withAccount(`INSERT INTO card_versions (card_id, version, valid_from, valid_to, run_id, change, data, account)
		SELECT c.card_id, (SELECT max(version) FROM card_versions v WHERE v.account = c.account AND v.card_id = c.card_id) + 1,
			?2, NULL, ?3, 'removed', c.data, c.account
		FROM card_state c WHERE c.account = ?A AND c.card_id IN (`+gone+`)`, 4), walkID, now, runID, account); err != nil {
		return 0, fmt.Errorf("version removed cards: %w", err)
	}
	r, err := tx.ExecContext(ctx, withAccount(`UPDATE card_state SET removed_at = ?2 WHERE account = ?A AND card_id IN (`+gone+`)`, 3),
		walkID, now, account)
	if err != nil {
		return 0, fmt.Errorf("mark removed cards: %w", err)
	}
	n, _ := r.RowsAffected()
	// Confirmed removals leave the pending list (their removed_at is set,
	// so they are no longer missed).
	if _, err := tx.ExecContext(ctx, `DELETE FROM removal_pending WHERE account = ?1 AND card_id IN
		(SELECT p.card_id FROM removal_pending p JOIN card_state c USING (account, card_id)
		 WHERE p.account = ?1 AND c.removed_at IS NOT NULL)`, account); err != nil {
		return 0, fmt.Errorf("clear confirmed removals: %w", err)
	}
	return int(n), nil
}

// RecordPending implements walk.WalkTx.
func (t *walkTx) RecordPending(ctx context.Context, walkID int64) (int64, error) {
	r, err := t.tx.ExecContext(ctx, withAccount(`INSERT INTO removal_pending (card_id, walk_id, missed_at, account)
		SELECT card_id, ?1, ?2, ?A FROM (`+sqlMissed+`) WHERE true
		ON CONFLICT (account, card_id) DO NOTHING`, 3), walkID, t.now, t.w.account)
	if err != nil {
		return 0, fmt.Errorf("record pending removals: %w", err)
	}
	added, _ := r.RowsAffected()
	// A card going pending keeps, as last seen, the last complete walk
	// that listed it: the one before this walk (still open here).
	if added > 0 {
		if _, err := t.tx.ExecContext(ctx, `UPDATE card_state SET last_seen_at = w.finished_at, last_seen_run = w.finished_run
			FROM (SELECT finished_at, finished_run FROM sync_walks
				WHERE account = ?2 AND outcome = 'complete' AND finished_run IS NOT NULL ORDER BY walk_id DESC LIMIT 1) AS w
			WHERE card_state.account = ?2
			  AND card_state.card_id IN (SELECT card_id FROM removal_pending WHERE account = ?2 AND walk_id = ?1)
			  AND (w.finished_run, w.finished_at) > (card_state.last_seen_run, card_state.last_seen_at)`, walkID, t.w.account); err != nil {
			return 0, fmt.Errorf("freeze last seen of pending cards: %w", err)
		}
	}
	return added, nil
}

// EndWalk implements walk.WalkTx.
func (t *walkTx) EndWalk(ctx context.Context, walkID, runID int64, outcome string, removed int, reason any) error {
	var finishedRun any
	if runID != 0 {
		finishedRun = runID
	}
	distinct, duplicates, err := walkIDCounts(ctx, t.tx, walkID)
	if err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE sync_walks SET finished_at = ?2, finished_run = ?3, outcome = ?4, removed = ?5,
			distinct_ids = ?6, duplicate_ids = ?7, pending_removals = (SELECT count(*) FROM removal_pending WHERE account = ?8),
			inconsistent_reason = coalesce(inconsistent_reason, ?9)
		WHERE walk_id = ?1`, walkID, t.now, finishedRun, outcome, removed, distinct, duplicates, t.w.account, reason); err != nil {
		return fmt.Errorf("close walk: %w", err)
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM walk_seen WHERE walk_id = ?`, walkID); err != nil {
		return fmt.Errorf("clear walk: %w", err)
	}
	return nil
}

// FoldWalk implements walk.WalkTx.
func (t *walkTx) FoldWalk(ctx context.Context, walkID int64) error {
	return foldWalk(ctx, t.tx, walkID)
}

// foldWalk merges a closed, complete walk that wrote no card into the walk
// before it, when that one is complete too, removed nothing and looks the
// same (totals, pages, distinct and duplicated ids, pending removals): the
// earlier row gains walks + 1 and this walk's finish, and this walk's row
// goes. A warehouse synced every 15 minutes with nothing changing upstream
// thus keeps one sync_walks row, not 96 more a day. A page that only set
// aside rejected items (an odd card upstream, rejected again every run)
// does not stop the fold: its run_pages row moves to the earlier walk. The
// caller checked that the walk removed nothing and neither added nor
// cleared pending removals.
func foldWalk(ctx context.Context, tx *sql.Tx, walkID int64) error {
	var prev int64
	err := tx.QueryRowContext(ctx, walk.FoldWalkQuery, walkID).Scan(&prev)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fold walk: %w", err)
	}
	for _, q := range []string{
		walk.FoldWalkMerge,
		`UPDATE run_pages SET walk_id = ?1 WHERE walk_id = ?2`,
		`DELETE FROM sync_walks WHERE walk_id = ?2`,
	} {
		if _, err := tx.ExecContext(ctx, q, prev, walkID); err != nil {
			return fmt.Errorf("fold walk: %w", err)
		}
	}
	return nil
}

// withAccount numbers the account parameter ?A of query: ?n, one past the
// statement's other numbered parameters (SQLite wants them without gaps).
func withAccount(query string, n int) string {
	return strings.ReplaceAll(query, "?A", "?"+strconv.Itoa(n))
}
