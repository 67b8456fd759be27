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

// commitBatch commits pages in one transaction (after the lease check):
// the cards they write with their versions, rejected items, audit rows,
// their seen ids, the walk's running summary, the checkpoint after the
// last of them and the run's counters, and the new top-level fields in
// card_fields; cards_flat follows after the commit (syncFlat). st is
// updated only when the transaction commits.
func (w *Warehouse) commitBatch(ctx context.Context, runID int64, stream string, pages []*preparedPage, st *walkState) (load.Batch, error) {
	var batch load.Batch
	if len(pages) == 0 {
		return batch, nil
	}
	var fields load.FieldSet
	for _, p := range pages {
		fields.Merge(&p.fields)
	}
	recordFields := st.fields == nil || !fields.Within(st.fields)
	flat := false
	next := *st
	var skipped []string
	err := w.write(ctx, func(tx pgx.Tx) error {
		batch = load.Batch{}
		next = *st
		skipped = nil
		now := w.stamp()
		last := pages[len(pages)-1]
		if next.walkID == 0 {
			// The open walk of the stream, or a new one started with the
			// first page's total, in one round trip.
			if err := tx.QueryRow(ctx, `WITH open AS (
					SELECT walk_id, first_total FROM sync_walks WHERE account = $5 AND stream = $1 AND finished_at IS NULL),
				started AS (
					INSERT INTO sync_walks (stream, started_at, started_run, first_total, last_total, min_total, max_total, account)
					SELECT $1, $2, $3, $4, $4, $4, $4, $5 WHERE NOT EXISTS (SELECT 1 FROM open)
					RETURNING walk_id, first_total)
				SELECT walk_id, first_total FROM open UNION ALL SELECT walk_id, first_total FROM started`,
				stream, now, runID, pages[0].TotalItems(), w.account).Scan(&next.walkID, &next.firstTotal); err != nil {
				return fmt.Errorf("open walk: %w", err)
			}
		}
		var tally load.BatchTally
		for _, p := range pages {
			if p.Changes() {
				if err := w.writePage(ctx, tx, runID, stream, next.walkID, p, now); err != nil {
					return err
				}
			}
			tally.Add(&p.PreparedPage, next.firstTotal)
		}
		batch = tally.Batch
		if recordFields {
			var err error
			if flat, skipped, err = w.recordFields(ctx, tx, runID, next.walkID, now, &fields, &next.budget); err != nil {
				return err
			}
		}
		// The bookkeeping goes in one round trip.
		reason, anomalyPages := tally.AnomalyArgs()
		b := &pgx.Batch{}
		for _, p := range pages {
			b.Queue(`INSERT INTO walk_seen (walk_id, page, run_id, ids) VALUES ($1, $2, $3, $4)
				ON CONFLICT (walk_id, page) DO UPDATE SET run_id = excluded.run_id, ids = excluded.ids`,
				next.walkID, p.Number(), runID, p.ids)
		}
		// pages counts the walk's distinct page numbers: its walk_seen rows.
		b.Queue(`UPDATE sync_walks SET
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
			next.walkID, last.TotalItems(), tally.MaxPage, runID, boolInt(tally.TotalChanged), tally.MinTotal, tally.MaxTotal,
			reason, anomalyPages)
		b.Queue(`INSERT INTO sync_checkpoints (stream, run_id, next_page, total_pages, total_items, updated_at, account)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (account, stream) DO UPDATE SET run_id = excluded.run_id, next_page = excluded.next_page,
				total_pages = excluded.total_pages, total_items = excluded.total_items, updated_at = excluded.updated_at`,
			stream, runID, last.Number()+1, last.TotalPages(), last.TotalItems(), now, w.account)
		b.Queue(`UPDATE sync_runs SET
				pages = pages + $1, cards_seen = cards_seen + $2, cards_new = cards_new + $3,
				cards_changed = cards_changed + $4, cards_unchanged = cards_unchanged + $5,
				cards_rejected = cards_rejected + $6, cards_returned = cards_returned + $15,
				requests = requests + $7, retries = retries + $8, rate_limited = rate_limited + $9,
				auth_requests = auth_requests + $10, heartbeat_at = $11, secrets_redacted = secrets_redacted + $14
			WHERE run_id = $12 AND account = $13`,
			batch.Pages, batch.Cards, batch.New, batch.Changed, batch.Unchanged, batch.Rejected,
			tally.Requests, tally.Retries, tally.RateLimited, tally.AuthRequests, now, runID, w.account, batch.Secrets, batch.Returned)
		br := tx.SendBatch(ctx, b)
		defer br.Close()
		for _, p := range pages {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("page %d: seen ids: %w", p.Number(), err)
			}
		}
		tag, err := br.Exec()
		if err != nil {
			return fmt.Errorf("update walk: %w", err)
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("walk %d is no longer open (finished or reset under its writer)", next.walkID)
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("advance checkpoint: %w", err)
		}
		if tag, err = br.Exec(); err != nil {
			return fmt.Errorf("count run: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("run %d does not exist", runID)
		}
		return br.Close()
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
	// cards_flat follows card_fields after the commit, in a transaction of
	// its own. The page is stored either way: a failure is retried by the
	// next commit and by the next Open.
	if flat || w.flatStale.Load() {
		w.followFlat(ctx)
	}
	return batch, nil
}

// writePage stores a page's new cards (two set-based inserts), its changed
// and returned cards (re-read and locked in the transaction, which has the
// last word), their versions, its rejected items and its audit row.
func (w *Warehouse) writePage(ctx context.Context, tx pgx.Tx, runID int64, stream string, walkID int64, p *preparedPage, now time.Time) error {
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
