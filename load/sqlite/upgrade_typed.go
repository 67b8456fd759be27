package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// typedChunk is how many cards upgradeTyped reads per query, so the
// upgrade's memory does not grow with the warehouse.
const typedChunk = 1000

// upgradeTyped is migration 13's Go step: it types the fields card_fields
// holds from the cards already stored (cardfield.TypeUpgrade: their first
// values are every stored card's), then fills card_state.minor of each
// card with decimal values and counts the conflicts, reading the cards in
// chunks of typedChunk by rowid.
func (w *Warehouse) upgradeTyped(ctx context.Context, tx *sql.Tx) error {
	var u cardfield.TypeUpgrade
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
	for _, f := range u.Plan(have, w.flatLimits()) {
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET type = ?, scale = ?, minor_column = ? WHERE name = ?`,
			f.Type.Kind.String(), typeScale(f.Type), nullText(f.Type.MinorColumn), f.Name); err != nil {
			return fmt.Errorf("type field %q: %w", f.Name, err)
		}
	}
	if err := fillMinor(ctx, tx, &u); err != nil {
		return err
	}
	return addConflicts(ctx, tx, u.Conflicts, nil)
}

// upgradeCurrencyScales is migration 17's Go step: a decimal field's
// scale no longer grows with the most decimals seen. Every decimal field
// gets the warehouse's [cards] amount_scale as card_fields.scale, every
// stored card its money at its own scale (cardfield.Recompute: its currency's
// ISO 4217 minor unit, else that scale), the values with more decimals
// rounded half to even and marked, and every decimal field's conflicts
// and rounded are recounted from the cards stored.
func (w *Warehouse) upgradeCurrencyScales(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET scale = ? WHERE type = 'decimal'`, w.set.Amounts.Scale); err != nil {
		return fmt.Errorf("set the scale of decimal fields: %w", err)
	}
	have, err := readFields(ctx, tx)
	if err != nil {
		return err
	}
	u := cardfield.Recompute(cardfield.TypesOf(have, nil, nil), w.set.Amounts)
	if err := fillMoney(ctx, tx, u); err != nil {
		return err
	}
	return recount(ctx, tx, have, u)
}

// recount sets card_fields.conflicts and rounded of the decimal fields of
// rows to what u found in the stored cards.
func recount(ctx context.Context, tx *sql.Tx, rows []cardfield.FieldRow, u *cardfield.TypeUpgrade) error {
	for _, f := range rows {
		if f.Type.Kind != cardfield.KindDecimal {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET conflicts = ?, rounded = ? WHERE name = ?`,
			u.Conflicts[f.Name], u.Rounded[f.Name], f.Name); err != nil {
			return fmt.Errorf("recount conflicts of field %q: %w", f.Name, err)
		}
	}
	return nil
}

// fillMoney sets card_state's minor, amount_scale, amount_currency and
// amounts_rounded of every card whose money under u (TypeUpgrade.Card,
// the card's stored scale kept when it names no known currency) differs
// from what it holds, counting its misfits and rounded values in u, in
// chunks of typedChunk cards.
func fillMoney(ctx context.Context, tx *sql.Tx, u *cardfield.TypeUpgrade) error {
	type card struct {
		rowid int64
		data  string
		old   cardfield.StoredMoney
		has   bool // amount_scale is set
	}
	after := int64(-1 << 63)
	for {
		var chunk []card
		err := eachRow(ctx, tx, `SELECT rowid, data, coalesce(minor, ''), amount_scale IS NOT NULL, coalesce(amount_scale, 0),
				coalesce(amount_currency, ''), amounts_rounded
			FROM card_state WHERE rowid > ? ORDER BY rowid LIMIT ?`, []any{after, typedChunk},
			func(scan func(...any) error) error {
				var c card
				if err := scan(&c.rowid, &c.data, &c.old.Minor, &c.has, &c.old.Scale, &c.old.Currency, &c.old.Rounded); err != nil {
					return err
				}
				chunk = append(chunk, c)
				return nil
			})
		if err != nil {
			return fmt.Errorf("fill minor units: %w", err)
		}
		for _, c := range chunk {
			var stored *cardfield.StoredMoney
			if c.has {
				stored = &c.old
			}
			m := u.Card([]byte(c.data), stored)
			if c.has && m == c.old {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE card_state SET minor = ?, amount_scale = ?, amount_currency = ?, amounts_rounded = ? WHERE rowid = ?`,
				nullText(m.Minor), m.Scale, nullText(m.Currency), boolInt(m.Rounded), c.rowid); err != nil {
				return fmt.Errorf("fill minor units: %w", err)
			}
		}
		if len(chunk) < typedChunk {
			return nil
		}
		after = chunk[len(chunk)-1].rowid
	}
}

// fillMinor sets card_state.minor of every card whose minor units under
// u's types differ from those it holds, counting the misfits in
// u.Conflicts, in chunks of typedChunk cards.
func fillMinor(ctx context.Context, tx *sql.Tx, u *cardfield.TypeUpgrade) error {
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
// file's write lock serializes card_fields' writers), it widens the
// fields of want (cardfield.GrowTypes), regenerates cards_flat when one gains
// a minor-units column, recomputes every stored card's minor units under
// the widened types, each at its card's scale, and sets the widened
// fields' conflicts and rounded to the values found: the new type and the
// cards' minor units commit together.
func (w *Warehouse) growFields(ctx context.Context, tx *sql.Tx, want map[string]cardfield.FieldType) (map[string]cardfield.FieldType, error) {
	have, err := readFields(ctx, tx)
	if err != nil {
		return nil, err
	}
	grown := cardfield.GrowTypes(have, want, w.flatLimits())
	flat := cardfield.GainsMinor(have, grown)
	for _, f := range grown {
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET type = ?, scale = ?, minor_column = ? WHERE name = ?`,
			f.Type.Kind.String(), typeScale(f.Type), nullText(f.Type.MinorColumn), f.Name); err != nil {
			return nil, fmt.Errorf("grow field %q: %w", f.Name, err)
		}
	}
	types := cardfield.TypesOf(have, nil, grown)
	if len(grown) == 0 {
		return types, nil
	}
	if flat {
		if err := regenerateFlat(ctx, tx); err != nil {
			return nil, err
		}
	}
	u := cardfield.Recompute(types, w.set.Amounts)
	if err := fillMoney(ctx, tx, u); err != nil {
		return nil, err
	}
	if err := recount(ctx, tx, grown, u); err != nil {
		return nil, err
	}
	return types, nil
}

// numberTypes is batchTx.NumberTypes: in the commit's transaction, which
// holds the file's write lock, card_fields' integer and decimal types.
func numberTypes(ctx context.Context, tx *sql.Tx) (map[string]cardfield.FieldType, error) {
	out := map[string]cardfield.FieldType{}
	err := eachRow(ctx, tx, `SELECT name, type, coalesce(scale, 0), coalesce(minor_column, '') FROM card_fields WHERE type IN ('integer', 'decimal')`, nil,
		func(scan func(...any) error) error {
			var name, kind string
			var t cardfield.FieldType
			if err := scan(&name, &kind, &t.Scale, &t.MinorColumn); err != nil {
				return err
			}
			t.Kind = cardfield.ParseKind(kind)
			out[name] = t
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read number fields' types: %w", err)
	}
	return out, nil
}
