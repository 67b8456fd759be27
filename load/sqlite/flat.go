package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/cardsync/cardsync/load"
)

// maxColumnName bounds a cards_flat column name in bytes; a longer field
// name is cut and given a short hash so two long names stay distinct.
const maxColumnName = 100

// SQLiteFlatLimits are the SQLite warehouse's bounds: MaxFlatFields
// columns, names of at most 100 bytes.
func SQLiteFlatLimits() load.FlatLimits {
	return load.FlatLimits{Fields: load.MaxFlatFields, ColumnBytes: maxColumnName}
}

// recordFields updates card_fields with the top-level fields of a batch's
// cards (PlanFields), within the walk's budget b, stamps last_seen_at on
// every field it adds or updates, and regenerates cards_flat when a field
// joins the view. It returns the new fields it left out.
func (w *Warehouse) recordFields(ctx context.Context, tx *sql.Tx, runID, walkID int64, now string, s *load.FieldSet, b *load.FieldBudget) ([]string, error) {
	if len(s.Names()) == 0 {
		return nil, nil
	}
	if !b.Known() {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM card_fields
			WHERE first_run IN (SELECT run_id FROM sync_runs WHERE account = ?
				AND run_id >= (SELECT started_run FROM sync_walks WHERE walk_id = ?))`, w.account, walkID).Scan(&n); err != nil {
			return nil, fmt.Errorf("count the walk's fields: %w", err)
		}
		b.Start(n)
	}
	have, err := readFields(ctx, tx)
	if err != nil {
		return nil, err
	}
	add, update, skipped := load.PlanFields(have, s, runID, SQLiteFlatLimits(), b.Room())
	added := false
	for _, f := range add {
		var column any
		if f.Column != "" {
			column = f.Column
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO card_fields (name, json_types, first_run, last_run, first_seen_at, column_name, in_flat_view, last_seen_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, f.Name, f.JSONTypes, runID, runID, now, column, boolInt(f.InFlatView), now); err != nil {
			return nil, fmt.Errorf("add field %q: %w", f.Name, err)
		}
		added = added || f.InFlatView
	}
	b.Added(len(add))
	for _, f := range update {
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET json_types = ?, last_run = ?, last_seen_at = max(last_seen_at, ?) WHERE name = ?`,
			f.JSONTypes, f.LastRun, now, f.Name); err != nil {
			return nil, fmt.Errorf("update field %q: %w", f.Name, err)
		}
	}
	if added {
		return skipped, regenerateFlat(ctx, tx)
	}
	return skipped, nil
}

// readFields reads card_fields in the order fields first appeared.
func readFields(ctx context.Context, tx *sql.Tx) ([]load.FieldRow, error) {
	var have []load.FieldRow
	rows, err := tx.QueryContext(ctx, `SELECT name, json_types, last_run, coalesce(column_name, ''), in_flat_view, last_seen_at FROM card_fields ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("read fields: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f load.FieldRow
		var seen string
		if err := rows.Scan(&f.Name, &f.JSONTypes, &f.LastRun, &f.Column, &f.InFlatView, &seen); err != nil {
			return nil, fmt.Errorf("read fields: %w", err)
		}
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
		stale := load.StaleFields(have, cutoff)
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
	rows, err := tx.QueryContext(ctx, `SELECT name, column_name FROM card_fields WHERE in_flat_view = 1 AND column_name IS NOT NULL ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	var fields [][2]string
	for rows.Next() {
		var n, c string
		if err := rows.Scan(&n, &c); err != nil {
			rows.Close()
			return fmt.Errorf("regenerate cards_flat: %w", err)
		}
		fields = append(fields, [2]string{n, c})
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

// flatViewSQL builds CREATE VIEW cards_flat over card_state from (field
// name, column name) pairs, ending with the account column. Field names come
// from the API, so they are quoted as identifiers and string literals. A
// plain name is read with json_extract(data,
// '$."name"'), which works because card data is stored in canonical JSON
// (keys as UTF-8, no needless escapes). A name holding a quote, a backslash
// or a control character cannot be a path label: it is found by the key's
// canonical text in json_each's fullkey, which SQLite 3.40 and later render
// the same way.
func flatViewSQL(fields [][2]string) string {
	var b strings.Builder
	b.WriteString("CREATE VIEW cards_flat AS\nSELECT card_id")
	for _, f := range fields {
		name, column := f[0], f[1]
		b.WriteString(",\n    ")
		if strings.ContainsAny(name, "\"\\") || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) {
			b.WriteString("(SELECT value FROM json_each(card_state.data) WHERE fullkey = " + quoteLiteral(`$."`+canonicalKeyText(name)+`"`) + ")")
		} else {
			b.WriteString("json_extract(data, " + quoteLiteral(`$."`+name+`"`) + ")")
		}
		b.WriteString(" AS " + quoteIdent(column))
	}
	b.WriteString(",\n    removed_at,\n    account\nFROM card_state")
	return b.String()
}

// canonicalKeyText is a key's text inside the quotes of canonical JSON: '"'
// and '\' escaped, control characters as \b \f \n \r \t or \u00xx, all else
// as UTF-8. It must agree with package redact's canonical form.
func canonicalKeyText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

func quoteIdent(s string) string   { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteLiteral(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }
