package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/batch"
	"github.com/cardsync/cardsync/load/internal/cardfield"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
)

// commitBatch commits pages in one transaction (after the lease check)
// with batch.CommitBatch, the algorithm both dialects share, over batchTx:
// the cards they write with their versions, rejected items, audit rows,
// their seen ids, the walk's running summary, the checkpoint after the
// last of them and the run's counters, and the new top-level fields in
// card_fields; cards_flat follows after the commit (followFlat). st is
// updated only when the transaction commits.
func (w *Warehouse) commitBatch(ctx context.Context, runID int64, stream string, pages []*preparedPage, st *batch.WalkState) (load.Batch, error) {
	flat := false
	inTx := func(ctx context.Context, fn func(batch.BatchTx) error) error {
		return w.write(ctx, func(tx pgx.Tx) error {
			b := &batchTx{w: w, tx: tx, runID: runID, stream: stream, pages: pages, now: w.stamp()}
			err := fn(b)
			flat = b.flat
			return err
		})
	}
	batch, err := batch.CommitBatch(ctx, inTx, pages, st)
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

// batchTx is PostgreSQL's batch.BatchTx: the statements of one batch in
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
	// fresh are the new cards, and audit the run_pages rows, of the
	// pages written since the last flush: sent set-based with the batch's
	// bookkeeping (SaveProgress), or earlier, before a statement that must
	// see them (flush).
	fresh []batch.CardWrite
	audit []auditRow
}

// auditRow is a page's run_pages row.
type auditRow struct {
	page, items, totalItems, totalPages int
	fetched                             time.Time
	durationMS                          int64
	sha                                 string
	res                                 load.PageResult
}

// OpenWalk implements batch.BatchTx: the open walk of the stream, or a new
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

// WritePage implements batch.BatchTx. A page of new cards costs no round
// trip: its cards and audit row join the batch's set-based statements,
// sent with its bookkeeping (SaveProgress). A page with changed, returned
// or rejected cards first sends what the pages before it wrote, since its
// statements read the cards again.
func (b *batchTx) WritePage(ctx context.Context, walkID int64, p *batch.PreparedPage) error {
	b.fresh = append(b.fresh, p.Fresh()...)
	if len(p.Writes()) > 0 || len(p.Rejected()) > 0 {
		if err := b.flush(ctx, walkID); err != nil {
			return err
		}
		if err := b.w.writeChanges(ctx, b.tx, b.runID, p, b.now); err != nil {
			return err
		}
	}
	res := p.Result()
	b.audit = append(b.audit, auditRow{page: p.Number(), items: p.Items(), totalItems: p.TotalItems(), totalPages: p.TotalPages(),
		fetched: p.FetchedAt().UTC().Truncate(time.Second), durationMS: p.Duration().Milliseconds(), sha: clean(p.BodySHA256()), res: res})
	return nil
}

// flush sends the new cards and audit rows buffered by WritePage in one
// round trip.
func (b *batchTx) flush(ctx context.Context, walkID int64) error {
	q := &pgx.Batch{}
	var labels []string
	b.queueWrites(q, walkID, &labels)
	if len(labels) == 0 {
		return nil
	}
	br := b.tx.SendBatch(ctx, q)
	defer br.Close()
	for _, l := range labels {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("%s: %w", l, err)
		}
	}
	return br.Close()
}

