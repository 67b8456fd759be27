package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
)

// commitBatch commits pages in one transaction (after the lease check)
// with load.CommitBatch, the algorithm both dialects share, over batchTx:
// the cards they write with their versions, rejected items, audit rows,
// their seen ids, the walk's running summary, the checkpoint after the
// last of them and the run's counters, and the new top-level fields in
// card_fields; cards_flat follows after the commit (followFlat). st is
// updated only when the transaction commits.
func (w *Warehouse) commitBatch(ctx context.Context, runID int64, stream string, pages []*preparedPage, st *load.WalkState) (load.Batch, error) {
	flat := false
	inTx := func(ctx context.Context, fn func(load.BatchTx) error) error {
		return w.write(ctx, func(tx pgx.Tx) error {
			b := &batchTx{w: w, tx: tx, runID: runID, stream: stream, pages: pages, now: w.stamp()}
			err := fn(b)
			flat = b.flat
			return err
		})
	}
	batch, err := load.CommitBatch(ctx, inTx, pages, st)
	if err != nil {
		return load.Batch{}, err
	}
	// cards_flat follows card_fields after the commit, in a transaction of
	// its own. The page is stored either way: a failure is retried by the
	// next commit and by the next Open.
	if flat || w.flatStale.Load() {
		w.followFlat(ctx)
	}
	return batch, nil
}

// batchTx is PostgreSQL's load.BatchTx: the statements of one batch in
// its transaction.
type batchTx struct {
	w      *Warehouse
	tx     pgx.Tx
	runID  int64
	stream string
	pages  []*preparedPage
	now    time.Time
	// flat: a field joined cards_flat, which follows after the commit.
	flat bool
}

// OpenWalk implements load.BatchTx: the open walk of the stream, or a new
// one started with firstTotal, in one round trip.
func (b *batchTx) OpenWalk(ctx context.Context, firstTotal int) (walkID int64, total int, err error) {
	if err := b.tx.QueryRow(ctx, `WITH open AS (
			SELECT walk_id, first_total FROM sync_walks WHERE account = $5 AND stream = $1 AND finished_at IS NULL),
		started AS (
			INSERT INTO sync_walks (stream, started_at, started_run, first_total, last_total, min_total, max_total, account)
			SELECT $1, $2, $3, $4, $4, $4, $4, $5 WHERE NOT EXISTS (SELECT 1 FROM open)
			RETURNING walk_id, first_total)
		SELECT walk_id, first_total FROM open UNION ALL SELECT walk_id, first_total FROM started`,
		b.stream, b.now, b.runID, firstTotal, b.w.account).Scan(&walkID, &total); err != nil {
		return 0, 0, fmt.Errorf("open walk: %w", err)
	}
	return walkID, total, nil
}

// WritePage implements load.BatchTx.
func (b *batchTx) WritePage(ctx context.Context, walkID int64, p *load.PreparedPage) error {
	return b.w.writePage(ctx, b.tx, b.runID, b.stream, walkID, p, b.now)
}

// RecordFields implements load.BatchTx; it notes whether cards_flat must
// follow.
func (b *batchTx) RecordFields(ctx context.Context, walkID int64, fields *load.FieldSet, budget *load.FieldBudget) ([]string, error) {
	flat, skipped, err := b.w.recordFields(ctx, b.tx, b.runID, walkID, b.now, fields, budget)
	b.flat = b.flat || flat
	return skipped, err
}

