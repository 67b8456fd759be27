package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/cardsync/cardsync/load/internal/batch"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
)

// writeChanges stores a page's changed and returned cards (re-read and
// locked in the transaction, which has the last word) with their versions,
// and its rejected items. Its new cards and audit row go with the batch
// (batchTx.WritePage).
func (w *Warehouse) writeChanges(ctx context.Context, tx pgx.Tx, runID int64, p *batch.PreparedPage, now time.Time) error {
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
	return nil
}

// columns turns cards into the arrays unnest takes.
func columns(cs []batch.CardWrite) (ids []string, hashes [][]byte, data []string) {
	for _, c := range cs {
		ids, hashes, data = append(ids, c.ID()), append(hashes, c.Hash()), append(data, c.Data())
	}
	return ids, hashes, data
}

// quarantine stores one rejected item redacted (load.QuarantineData), or
// counts a repeat of the latest identical rejection.
func (w *Warehouse) quarantine(ctx context.Context, tx pgx.Tx, runID int64, page int, r load.Rejection, now time.Time) error {
	data := clean(load.QuarantineData(w.rules, r.Data))
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

// storedCard is what a page's write compares a card with: the stored
// hash, whether it is removed, its last version.
type storedCard struct {
	hash    []byte
	removed bool
	version int32
}

// changedCards are the cards of a page to write, as columns.
type changedCards struct {
	ids, data, change []string
	money             moneyColumns
	hash              [][]byte
	version           []int32
}

// writeCards stores a page's changed and returned cards: re-read and
// locked in the transaction, which has the last word (PreparedPage.Recount),
// then upserted with their versions, set-based.
func (w *Warehouse) writeCards(ctx context.Context, tx pgx.Tx, runID int64, p *batch.PreparedPage, writes []batch.CardWrite, now time.Time) error {
	ids, _, _ := columns(writes)
	have, err := w.lockStored(ctx, tx, ids)
	if err != nil {
		return err
	}
	var ch changedCards
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
		ch.ids, ch.data, ch.change = append(ch.ids, c.ID()), append(ch.data, c.Data()), append(ch.change, change)
		ch.money.add(c)
		ch.hash, ch.version = append(ch.hash, c.Hash()), append(ch.version, s.version+1)
	}
	if len(ch.ids) == 0 {
		return nil
	}
	return w.upsertChanged(ctx, tx, runID, now, ch)
}

// lockStored reads and locks (FOR UPDATE) the stored state of the cards
// ids of this account.
func (w *Warehouse) lockStored(ctx context.Context, tx pgx.Tx, ids []string) (map[string]storedCard, error) {
	have := make(map[string]storedCard, len(ids))
	rows, err := tx.Query(ctx, `SELECT c.card_id, c.data_hash, c.removed_at IS NOT NULL,
			(SELECT max(version) FROM card_versions v WHERE v.account = c.account AND v.card_id = c.card_id)
		FROM card_state c WHERE c.account = $1 AND c.card_id = ANY($2::text[])
		ORDER BY c.card_id FOR UPDATE OF c`, w.account, ids)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", english.Count(len(ids), "card"), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var s storedCard
		if err := rows.Scan(&id, &s.hash, &s.removed, &s.version); err != nil {
			return nil, fmt.Errorf("read %s: %w", english.Count(len(ids), "card"), err)
		}
		have[id] = s
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", english.Count(len(ids), "card"), err)
	}
	return have, nil
}

// upsertChanged writes ch's cards into card_state and a new version of
// each into card_versions, closing the open one.
func (w *Warehouse) upsertChanged(ctx context.Context, tx pgx.Tx, runID int64, now time.Time, ch changedCards) error {
	n := len(ch.ids)
	if _, err := tx.Exec(ctx, `INSERT INTO card_state AS s (card_id, data, data_hash, minor, amount_scale, amount_currency, amounts_rounded,
				first_seen_at, last_seen_at, updated_at, first_seen_run, last_seen_run, account)
			SELECT id, data::jsonb, hash, minor::jsonb, scale, currency, rounded, $1, $1, $1, $2, $2, $3
			FROM unnest($4::text[], $5::text[], $6::bytea[], $7::text[], $8::int[], $9::text[], $10::smallint[])
				AS t(id, data, hash, minor, scale, currency, rounded)
			ON CONFLICT (account, card_id) DO UPDATE SET
				data = excluded.data,
				data_hash = excluded.data_hash,
				minor = excluded.minor,
				amount_scale = excluded.amount_scale,
				amount_currency = excluded.amount_currency,
				amounts_rounded = excluded.amounts_rounded,
				updated_at = CASE WHEN s.data IS DISTINCT FROM excluded.data THEN excluded.updated_at ELSE s.updated_at END,
				removed_at = NULL,
				last_seen_at = excluded.last_seen_at,
				last_seen_run = excluded.last_seen_run`,
		now, runID, w.account, ch.ids, ch.data, ch.hash, ch.money.minor, ch.money.scale, ch.money.currency, ch.money.rounded); err != nil {
		return fmt.Errorf("upsert %s: %w", english.Count(n, "card"), err)
	}
	if _, err := tx.Exec(ctx, `UPDATE card_versions SET valid_to = $1
			WHERE account = $2 AND valid_to IS NULL AND card_id = ANY($3::text[])`, now, w.account, ch.ids); err != nil {
		return fmt.Errorf("close versions of %s: %w", english.Count(n, "card"), err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO card_versions (card_id, version, valid_from, run_id, change, data, account)
			SELECT id, v, $1, $2, ch, data::jsonb, $3 FROM unnest($4::text[], $5::int[], $6::text[], $7::text[]) AS t(id, v, ch, data)`,
		now, runID, w.account, ch.ids, ch.version, ch.change, ch.data); err != nil {
		return fmt.Errorf("version %s: %w", english.Count(n, "card"), err)
	}
	return nil
}