// queueWrites queues on q the statements of the new cards and audit rows
// buffered by WritePage (then forgets them), and appends to labels what
// each statement does, for its error.
func (b *batchTx) queueWrites(q *pgx.Batch, walkID int64, labels *[]string) {
	if len(b.fresh) > 0 {
		ids, hashes, data := columns(b.fresh)
		var m moneyColumns
		m.add(b.fresh...)
		// One statement: each document is parsed once, for both rows.
		q.Queue(`WITH fresh AS (
				INSERT INTO card_state (card_id, data_hash, data, minor, amount_scale, amount_currency, amounts_rounded,
					first_seen_at, last_seen_at, updated_at, first_seen_run, last_seen_run, account)
				SELECT id, hash, data::jsonb, minor::jsonb, scale, currency, rounded, $1, $1, $1, $2, $2, $3
				FROM unnest($4::text[], $5::bytea[], $6::text[], $7::text[], $8::int[], $9::text[], $10::smallint[])
					AS t(id, hash, data, minor, scale, currency, rounded)
				RETURNING card_id, data)
			INSERT INTO card_versions (card_id, version, valid_from, run_id, change, data, account)
			SELECT card_id, 1, $1, $2, 'new', data, $3 FROM fresh`,
			b.now, b.runID, b.w.account, ids, hashes, data, m.minor, m.scale, m.currency, m.rounded)
		*labels = append(*labels, "insert "+english.Count(len(ids), "new card"))
		b.fresh = nil
	}
	if len(b.audit) > 0 {
		queueAudit(q, b.runID, b.stream, walkID, b.now, b.audit)
		*labels = append(*labels, "audit pages")
		b.audit = nil
	}
}

// queueAudit queues the run_pages rows of rows in one upsert; a page
// written twice in the batch keeps its last row, as one upsert after the
// other would.
func queueAudit(q *pgx.Batch, runID int64, stream string, walkID int64, now time.Time, rows []auditRow) {
	last := make(map[int]int, len(rows))
	for i, r := range rows {
		last[r.page] = i
	}
	var pages, items, totalItems, totalPages, cardsNew, cardsChanged, cardsUnchanged []int32
	var fetched []time.Time
	var durations []int64
	var shas []string
	for i, r := range rows {
		if last[r.page] != i {
			continue
		}
		pages, items, totalItems, totalPages = append(pages, int32(r.page)), append(items, int32(r.items)), append(totalItems, int32(r.totalItems)), append(totalPages, int32(r.totalPages))
		cardsNew, cardsChanged, cardsUnchanged = append(cardsNew, int32(r.res.New)), append(cardsChanged, int32(r.res.Changed+r.res.Returned)), append(cardsUnchanged, int32(r.res.Unchanged))
		fetched, durations, shas = append(fetched, r.fetched), append(durations, r.durationMS), append(shas, r.sha)
	}
	q.Queue(`INSERT INTO run_pages (run_id, stream, page, walk_id, fetched_at, committed_at,
				items, total_items, total_pages, duration_ms, body_sha256, cards_new, cards_changed, cards_unchanged)
			SELECT $1, $2, page, $3, fetched, $4, items, total_items, total_pages, duration_ms, sha, cards_new, cards_changed, cards_unchanged
			FROM unnest($5::int[], $6::timestamptz[], $7::int[], $8::int[], $9::int[], $10::bigint[], $11::text[], $12::int[], $13::int[], $14::int[])
				AS t(page, fetched, items, total_items, total_pages, duration_ms, sha, cards_new, cards_changed, cards_unchanged)
			ON CONFLICT (run_id, stream, page) DO UPDATE SET
				walk_id = excluded.walk_id, fetched_at = excluded.fetched_at, committed_at = excluded.committed_at,
				items = excluded.items, total_items = excluded.total_items, total_pages = excluded.total_pages,
				duration_ms = excluded.duration_ms, body_sha256 = excluded.body_sha256, cards_new = excluded.cards_new,
				cards_changed = excluded.cards_changed, cards_unchanged = excluded.cards_unchanged`,
		runID, stream, walkID, now, pages, fetched, items, totalItems, totalPages, durations, shas, cardsNew, cardsChanged, cardsUnchanged)
}

// RecordFields implements batch.BatchTx; it notes whether cards_flat must
// follow.
func (b *batchTx) RecordFields(ctx context.Context, walkID int64, fields *cardfield.FieldSet, budget *cardfield.FieldBudget) ([]string, map[string]cardfield.FieldType, error) {
	flat, skipped, types, err := b.w.recordFields(ctx, b.tx, b.runID, walkID, b.now, fields, budget)
	b.flat = b.flat || flat
	return skipped, types, err
}

