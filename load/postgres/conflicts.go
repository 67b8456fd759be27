package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
	"github.com/cardsync/cardsync/load/internal/walk"
)

// PostgreSQL's statements of walk.ConflictTx: an id a walk listed with two
// contents keeps its stored content.

// DuplicateSightings implements walk.ConflictTx: one pass over the walk's
// ids finds those on more than one page (usually none), then their
// sightings are read with the hash at their index of walk_seen.hashes.
func (t *walkTx) DuplicateSightings(ctx context.Context, walkID int64) ([]walk.Sighting, error) {
	rows, err := t.tx.Query(ctx, `SELECT u.id FROM walk_seen s, unnest(s.ids) AS u(id) WHERE s.walk_id = $1
		GROUP BY u.id HAVING count(DISTINCT s.page) > 1`, walkID)
	if err != nil {
		return nil, fmt.Errorf("read the walk's repeated ids: %w", err)
	}
	dups, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(dups) == 0 {
		return nil, wrapErr("read the walk's repeated ids", err)
	}
	rows, err = t.tx.Query(ctx, `SELECT u.id, s.page, substring(s.hashes FROM (16 * (u.ord - 1) + 1)::int FOR 16)
		FROM walk_seen s, unnest(s.ids) WITH ORDINALITY AS u(id, ord)
		WHERE s.walk_id = $1 AND u.id = ANY($2::text[])`, walkID, dups)
	if err != nil {
		return nil, fmt.Errorf("read the walk's repeated ids: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (walk.Sighting, error) {
		var s walk.Sighting
		var hash []byte
		if err := r.Scan(&s.ID, &s.Page, &hash); err != nil {
			return s, err
		}
		s.Hash = walk.SightingHash(hash)
		return s, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the walk's repeated ids: %w", err)
	}
	return out, nil
}

// wrapErr is err wrapped with what, or nil.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// CardHistory implements walk.ConflictTx.
func (t *walkTx) CardHistory(ctx context.Context, walkID int64, id string) ([]walk.CardVersion, error) {
	rows, err := t.tx.Query(ctx, `SELECT v.version, v.run_id, v.change, v.data::text, v.run_id < w.started_run
		FROM card_versions v, sync_walks w
		WHERE w.walk_id = $1 AND v.account = $2 AND v.card_id = $3
		  AND v.version >= coalesce((SELECT max(p.version) FROM card_versions p
			WHERE p.account = $2 AND p.card_id = $3 AND p.run_id < w.started_run), 0)
		ORDER BY v.version`, walkID, t.w.account, id)
	if err != nil {
		return nil, fmt.Errorf("card %s: read versions: %w", id, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (walk.CardVersion, error) {
		var v walk.CardVersion
		var version int32
		err := r.Scan(&version, &v.RunID, &v.Change, &v.Data, &v.Before)
		v.Version = int64(version)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("card %s: read versions: %w", id, err)
	}
	return out, nil
}

// ConflictTypes implements walk.ConflictTx.
func (t *walkTx) ConflictTypes(ctx context.Context) (map[string]cardfield.FieldType, load.AmountRules, error) {
	types, err := numberTypes(ctx, t.tx)
	return types, t.w.amounts, err
}

// RestoreCard implements walk.ConflictTx.
func (t *walkTx) RestoreCard(ctx context.Context, fix walk.ConflictFix) error {
	tx, account := t.tx, t.w.account
	if _, err := tx.Exec(ctx, `DELETE FROM card_versions WHERE account = $1 AND card_id = $2 AND version > $3`,
		account, fix.ID, fix.Keep); err != nil {
		return fmt.Errorf("card %s: drop the walk's versions: %w", fix.ID, err)
	}
	if _, err := tx.Exec(ctx, `UPDATE card_versions SET valid_to = NULL, data = $4::jsonb WHERE account = $1 AND card_id = $2 AND version = $3`,
		account, fix.ID, fix.Keep, fix.Data); err != nil {
		return fmt.Errorf("card %s: reopen version %d: %w", fix.ID, fix.Keep, err)
	}
	m := fix.Money
	var minor, currency *string
	if m.Minor != "" {
		minor = &m.Minor
	}
	if m.Currency != "" {
		currency = &m.Currency
	}
	var rounded int16
	if m.Rounded {
		rounded = 1
	}
	if _, err := tx.Exec(ctx, `UPDATE card_state SET data = $4::jsonb, data_hash = $5, minor = $6::jsonb, removed_at = NULL,
			amount_scale = $7, amount_currency = $8, amounts_rounded = $9,
			updated_at = (SELECT valid_from FROM card_versions WHERE account = $1 AND card_id = $2 AND version = $3)
		WHERE account = $1 AND card_id = $2`, account, fix.ID, fix.Keep, fix.Data, fix.Hash, minor, int32(m.Scale), currency, rounded); err != nil {
		return fmt.Errorf("card %s: restore: %w", fix.ID, err)
	}
	for _, v := range fix.Dropped {
		if _, err := tx.Exec(ctx, `UPDATE sync_runs SET
				cards_changed = cards_changed - CASE WHEN $2 = 'changed' THEN 1 ELSE 0 END,
				cards_returned = cards_returned - CASE WHEN $2 = 'returned' THEN 1 ELSE 0 END,
				cards_new = cards_new - CASE WHEN $2 = 'new' THEN 1 ELSE 0 END,
				cards_unchanged = cards_unchanged + 1
			WHERE run_id = $1`, v.RunID, v.Change); err != nil {
			return fmt.Errorf("card %s: recount run %d: %w", fix.ID, v.RunID, err)
		}
	}
	return nil
}

// RecordAnomaly implements walk.ConflictTx.
func (t *walkTx) RecordAnomaly(ctx context.Context, walkID int64, reason string, pages []int) error {
	var list *string
	if len(pages) > 0 {
		b, _ := json.Marshal(pages)
		s := string(b)
		list = &s
	}
	if _, err := t.tx.Exec(ctx, `UPDATE sync_walks SET inconsistent_reason = coalesce(inconsistent_reason, $2::text),
			inconsistent_pages = `+sqlshare.AppendPagesSQL("$3::text")+` WHERE walk_id = $1`, walkID, reason, list); err != nil {
		return fmt.Errorf("record %s on walk %d: %w", reason, walkID, err)
	}
	return nil
}
