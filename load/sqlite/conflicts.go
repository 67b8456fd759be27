package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
	"github.com/cardsync/cardsync/load/internal/walk"
)

// SQLite's statements of walk.ConflictTx: an id a walk listed with two
// contents keeps its stored content.

// DuplicateSightings implements walk.ConflictTx: one pass over the walk's
// ids finds those on more than one page (usually none), then their
// sightings are read with the hash at their index of walk_seen.hashes.
func (t *walkTx) DuplicateSightings(ctx context.Context, walkID int64) ([]walk.Sighting, error) {
	dups, err := queryStrings(ctx, t.tx, `SELECT j.value FROM walk_seen s, json_each(s.ids) j WHERE s.walk_id = ?1
		GROUP BY j.value HAVING count(DISTINCT s.page) > 1`, walkID)
	if err != nil || len(dups) == 0 {
		return nil, wrapErr("read the walk's repeated ids", err)
	}
	var out []walk.Sighting
	err = eachRow(ctx, t.tx, `SELECT j.value, s.page, substr(s.hashes, 16 * j.key + 1, 16)
		FROM walk_seen s, json_each(s.ids) j
		WHERE s.walk_id = ?1 AND j.value IN (SELECT value FROM json_each(?2))`, []any{walkID, jsonStrings(dups)},
		func(scan func(...any) error) error {
			var s walk.Sighting
			var hash []byte
			if err := scan(&s.ID, &s.Page, &hash); err != nil {
				return err
			}
			s.Hash = walk.SightingHash(hash)
			out = append(out, s)
			return nil
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
	var out []walk.CardVersion
	err := eachRow(ctx, t.tx, `SELECT v.version, v.run_id, v.change, v.data, v.run_id < w.started_run
		FROM card_versions v, sync_walks w
		WHERE w.walk_id = ?1 AND v.account = ?2 AND v.card_id = ?3
		  AND v.version >= coalesce((SELECT max(p.version) FROM card_versions p
			WHERE p.account = ?2 AND p.card_id = ?3 AND p.run_id < w.started_run), 0)
		ORDER BY v.version`, []any{walkID, t.w.account, id},
		func(scan func(...any) error) error {
			var v walk.CardVersion
			if err := scan(&v.Version, &v.RunID, &v.Change, &v.Data, &v.Before); err != nil {
				return err
			}
			out = append(out, v)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("card %s: read versions: %w", id, err)
	}
	return out, nil
}

// ConflictTypes implements walk.ConflictTx.
func (t *walkTx) ConflictTypes(ctx context.Context) (map[string]cardfield.FieldType, load.AmountRules, error) {
	types, err := numberTypes(ctx, t.tx)
	return types, t.w.set.Amounts, err
}

// RestoreCard implements walk.ConflictTx.
func (t *walkTx) RestoreCard(ctx context.Context, fix walk.ConflictFix) error {
	tx, account := t.tx, t.w.account
	if _, err := tx.ExecContext(ctx, `DELETE FROM card_versions WHERE account = ?1 AND card_id = ?2 AND version > ?3`,
		account, fix.ID, fix.Keep); err != nil {
		return fmt.Errorf("card %s: drop the walk's versions: %w", fix.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE card_versions SET valid_to = NULL, data = ?4 WHERE account = ?1 AND card_id = ?2 AND version = ?3`,
		account, fix.ID, fix.Keep, fix.Data); err != nil {
		return fmt.Errorf("card %s: reopen version %d: %w", fix.ID, fix.Keep, err)
	}
	m := fix.Money
	if _, err := tx.ExecContext(ctx, `UPDATE card_state SET data = ?4, data_hash = ?5, minor = ?6, removed_at = NULL,
			amount_scale = ?7, amount_currency = ?8, amounts_rounded = ?9,
			updated_at = (SELECT valid_from FROM card_versions WHERE account = ?1 AND card_id = ?2 AND version = ?3)
		WHERE account = ?1 AND card_id = ?2`, account, fix.ID, fix.Keep, fix.Data, fix.Hash, nullText(m.Minor),
		m.Scale, nullText(m.Currency), boolInt(m.Rounded)); err != nil {
		return fmt.Errorf("card %s: restore: %w", fix.ID, err)
	}
	for _, v := range fix.Dropped {
		if _, err := tx.ExecContext(ctx, `UPDATE sync_runs SET cards_changed = cards_changed - (?2 = 'changed'),
				cards_returned = cards_returned - (?2 = 'returned'), cards_new = cards_new - (?2 = 'new'),
				cards_unchanged = cards_unchanged + 1
			WHERE run_id = ?1`, v.RunID, v.Change); err != nil {
			return fmt.Errorf("card %s: recount run %d: %w", fix.ID, v.RunID, err)
		}
	}
	return nil
}

// RecordAnomaly implements walk.ConflictTx.
func (t *walkTx) RecordAnomaly(ctx context.Context, walkID int64, reason string, pages []int) error {
	var list any
	if len(pages) > 0 {
		b, _ := json.Marshal(pages)
		list = string(b)
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE sync_walks SET inconsistent_reason = coalesce(inconsistent_reason, ?2),
			inconsistent_pages = `+sqlshare.AppendPagesSQL("?3")+` WHERE walk_id = ?1`, walkID, reason, list); err != nil {
		return fmt.Errorf("record %s on walk %s: %w", reason, strconv.FormatInt(walkID, 10), err)
	}
	return nil
}