// GrowFields implements batch.BatchTx; it notes whether cards_flat must
// follow.
func (b *batchTx) GrowFields(ctx context.Context, want map[string]cardfield.FieldType) (map[string]cardfield.FieldType, error) {
	types, flat, err := growFields(ctx, b.tx, want, b.w.amounts)
	b.flat = b.flat || flat
	return types, err
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
// field, in one statement.
func addConflicts(ctx context.Context, tx pgx.Tx, conflicts, rounded map[string]int) error {
	if len(conflicts) == 0 && len(rounded) == 0 {
		return nil
	}
	var names []string
	var misfits, roundings []int64
	for name, n := range conflicts {
		names, misfits, roundings = append(names, name), append(misfits, int64(n)), append(roundings, int64(rounded[name]))
	}
	for name, n := range rounded {
		if _, ok := conflicts[name]; !ok {
			names, misfits, roundings = append(names, name), append(misfits, 0), append(roundings, int64(n))
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE card_fields f SET conflicts = f.conflicts + c.n, rounded = f.rounded + c.r
		FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS c(name, n, r) WHERE f.name = c.name`, names, misfits, roundings); err != nil {
		return fmt.Errorf("count conflicts and rounded values of %s: %w", english.Count(len(names), "field"), err)
	}
	return nil
}

// moneyColumns are cards' card_state.minor (NULL, nil, for none),
// amount_scale, amount_currency (NULL for none) and amounts_rounded, as
// columns.
type moneyColumns struct {
	minor, currency []*string
	scale           []int32
	rounded         []int16
}

// add appends the money of cs (CardWrite.Money).
func (m *moneyColumns) add(cs ...batch.CardWrite) {
	for _, c := range cs {
		m.addMoney(c.Money())
	}
}

// addMoney appends one card's money.
func (m *moneyColumns) addMoney(s cardfield.StoredMoney) {
	m.minor, m.currency = append(m.minor, nullString(s.Minor)), append(m.currency, nullString(s.Currency))
	m.scale = append(m.scale, int32(s.Scale))
	var r int16
	if s.Rounded {
		r = 1
	}
	m.rounded = append(m.rounded, r)
}

// nullString is &s, nil (NULL) when s is empty.
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// SaveProgress implements batch.BatchTx: the bookkeeping goes in one round
// trip, with the new cards and audit rows WritePage left to send.
func (b *batchTx) SaveProgress(ctx context.Context, walkID int64, last *batch.PreparedPage, tally *batch.BatchTally) error {
	runID, account, now := b.runID, b.w.account, b.now
	batch := tally.Batch
	reason, anomalyPages := tally.AnomalyArgs()
	q := &pgx.Batch{}
	var labels []string
	b.queueWrites(q, walkID, &labels)
	for _, p := range b.pages {
		q.Queue(`INSERT INTO walk_seen (walk_id, page, run_id, ids, hashes) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (walk_id, page) DO UPDATE SET run_id = excluded.run_id, ids = excluded.ids, hashes = excluded.hashes`,
			walkID, p.Number(), runID, p.ids, p.hashes)
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
			inconsistent_pages = `+sqlshare.AppendPagesSQL("$9::text")+`
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
			auth_requests = auth_requests + $10, heartbeat_at = $11, secrets_redacted = secrets_redacted + $14,
			card_numbers_masked = card_numbers_masked + $16, codes_dropped = codes_dropped + $17,
			track_data_dropped = track_data_dropped + $18, fields_dropped = fields_dropped + $19
		WHERE run_id = $12 AND account = $13`,
		batch.Pages, batch.Cards, batch.New, batch.Changed, batch.Unchanged, batch.Rejected,
		tally.Requests, tally.Retries, tally.RateLimited, tally.AuthRequests, now, runID, account, batch.Secrets, batch.Returned,
		batch.CardNumbers, batch.Codes, batch.TrackData, batch.FieldsDropped)
	return b.readProgress(b.tx.SendBatch(ctx, q), walkID, labels)
}

// readProgress reads SaveProgress's answers in the order queued: the
// writes labelled labels first.
func (b *batchTx) readProgress(br pgx.BatchResults, walkID int64, labels []string) error {
	defer br.Close()
	for _, l := range labels {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("%s: %w", l, err)
		}
	}
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

// FieldSet implements batch.BatchPage: the page's top-level fields.
func (p *preparedPage) FieldSet() *cardfield.FieldSet { return &p.fields }
