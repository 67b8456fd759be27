package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// maxColumnName bounds a cards_flat column name in bytes; a longer field
// name is cut and given a short hash so two long names stay distinct.
const maxColumnName = 100

// SQLiteFlatLimits are the SQLite warehouse's bounds: MaxFlatFields
// columns, names of at most 100 bytes.
func SQLiteFlatLimits() cardfield.FlatLimits {
	return cardfield.FlatLimits{Fields: cardfield.MaxFlatFields, ColumnBytes: maxColumnName}
}

// recordFields updates card_fields with the top-level fields of a batch's
// cards (PlanFields), within the walk's budget b, stamps last_seen_at on
// every field it adds or updates, and regenerates cards_flat when a field
// joins the view or a field gets a minor-units column. It returns the new
// fields it left out and the types of card_fields' fields.
func (w *Warehouse) recordFields(ctx context.Context, tx *sql.Tx, runID, walkID int64, now string, s *cardfield.FieldSet, b *cardfield.FieldBudget) ([]string, map[string]cardfield.FieldType, error) {
	if len(s.Names()) == 0 {
		return nil, nil, nil
	}
	if !b.Known() {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM card_fields
			WHERE first_run IN (SELECT run_id FROM sync_runs WHERE account = ?
				AND run_id >= (SELECT started_run FROM sync_walks WHERE walk_id = ?))`, w.account, walkID).Scan(&n); err != nil {
			return nil, nil, fmt.Errorf("count the walk's fields: %w", err)
		}
		b.Start(n)
	}
	have, err := readFields(ctx, tx)
	if err != nil {
		return nil, nil, err
	}
	add, update, skipped := cardfield.PlanFields(have, s, runID, w.flatLimits(), b.Room())
	types := cardfield.TypesOf(have, add, update)
	added := false
	for _, f := range add {
		if _, err := tx.ExecContext(ctx, `INSERT INTO card_fields (name, json_types, first_run, last_run, first_seen_at, column_name, in_flat_view, last_seen_at, type, scale, minor_column)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, f.Name, f.JSONTypes, runID, runID, now, nullText(f.Column), boolInt(f.InFlatView), now,
			f.Type.Kind.String(), typeScale(f.Type), nullText(f.Type.MinorColumn)); err != nil {
			return nil, nil, fmt.Errorf("add field %q: %w", f.Name, err)
		}
		added = added || f.InFlatView
	}
	b.Added(len(add))
	for _, f := range update {
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET json_types = ?, last_run = ?, last_seen_at = max(last_seen_at, ?),
				type = ?, scale = ?, minor_column = ? WHERE name = ?`,
			f.JSONTypes, f.LastRun, now, f.Type.Kind.String(), typeScale(f.Type), nullText(f.Type.MinorColumn), f.Name); err != nil {
			return nil, nil, fmt.Errorf("update field %q: %w", f.Name, err)
		}
	}
	if added || cardfield.GainsMinor(have, update) {
		return skipped, types, regenerateFlat(ctx, tx)
	}
	return skipped, types, nil
}

// flatLimits are SQLiteFlatLimits with the scale card_fields gives a
// field typed decimal: the warehouse's [cards] amount_scale.
func (w *Warehouse) flatLimits() cardfield.FlatLimits {
	lim := SQLiteFlatLimits()
	lim.AmountScale = w.set.Amounts.Scale
	return lim
}

// typeScale is card_fields.scale of type t: its scale for a decimal, else
// NULL.
func typeScale(t cardfield.FieldType) any {
	if t.Kind != cardfield.KindDecimal {
		return nil
	}
	return t.Scale
}

// readFields reads card_fields in the order fields first appeared.
func readFields(ctx context.Context, tx *sql.Tx) ([]cardfield.FieldRow, error) {
	var have []cardfield.FieldRow
	rows, err := tx.QueryContext(ctx, `SELECT name, json_types, last_run, coalesce(column_name, ''), in_flat_view, last_seen_at,
		type, coalesce(scale, 0), coalesce(minor_column, '') FROM card_fields ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("read fields: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f cardfield.FieldRow
		var seen, kind string
		if err := rows.Scan(&f.Name, &f.JSONTypes, &f.LastRun, &f.Column, &f.InFlatView, &seen,
			&kind, &f.Type.Scale, &f.Type.MinorColumn); err != nil {
			return nil, fmt.Errorf("read fields: %w", err)
		}
		f.Type.Kind = cardfield.ParseKind(kind)
		f.LastSeen = parseTime(seen)
		have = append(have, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read fields: %w", err)
	}
	return have, nil
}

// PruneFields deletes the card_fields rows last seen before cutoff
// (StaleFields) and regenerates cards_flat when one of them had a column
// there, in one transaction. card_fields is shared by the file's accounts:
// a field any account's commit saw since cutoff stays. The worker calls
// it after a complete walk, with cutoff now minus
// warehouse.field_retention. It returns the number of rows deleted.
func (w *Warehouse) PruneFields(ctx context.Context, cutoff time.Time) (_ int, err error) {
	defer classify(&err)
	n := 0
	err = w.write(ctx, func(tx *sql.Tx) error {
		have, err := readFields(ctx, tx)
		if err != nil {
			return err
		}
		flat := false
		stale := cardfield.StaleFields(have, cutoff)
		for _, f := range stale {
			if _, err := tx.ExecContext(ctx, `DELETE FROM card_fields WHERE name = ?`, f.Name); err != nil {
				return fmt.Errorf("delete field: %w", err)
			}
			flat = flat || f.InFlatView
		}
		n = len(stale)
		if flat {
			return regenerateFlat(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune fields: %w", err)
	}
	return n, nil
}

// regenerateFlat recreates the cards_flat view with one column per field in
// the view, in the order fields first appeared.
func regenerateFlat(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name, column_name, coalesce(minor_column, '') FROM card_fields
		WHERE in_flat_view = 1 AND column_name IS NOT NULL ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	var fields []flatField
	for rows.Next() {
		var f flatField
		if err := rows.Scan(&f.name, &f.column, &f.minor); err != nil {
			rows.Close()
			return fmt.Errorf("regenerate cards_flat: %w", err)
		}
		fields = append(fields, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DROP VIEW IF EXISTS cards_flat"); err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	if _, err := tx.ExecContext(ctx, flatViewSQL(fields)); err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	return nil
}

// flatField is a field of cards_flat: its name, its column and its
// minor-units column ("" when none).
type flatField struct{ name, column, minor string }

// flatViewSQL builds CREATE VIEW cards_flat over card_state from its
// fields, each followed by its minor-units column (read from
// card_state.minor, an INTEGER from json_extract) when it has one, ending
// with the account column. Field names come
// from the API, so they are quoted as identifiers and string literals. A
// plain name is read with json_extract(data,
// '$."name"'), which works because card data is stored in canonical JSON
// (keys as UTF-8, no needless escapes). A name holding a quote, a backslash
// or a control character cannot be a path label: it is found by the key's
// canonical text in json_each's fullkey, which SQLite 3.40 and later render
// the same way.
func flatViewSQL(fields []flatField) string {
	var b strings.Builder
	b.WriteString("CREATE VIEW cards_flat AS\nSELECT card_id")
	for _, f := range fields {
		b.WriteString(",\n    " + jsonMember("data", f.name) + " AS " + quoteIdent(f.column))
		if f.minor != "" {
			b.WriteString(",\n    " + jsonMember("minor", f.name) + " AS " + quoteIdent(f.minor))
		}
	}
	b.WriteString(",\n    removed_at,\n    account\nFROM card_state")
	return b.String()
}

// jsonMember is the SQL expression of the top-level member name of
// card_state's JSON column col.
func jsonMember(col, name string) string {
	if strings.ContainsAny(name, "\"\\") || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) {
		return "(SELECT value FROM json_each(card_state." + col + ") WHERE fullkey = " + quoteLiteral(`$."`+cardfield.CanonicalKey(name)+`"`) + ")"
	}
	return "json_extract(" + col + ", " + quoteLiteral(`$."`+name+`"`) + ")"
}

func quoteIdent(s string) string   { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteLiteral(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }
