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
	if err := eachCardChunk(ctx, tx, func(_ int64, data string) error {
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
	if err := eachCardChunk(ctx, tx, func(rowid int64, data string) error {
		minor := u.Minor([]byte(data))
		if minor == "" {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE card_state SET minor = ? WHERE rowid = ?`, minor, rowid)
		return err
	}); err != nil {
		return fmt.Errorf("fill minor units: %w", err)
	}
	return addConflicts(ctx, tx, u.Conflicts)
}

// eachCardChunk calls fn with the rowid and data of every card_state row,
// reading typedChunk rows per query; fn runs between queries.
func eachCardChunk(ctx context.Context, tx *sql.Tx, fn func(rowid int64, data string) error) error {
	type card struct {
		rowid int64
		data  string
	}
	after := int64(-1 << 63)
	for {
		var chunk []card
		err := eachRow(ctx, tx, `SELECT rowid, data FROM card_state WHERE rowid > ? ORDER BY rowid LIMIT ?`, []any{after, typedChunk},
			func(scan func(...any) error) error {
				var c card
				if err := scan(&c.rowid, &c.data); err != nil {
					return err
				}
				chunk = append(chunk, c)
				return nil
			})
		if err != nil {
			return err
		}
		for _, c := range chunk {
			if err := fn(c.rowid, c.data); err != nil {
				return err
			}
		}
		if len(chunk) < typedChunk {
			return nil
		}
		after = chunk[len(chunk)-1].rowid
	}
}
