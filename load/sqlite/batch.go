package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cardsync/cardsync/load"
)

// walkState is what a WalkWriter remembers between its commits so that a
// batch does not look it up again: the open walk and the fields this run
// has already recorded. The zero value knows nothing (CommitPage).
type walkState struct {
	walkID     int64
	firstTotal int
	// fields are the fields and JSON types card_fields holds with
	// last_run = this run; nil: unknown, record every batch's fields.
	fields map[string]load.TypeMask
	// budget bounds the fields the walk adds (MaxNewFieldsPerWalk).
	budget load.FieldBudget
}

// commitBatch commits pages (in the order given) in one transaction: the
// cards they write, their seen ids, the walk's running summary, the
// checkpoint after the last of them and the run's counters, once. st
// carries what the caller's earlier commits learnt; it is updated only when
// the transaction commits.
func (w *Warehouse) commitBatch(ctx context.Context, runID int64, stream string, pages []*preparedPage, st *walkState) (load.Batch, error) {
	var batch load.Batch
	if len(pages) == 0 {
		return batch, nil
	}
	// Multi-row statements are prepared before the transaction: inside it
	// the one connection is taken.
	for _, p := range pages {
		for n := len(p.Fresh()); n > 0; n -= maxNewRows {
			if _, _, err := w.page.insertNew(ctx, w.db, min(n, maxNewRows)); err != nil {
				return batch, err
			}
		}
	}
	var fields load.FieldSet
	for _, p := range pages {
		fields.Merge(&p.fields)
	}
	recordFields := st.fields == nil || !fields.Within(st.fields)
	next := *st
	var skipped []string
	err := w.write(ctx, func(tx *sql.Tx) error {
		batch = load.Batch{}
		next = *st
		skipped = nil
		now := w.stamp()
		last := pages[len(pages)-1]
		if next.walkID == 0 {
			walkID, firstTotal, err := openWalkTotal(ctx, tx, w.account, stream)
			if err != nil {
				return err
			}
			if walkID == 0 {
				firstTotal = pages[0].TotalItems()
				r, err := tx.ExecContext(ctx, `INSERT INTO sync_walks (stream, started_at, started_run, first_total, last_total, min_total, max_total, account)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, stream, now, runID, firstTotal, firstTotal, firstTotal, firstTotal, w.account)
				if err != nil {
					return fmt.Errorf("start walk: %w", err)
				}
				if walkID, err = r.LastInsertId(); err != nil {
					return err
				}
			}
			next.walkID, next.firstTotal = walkID, firstTotal
		}
		seenInsert := tx.StmtContext(ctx, w.page.seenInsert)
		newPages := 0
		var tally load.BatchTally
		for _, p := range pages {
			if p.Changes() {
				if err := w.writePage(ctx, tx, runID, stream, next.walkID, p, now); err != nil {
					return err
				}
			}
			r, err := seenInsert.ExecContext(ctx, next.walkID, p.Number(), runID, p.ids)
			if err != nil {
				return fmt.Errorf("page %d: seen ids: %w", p.Number(), err)
			}
			if n, _ := r.RowsAffected(); n == 1 {
				newPages++
			} else if _, err := tx.StmtContext(ctx, w.page.seenUpdate).ExecContext(ctx, next.walkID, p.Number(), runID, p.ids); err != nil {
				return fmt.Errorf("page %d: seen ids: %w", p.Number(), err)
			}
			tally.Add(&p.PreparedPage, next.firstTotal)
		}
		batch = tally.Batch
		if recordFields {
			var err error
			if skipped, err = w.recordFields(ctx, tx, runID, next.walkID, now, &fields, &next.budget); err != nil {
				return err
			}
		}
		reason, anomalyPages := tally.AnomalyArgs()
		r, err := tx.StmtContext(ctx, w.page.walkUpdate).ExecContext(ctx,
			next.walkID, last.TotalItems(), tally.MaxPage, runID, newPages, boolInt(tally.TotalChanged), tally.MinTotal, tally.MaxTotal,
			reason, anomalyPages)
		if err != nil {
			return fmt.Errorf("update walk: %w", err)
		}
		if n, _ := r.RowsAffected(); n != 1 {
			return fmt.Errorf("walk %d is no longer open (finished or reset under its writer)", next.walkID)
		}
		if _, err := tx.StmtContext(ctx, w.page.checkpoint).ExecContext(ctx,
			stream, runID, last.Number()+1, last.TotalPages(), last.TotalItems(), now, w.account); err != nil {
			return fmt.Errorf("advance checkpoint: %w", err)
		}
		r, err = tx.StmtContext(ctx, w.page.runCount).ExecContext(ctx,
			batch.Pages, batch.Cards, batch.New, batch.Changed, batch.Returned, batch.Unchanged, batch.Rejected, batch.Secrets,
			tally.Requests, tally.Retries, tally.RateLimited, tally.AuthRequests, now, runID, w.account)
		if err != nil {
			return fmt.Errorf("count run: %w", err)
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return fmt.Errorf("run %d does not exist", runID)
		}
		return nil
	})
	if err != nil {
		return load.Batch{}, err
	}
	if recordFields {
		if next.fields == nil {
			next.fields = map[string]load.TypeMask{}
		}
		fields.Into(next.fields)
	}
	next.budget.Skip(skipped)
	*st = next
	return batch, nil
}

// writePage stores a page's new cards (two multi-row inserts) and its
// changed and returned cards (re-read in the transaction, which has the
// last word: a card found unchanged after all, stored before data_hash
// existed, only gets its hash), with their versions, quarantines its
// rejected items and writes its audit row.
func (w *Warehouse) writePage(ctx context.Context, tx *sql.Tx, runID int64, stream string, walkID int64, p *preparedPage, now string) error {
	for rest := p.Fresh(); len(rest) > 0; {
		n := min(len(rest), maxNewRows)
		cards, versions, err := w.page.insertNew(ctx, w.db, n)
		if err != nil {
			return err
		}
		args := make([]any, 0, 3+3*n)
		args = append(args, now, runID, w.account)
		for _, c := range rest[:n] {
			args = append(args, c.ID(), c.Hash(), c.Data())
		}
		if _, err := tx.StmtContext(ctx, cards).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("insert %d new cards: %w", n, err)
		}
		if _, err := tx.StmtContext(ctx, versions).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("version %d new cards: %w", n, err)
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
			if _, err := upsert.ExecContext(ctx, c.ID(), c.Data(), now, runID, c.Hash(), w.account); err != nil {
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
