package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/batch"
	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// commitBatch commits pages (in the order given) in one transaction with
// batch.CommitBatch, the algorithm both dialects share, over batchTx. st
// carries what the caller's earlier commits learnt; it is updated only
// when the transaction commits.
func (w *Warehouse) commitBatch(ctx context.Context, runID int64, stream string, pages []*preparedPage, st *batch.WalkState) (load.Batch, error) {
	// Multi-row statements are prepared before the transaction: inside it
	// the one connection is taken.
	for _, p := range pages {
		for n := len(p.Fresh()); n > 0; n -= maxNewRows {
			if _, _, err := w.page.insertNew(ctx, w.db, min(n, maxNewRows)); err != nil {
				return load.Batch{}, err
			}
		}
	}
	inTx := func(ctx context.Context, fn func(batch.BatchTx) error) error {
		return w.write(ctx, func(tx *sql.Tx) error {
			return fn(&batchTx{w: w, tx: tx, runID: runID, stream: stream, pages: pages, now: w.stamp()})
		})
	}
	return batch.CommitBatch(ctx, inTx, pages, st)
}

// batchTx is SQLite's batch.BatchTx: the statements of one batch in its
// transaction.
type batchTx struct {
	w      *Warehouse
	tx     *sql.Tx
	runID  int64
	stream string
	pages  []*preparedPage
	now    string
}