// SaveProgress implements load.BatchTx: the bookkeeping goes in one round
// trip.
func (b *batchTx) SaveProgress(ctx context.Context, walkID int64, last *load.PreparedPage, tally *load.BatchTally) error {
	runID, account, now := b.runID, b.w.account, b.now
	batch := tally.Batch
	reason, anomalyPages := tally.AnomalyArgs()
	q := &pgx.Batch{}
	for _, p := range b.pages {
		q.Queue(`INSERT INTO walk_seen (walk_id, page, run_id, ids) VALUES ($1, $2, $3, $4)
			ON CONFLICT (walk_id, page) DO UPDATE SET run_id = excluded.run_id, ids = excluded.ids`,
			walkID, p.Number(), runID, p.ids)
	}
	// pages counts the walk's distinct page numbers: its walk_seen rows.
	q.Queue(`UPDATE sync_walks SET
			last_total = $2,
			pages = (SELECT count(*) FROM walk_seen WHERE walk_id = $1),
			last_page = greatest(last_page, $3),
			runs = runs + CASE WHEN last_run IS DISTINCT FROM $4 THEN 1 ELSE 0 END,
			last_run = $4,
			total_changed = greatest(total_changed, $5),
			min_total = least(coalesce(min_total, $6), $6),
			max_total = greatest(coalesce(max_total, $7), $7),
			inconsistent_reason = coalesce(inconsistent_reason, $8::text),
			inconsistent_pages = `+load.AppendPagesSQL("$9::text")+`
		WHERE walk_id = $1 AND finished_at IS NULL`,
		walkID, last.TotalItems(), tally.MaxPage, runID, boolInt(tally.TotalChanged), tally.MinTotal, tally.MaxTotal,
		reason, anomalyPages)
	q.Queue(`INSERT INTO sync_checkpoints (stream, run_id, next_page, total_pages, total_items, updated_at, account)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (account, stream) DO UPDATE SET run_id = excluded.run_id, next_page = excluded.next_page,
			total_pages = excluded.total_pages, total_items = excluded.total_items, updated_at = excluded.updated_at`,
		b.stream, runID, last.Number()+1, last.TotalPages(), last.TotalItems(), now, account)
	q.Queue(`UPDATE sync_runs SET
			pages = pages + $1, cards_seen = cards_seen + $2, cards_new = cards_new + $3,
			cards_changed = cards_changed + $4, cards_unchanged = cards_unchanged + $5,
			cards_rejected = cards_rejected + $6, cards_returned = cards_returned + $15,
			requests = requests + $7, retries = retries + $8, rate_limited = rate_limited + $9,
			auth_requests = auth_requests + $10, heartbeat_at = $11, secrets_redacted = secrets_redacted + $14
		WHERE run_id = $12 AND account = $13`,
		batch.Pages, batch.Cards, batch.New, batch.Changed, batch.Unchanged, batch.Rejected,
		tally.Requests, tally.Retries, tally.RateLimited, tally.AuthRequests, now, runID, account, batch.Secrets, batch.Returned)
	return b.readProgress(b.tx.SendBatch(ctx, q), walkID)
}

// readProgress reads SaveProgress's answers in the order queued.
func (b *batchTx) readProgress(br pgx.BatchResults, walkID int64) error {
	defer br.Close()
	for _, p := range b.pages {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("page %d: seen ids: %w", p.Number(), err)
		}
	}
	tag, err := br.Exec()
	if err != nil {
		return fmt.Errorf("update walk: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("walk %d is no longer open (finished or reset under its writer)", walkID)
	}
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("advance checkpoint: %w", err)
	}
	if tag, err = br.Exec(); err != nil {
		return fmt.Errorf("count run: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("run %d does not exist", b.runID)
	}
	return br.Close()
}

// FieldSet implements load.BatchPage: the page's top-level fields.
func (p *preparedPage) FieldSet() *load.FieldSet { return &p.fields }

