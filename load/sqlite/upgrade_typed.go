package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cardsync/cardsync/load"
)

// typedChunk is how many cards upgradeTyped reads per query, so the
// upgrade's memory does not grow with the warehouse.
const typedChunk = 1000

// upgradeTyped is migration 13's Go step: it types the fields card_fields
// holds from the cards already stored (load.TypeUpgrade: their first
// values are every stored card's), then fills card_state.minor of each
// card with decimal values and counts the conflicts, reading the cards in
// chunks of typedChunk by rowid.
func (w *Warehouse) upgradeTyped(ctx context.Context, tx *sql.Tx) error {
	var u load.TypeUpgrade
	if err := eachCardChunk(ctx, tx, func(_ int64, data, _ string) error {
		u.See([]byte(data))
		return nil
	}); err != nil {
		return fmt.Errorf("type fields: %w", err)
	}
	have, err := readFields(ctx, tx)
	if err != nil {
		return err
	}
	for _, f := range u.Plan(have, SQLiteFlatLimits()) {
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET type = ?, scale = ?, minor_column = ? WHERE name = ?`,
			f.Type.Kind.String(), typeScale(f.Type), nullText(f.Type.MinorColumn), f.Name); err != nil {
			return fmt.Errorf("type field %q: %w", f.Name, err)
		}
	}
	if err := fillMinor(ctx, tx, &u); err != nil {
		return err
	}
	return addConflicts(ctx, tx, u.Conflicts)
}

// fillMinor sets card_state.minor of every card whose minor units under
// u's types differ from those it holds, counting the misfits in
// u.Conflicts, in chunks of typedChunk cards.
func fillMinor(ctx context.Context, tx *sql.Tx, u *load.TypeUpgrade) error {
	if err := eachCardChunk(ctx, tx, func(rowid int64, data, old string) error {
		minor := u.Minor([]byte(data))
		if minor == old {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE card_state SET minor = ? WHERE rowid = ?`, nullText(minor), rowid)
		return err
	}); err != nil {
		return fmt.Errorf("fill minor units: %w", err)
	}
	return nil
}

// eachCardChunk calls fn with the rowid, data and minor ("": NULL) of
// every card_state row,
// reading typedChunk rows per query; fn runs between queries.
func eachCardChunk(ctx context.Context, tx *sql.Tx, fn func(rowid int64, data, minor string) error) error {
	type card struct {
		rowid       int64
		data, minor string
	}
	after := int64(-1 << 63)
	for {
		var chunk []card
		err := eachRow(ctx, tx, `SELECT rowid, data, coalesce(minor, '') FROM card_state WHERE rowid > ? ORDER BY rowid LIMIT ?`, []any{after, typedChunk},
			func(scan func(...any) error) error {
				var c card
				if err := scan(&c.rowid, &c.data, &c.minor); err != nil {
					return err
				}
				chunk = append(chunk, c)
				return nil
			})
		if err != nil {
			return err
		}
		for _, c := range chunk {
			if err := fn(c.rowid, c.data, c.minor); err != nil {
				return err
			}
		}
		if len(chunk) < typedChunk {
			return nil
		}
		after = chunk[len(chunk)-1].rowid
	}
}

// growFields is batchTx.GrowFields: in the commit's transaction (the
// file's write lock serializes card_fields' writers), it grows the fields
// of want (load.GrowTypes), regenerates cards_flat when one gains a
// minor-units column, recomputes every stored card's minor units under
// the grown types and sets the grown fields' conflicts to the misfits
// found: the new scale and the cards' minor units commit together.
func growFields(ctx context.Context, tx *sql.Tx, want map[string]load.FieldType) (map[string]load.FieldType, error) {
	have, err := readFields(ctx, tx)
	if err != nil {
		return nil, err
	}
	grown := load.GrowTypes(have, want, SQLiteFlatLimits())
	flat := load.GainsMinor(have, grown)
	for _, f := range grown {
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET type = ?, scale = ?, minor_column = ? WHERE name = ?`,
			f.Type.Kind.String(), typeScale(f.Type), nullText(f.Type.MinorColumn), f.Name); err != nil {
			return nil, fmt.Errorf("grow field %q: %w", f.Name, err)
		}
	}
	types := load.TypesOf(have, nil, grown)
	if len(grown) == 0 {
		return types, nil
	}
	if flat {
		if err := regenerateFlat(ctx, tx); err != nil {
			return nil, err
		}
	}
	u := load.Recompute(types)
	if err := fillMinor(ctx, tx, u); err != nil {
		return nil, err
	}
	for _, f := range grown {
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET conflicts = ? WHERE name = ?`, u.Conflicts[f.Name], f.Name); err != nil {
			return nil, fmt.Errorf("recount conflicts of field %q: %w", f.Name, err)
		}
	}
	return types, nil
}

// numberTypes is batchTx.NumberTypes: in the commit's transaction, which
// holds the file's write lock, card_fields' integer and decimal types.
func numberTypes(ctx context.Context, tx *sql.Tx) (map[string]load.FieldType, error) {
	out := map[string]load.FieldType{}
	err := eachRow(ctx, tx, `SELECT name, type, coalesce(scale, 0), coalesce(minor_column, '') FROM card_fields WHERE type IN ('integer', 'decimal')`, nil,
		func(scan func(...any) error) error {
			var name, kind string
			var t load.FieldType
			if err := scan(&name, &kind, &t.Scale, &t.MinorColumn); err != nil {
				return err
			}
			t.Kind = load.ParseKind(kind)
			out[name] = t
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read number fields' types: %w", err)
	}
	return out, nil
}