// OpenWalk implements batch.BatchTx.
func (b *batchTx) OpenWalk(ctx context.Context, firstTotal int) (int64, int, error) {
	walkID, total, err := openWalkTotal(ctx, b.tx, b.w.account, b.stream)
	if err != nil || walkID != 0 {
		return walkID, total, err
	}
	r, err := b.tx.ExecContext(ctx, `INSERT INTO sync_walks (stream, started_at, started_run, first_total, last_total, min_total, max_total, account)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, b.stream, b.now, b.runID, firstTotal, firstTotal, firstTotal, firstTotal, b.w.account)
	if err != nil {
		return 0, 0, fmt.Errorf("start walk: %w", err)
	}
	walkID, err = r.LastInsertId()
	return walkID, firstTotal, err
}

// WritePage implements batch.BatchTx.
func (b *batchTx) WritePage(ctx context.Context, walkID int64, p *batch.PreparedPage) error {
	return b.w.writePage(ctx, b.tx, b.runID, b.stream, walkID, p, b.now)
}

// RecordFields implements batch.BatchTx.
func (b *batchTx) RecordFields(ctx context.Context, walkID int64, fields *cardfield.FieldSet, budget *cardfield.FieldBudget) ([]string, map[string]cardfield.FieldType, error) {
	return b.w.recordFields(ctx, b.tx, b.runID, walkID, b.now, fields, budget)
}

// GrowFields implements batch.BatchTx.
func (b *batchTx) GrowFields(ctx context.Context, want map[string]cardfield.FieldType) (map[string]cardfield.FieldType, error) {
	return b.w.growFields(ctx, b.tx, want)
}

// NumberTypes implements batch.BatchTx.
func (b *batchTx) NumberTypes(ctx context.Context) (map[string]cardfield.FieldType, error) {
	return numberTypes(ctx, b.tx)
}

// AddConflicts implements batch.BatchTx.
func (b *batchTx) AddConflicts(ctx context.Context, conflicts, rounded map[string]int) error {
	return addConflicts(ctx, b.tx, conflicts, rounded)
}

// addConflicts adds to card_fields.conflicts and card_fields.rounded, per
// field.
func addConflicts(ctx context.Context, tx *sql.Tx, conflicts, rounded map[string]int) error {
	for name, n := range conflicts {
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET conflicts = conflicts + ? WHERE name = ?`, n, name); err != nil {
			return fmt.Errorf("count conflicts of field %q: %w", name, err)
		}
	}
	for name, n := range rounded {
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET rounded = rounded + ? WHERE name = ?`, n, name); err != nil {
			return fmt.Errorf("count rounded values of field %q: %w", name, err)
		}
	}
	return nil
}

// nullText is s, or NULL when s is empty.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// SaveProgress implements batch.BatchTx.
func (b *batchTx) SaveProgress(ctx context.Context, walkID int64, last *batch.PreparedPage, tally *batch.BatchTally) error {
	tx, w, runID := b.tx, b.w, b.runID
	seenInsert := tx.StmtContext(ctx, w.page.seenInsert)
	newPages := 0
	for _, p := range b.pages {
		r, err := seenInsert.ExecContext(ctx, walkID, p.Number(), runID, p.ids, p.hashes)
		if err != nil {
			return fmt.Errorf("page %d: seen ids: %w", p.Number(), err)
		}
		if n, _ := r.RowsAffected(); n == 1 {
			newPages++
		} else if _, err := tx.StmtContext(ctx, w.page.seenUpdate).ExecContext(ctx, walkID, p.Number(), runID, p.ids, p.hashes); err != nil {
			return fmt.Errorf("page %d: seen ids: %w", p.Number(), err)
		}
	}
	reason, anomalyPages := tally.AnomalyArgs()
	r, err := tx.StmtContext(ctx, w.page.walkUpdate).ExecContext(ctx,
		walkID, last.TotalItems(), tally.MaxPage, runID, newPages, boolInt(tally.TotalChanged), tally.MinTotal, tally.MaxTotal,
		reason, anomalyPages)
	if err != nil {
		return fmt.Errorf("update walk: %w", err)
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("walk %d is no longer open (finished or reset under its writer)", walkID)
	}
	if _, err := tx.StmtContext(ctx, w.page.checkpoint).ExecContext(ctx,
		b.stream, runID, last.Number()+1, last.TotalPages(), last.TotalItems(), b.now, w.account); err != nil {
		return fmt.Errorf("advance checkpoint: %w", err)
	}
	batch := tally.Batch
	r, err = tx.StmtContext(ctx, w.page.runCount).ExecContext(ctx,
		batch.Pages, batch.Cards, batch.New, batch.Changed, batch.Returned, batch.Unchanged, batch.Rejected, batch.Secrets,
		batch.CardNumbers, batch.Codes, batch.TrackData, batch.FieldsDropped,
		tally.Requests, tally.Retries, tally.RateLimited, tally.AuthRequests, b.now, runID, w.account)
	if err != nil {
		return fmt.Errorf("count run: %w", err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return fmt.Errorf("run %d does not exist", runID)
	}
	return nil
}

// FieldSet implements batch.BatchPage: the page's top-level fields.
func (p *preparedPage) FieldSet() *cardfield.FieldSet { return &p.fields }

// writePage stores a page's new cards (two multi-row inserts) and its
// changed and returned cards (re-read in the transaction, which has the
// last word: a card found unchanged after all, stored before data_hash
// existed, only gets its hash), with their versions, quarantines its
// rejected items and writes its audit row.
func (w *Warehouse) writePage(ctx context.Context, tx *sql.Tx, runID int64, stream string, walkID int64, p *batch.PreparedPage, now string) error {
	for rest := p.Fresh(); len(rest) > 0; {
		n := min(len(rest), maxNewRows)
		cards, versions, err := w.page.insertNew(ctx, w.db, n)
		if err != nil {
			return err
		}
		args := make([]any, 0, 3+newCardArgs*n)
		args = append(args, now, runID, w.account)
		for _, c := range rest[:n] {
			m := c.Money()
			args = append(args, c.ID(), c.Hash(), c.Data(), nullText(m.Minor), m.Scale, nullText(m.Currency), boolInt(m.Rounded))
		}
		if _, err := tx.StmtContext(ctx, cards).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("insert %s: %w", english.Count(n, "new card"), err)
		}
		// versions numbers its arguments as cards does and reads none of
		// the money.
		if _, err := tx.StmtContext(ctx, versions).ExecContext(ctx, args[:len(args)-(newCardArgs-3)]...); err != nil {
			return fmt.Errorf("version %s: %w", english.Count(n, "new card"), err)
		}
		rest = rest[n:]
	}
	if len(p.Writes()) > 0 {
		get, upsert := tx.StmtContext(ctx, w.page.cardGet), tx.StmtContext(ctx, w.page.cardUpsert)
		vclose, vinsert := tx.StmtContext(ctx, w.page.versionClose), tx.StmtContext(ctx, w.page.versionInsert)
		for _, c := range p.Writes() {
			var hash []byte
			var removed, sameData bool
			var version sql.NullInt64
			err := get.QueryRowContext(ctx, c.ID(), c.Data(), w.account).Scan(&hash, &removed, &sameData, &version)
			exists := err == nil
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("card %s: read: %w", c.ID(), err)
			}
			change := ""
			switch {
			case !exists:
				change = "new"
			case removed:
				change = "returned"
			case hash == nil && sameData:
				if _, err := tx.StmtContext(ctx, w.page.cardRehash).ExecContext(ctx, c.ID(), c.Hash(), w.account); err != nil {
					return fmt.Errorf("card %s: hash: %w", c.ID(), err)
				}
			case string(hash) != string(c.Hash()):
				change = "changed"
			}
			// Counted as c.Change() when the page was compared; the write
			// transaction has the last word.
			p.Recount(c, change)
			if change == "" {
				continue
			}
			m := c.Money()
			if _, err := upsert.ExecContext(ctx, c.ID(), c.Data(), now, runID, c.Hash(), w.account,
				nullText(m.Minor), m.Scale, nullText(m.Currency), boolInt(m.Rounded)); err != nil {
				return fmt.Errorf("card %s: upsert: %w", c.ID(), err)
			}
			if exists {
				if _, err := vclose.ExecContext(ctx, now, c.ID(), w.account); err != nil {
					return fmt.Errorf("card %s: close version: %w", c.ID(), err)
				}
			}
			if _, err := vinsert.ExecContext(ctx, c.ID(), version.Int64+1, now, runID, change, c.Data(), w.account); err != nil {
				return fmt.Errorf("card %s: version: %w", c.ID(), err)
			}
		}
	}
	for _, r := range p.Rejected() {
		if err := w.quarantine(ctx, tx, runID, p.Number(), r, now); err != nil {
			return err
		}
	}
	res := p.Result()
	if _, err := tx.StmtContext(ctx, w.page.audit).ExecContext(ctx,
		runID, stream, p.Number(), walkID, formatTime(p.FetchedAt()), now,
		p.Items(), p.TotalItems(), p.TotalPages(), p.Duration().Milliseconds(), p.BodySHA256(),
		res.New, res.Changed+res.Returned, res.Unchanged); err != nil {
		return fmt.Errorf("audit page: %w", err)
	}
	return nil
}