// writePage stores a page's new cards (two set-based inserts), its changed
// and returned cards (re-read and locked in the transaction, which has the
// last word), their versions, its rejected items and its audit row.
func (w *Warehouse) writePage(ctx context.Context, tx pgx.Tx, runID int64, stream string, walkID int64, p *load.PreparedPage, now time.Time) error {
	if fresh := p.Fresh(); len(fresh) > 0 {
		ids, hashes, data := columns(fresh)
		if _, err := tx.Exec(ctx, `INSERT INTO card_state (card_id, data_hash, data, first_seen_at, last_seen_at, updated_at, first_seen_run, last_seen_run, account)
			SELECT id, hash, data::jsonb, $1, $1, $1, $2, $2, $3 FROM unnest($4::text[], $5::bytea[], $6::text[]) AS t(id, hash, data)`,
			now, runID, w.account, ids, hashes, data); err != nil {
			return fmt.Errorf("insert %d new cards: %w", len(ids), err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO card_versions (card_id, version, valid_from, run_id, change, data, account)
			SELECT id, 1, $1, $2, 'new', data::jsonb, $3 FROM unnest($4::text[], $5::text[]) AS t(id, data)`,
			now, runID, w.account, ids, data); err != nil {
			return fmt.Errorf("version %d new cards: %w", len(ids), err)
		}
	}
	if writes := p.Writes(); len(writes) > 0 {
		if err := w.writeCards(ctx, tx, runID, p, writes, now); err != nil {
			return err
		}
	}
	for _, r := range p.Rejected() {
		if err := w.quarantine(ctx, tx, runID, p.Number(), r, now); err != nil {
			return err
		}
	}
	res := p.Result()
	if _, err := tx.Exec(ctx, `INSERT INTO run_pages (run_id, stream, page, walk_id, fetched_at, committed_at,
				items, total_items, total_pages, duration_ms, body_sha256, cards_new, cards_changed, cards_unchanged)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT (run_id, stream, page) DO UPDATE SET
				walk_id = excluded.walk_id, fetched_at = excluded.fetched_at, committed_at = excluded.committed_at,
				items = excluded.items, total_items = excluded.total_items, total_pages = excluded.total_pages,
				duration_ms = excluded.duration_ms, body_sha256 = excluded.body_sha256, cards_new = excluded.cards_new,
				cards_changed = excluded.cards_changed, cards_unchanged = excluded.cards_unchanged`,
		runID, stream, p.Number(), walkID, p.FetchedAt().UTC().Truncate(time.Second), now,
		p.Items(), p.TotalItems(), p.TotalPages(), p.Duration().Milliseconds(), clean(p.BodySHA256()),
		res.New, res.Changed+res.Returned, res.Unchanged); err != nil {
		return fmt.Errorf("audit page: %w", err)
	}
	return nil
}

// columns turns cards into the arrays unnest takes.
func columns(cs []load.CardWrite) (ids []string, hashes [][]byte, data []string) {
	for _, c := range cs {
		ids, hashes, data = append(ids, c.ID()), append(hashes, c.Hash()), append(data, c.Data())
	}
	return ids, hashes, data
}

// quarantine stores one rejected item redacted (load.QuarantineData), or
// counts a repeat of the latest identical rejection.
func (w *Warehouse) quarantine(ctx context.Context, tx pgx.Tx, runID int64, page int, r load.Rejection, now time.Time) error {
	data := clean(load.QuarantineData(w.policy, r.Data))
	sum := sha256.Sum256([]byte(data))
	digest := hex.EncodeToString(sum[:])
	reason := w.text(r.Reason)
	var cardID *string
	if r.CardID != "" {
		id := clean(r.CardID)
		cardID = &id
	}
	tag, err := tx.Exec(ctx, `UPDATE rejected_cards SET last_run_id = $1, last_rejected_at = $2, times = times + 1, page = $3
		WHERE rejected_id = (SELECT max(rejected_id) FROM rejected_cards
			WHERE account = $4 AND card_id IS NOT DISTINCT FROM $5 AND reason = $6 AND data_sha256 = $7)`,
		runID, now, page, w.account, cardID, reason, digest)
	if err != nil {
		return fmt.Errorf("quarantine item %d: %w", r.Index, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO rejected_cards (run_id, page, card_id, reason, data, rejected_at, last_run_id, last_rejected_at, data_sha256, account)
		VALUES ($1, $2, $3, $4, $5, $6, $1, $6, $7, $8)`, runID, page, cardID, reason, data, now, digest, w.account); err != nil {
		return fmt.Errorf("quarantine item %d: %w", r.Index, err)
	}
	return nil
}

// writeCards stores a page's changed and returned cards: re-read and
// locked in the transaction, which has the last word (PreparedPage.Recount),
// then upserted with their versions, set-based.
func (w *Warehouse) writeCards(ctx context.Context, tx pgx.Tx, runID int64, p *load.PreparedPage, writes []load.CardWrite, now time.Time) error {
	ids, _, _ := columns(writes)
	type stored struct {
		hash    []byte
		removed bool
		version int32
	}
	have := make(map[string]stored, len(ids))
	rows, err := tx.Query(ctx, `SELECT c.card_id, c.data_hash, c.removed_at IS NOT NULL,
			(SELECT max(version) FROM card_versions v WHERE v.account = c.account AND v.card_id = c.card_id)
		FROM card_state c WHERE c.account = $1 AND c.card_id = ANY($2::text[])
		ORDER BY c.card_id FOR UPDATE OF c`, w.account, ids)
	if err != nil {
		return fmt.Errorf("read %d cards: %w", len(ids), err)
	}
	for rows.Next() {
		var id string
		var s stored
		if err := rows.Scan(&id, &s.hash, &s.removed, &s.version); err != nil {
			rows.Close()
			return fmt.Errorf("read %d cards: %w", len(ids), err)
		}
		have[id] = s
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %d cards: %w", len(ids), err)
	}
	var wIDs, wData, wChange []string
	var wHash [][]byte
	var wVersion []int32
	for _, c := range writes {
		s, exists := have[c.ID()]
		change := ""
		switch {
		case !exists:
			change = "new"
		case s.removed:
			change = "returned"
		case !bytes.Equal(s.hash, c.Hash()):
			change = "changed"
		}
		p.Recount(c, change)
		if change == "" {
			continue
		}
		wIDs, wData, wChange = append(wIDs, c.ID()), append(wData, c.Data()), append(wChange, change)
		wHash, wVersion = append(wHash, c.Hash()), append(wVersion, s.version+1)
	}
	if len(wIDs) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO card_state AS s (card_id, data, data_hash, first_seen_at, last_seen_at, updated_at, first_seen_run, last_seen_run, account)
			SELECT id, data::jsonb, hash, $1, $1, $1, $2, $2, $3 FROM unnest($4::text[], $5::text[], $6::bytea[]) AS t(id, data, hash)
			ON CONFLICT (account, card_id) DO UPDATE SET
				data = excluded.data,
				data_hash = excluded.data_hash,
				updated_at = CASE WHEN s.data IS DISTINCT FROM excluded.data THEN excluded.updated_at ELSE s.updated_at END,
				removed_at = NULL,
				last_seen_at = excluded.last_seen_at,
				last_seen_run = excluded.last_seen_run`,
			now, runID, w.account, wIDs, wData, wHash); err != nil {
			return fmt.Errorf("upsert %d cards: %w", len(wIDs), err)
		}
		if _, err := tx.Exec(ctx, `UPDATE card_versions SET valid_to = $1
			WHERE account = $2 AND valid_to IS NULL AND card_id = ANY($3::text[])`, now, w.account, wIDs); err != nil {
			return fmt.Errorf("close versions of %d cards: %w", len(wIDs), err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO card_versions (card_id, version, valid_from, run_id, change, data, account)
			SELECT id, v, $1, $2, ch, data::jsonb, $3 FROM unnest($4::text[], $5::int[], $6::text[], $7::text[]) AS t(id, v, ch, data)`,
			now, runID, w.account, wIDs, wVersion, wChange, wData); err != nil {
			return fmt.Errorf("version %d cards: %w", len(wIDs), err)
		}
	}
	return nil
}
