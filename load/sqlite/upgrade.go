package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/cardsync/cardsync/load/internal/cardfield"
	"github.com/cardsync/cardsync/redact"
)

// upgradeHardening is migration 2's Go step. Release 1 stored card JSON with
// a narrower redactor (card numbers split by no-break spaces or slashes, in
// object keys, or as JSON numbers under ordinary keys went through; Luhn-
// valid timestamps were masked; flags such as pin_verified were dropped) and
// with the server's escapes (PHP's \/ and \u00e9, which Debian's sqlite3
// 3.40 cannot match in a path). It re-applies the current policy, in
// canonical JSON, to every stored document (cards, card_versions,
// account_snapshots.raw), masks card numbers in stored error text and field
// names and names every field's cards_flat column. What the old policy
// removed cannot come back.
func (w *Warehouse) upgradeHardening(ctx context.Context, tx *sql.Tx) error {
	policy := func(data string) (string, error) {
		out, _, err := w.policy.JSON([]byte(data))
		if err != nil {
			out, _, err = w.policy.JSON([]byte(strings.ToValidUTF8(data, "\uFFFD")))
		}
		return string(out), err
	}
	text := func(s string) (string, error) { return redact.PANs(s), nil }
	for _, t := range []struct {
		table, column string
		keys          []string
		fn            func(string) (string, error)
	}{
		{"cards", "data", []string{"card_id"}, policy},
		{"card_versions", "data", []string{"card_id", "version"}, policy},
		{"account_snapshots", "raw", []string{"snapshot_id"}, policy},
		{"sync_runs", "error", []string{"run_id"}, text},
	} {
		if err := w.rewriteColumn(ctx, tx, t.table, t.column, t.keys, t.fn); err != nil {
			return err
		}
	}
	// Field names are keys of stored documents: a card number used as a
	// top-level key was recorded as it was.
	names, err := queryStrings(ctx, tx, `SELECT name FROM card_fields ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("upgrade card_fields: %w", err)
	}
	used := map[string]bool{}
	kept := map[string]bool{}
	inView := 0
	for _, n := range names {
		masked := redact.PANs(n)
		if masked != n {
			if kept[masked] {
				if _, err := tx.ExecContext(ctx, `DELETE FROM card_fields WHERE name = ?`, n); err != nil {
					return fmt.Errorf("upgrade card_fields: %w", err)
				}
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET name = ? WHERE name = ?`, masked, n); err != nil {
				return fmt.Errorf("upgrade card_fields: %w", err)
			}
		}
		kept[masked] = true
		var column any
		flat := inView < cardfield.MaxFlatFields
		if flat {
			column = cardfield.ColumnName(masked, used, maxColumnName)
			inView++
		}
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET column_name = ?, in_flat_view = ? WHERE name = ?`,
			column, boolInt(flat), masked); err != nil {
			return fmt.Errorf("upgrade card_fields: %w", err)
		}
	}
	return nil
}

// rewriteColumn applies fn to every non-NULL value of table.column and
// updates the rows whose value changes. A value fn refuses is left as it
// was, with a warning.
func (w *Warehouse) rewriteColumn(ctx context.Context, tx *sql.Tx, table, column string, keys []string, fn func(string) (string, error)) error {
	type row struct {
		key  []any
		text string
	}
	var changed []row
	rows, err := tx.QueryContext(ctx, fmt.Sprintf(`SELECT %s, %s FROM %s WHERE %s IS NOT NULL`,
		strings.Join(keys, ", "), column, table, column))
	if err != nil {
		return fmt.Errorf("upgrade %s.%s: %w", table, column, err)
	}
	for rows.Next() {
		key := make([]any, len(keys))
		dst := make([]any, len(keys)+1)
		for i := range key {
			dst[i] = &key[i]
		}
		var s string
		dst[len(keys)] = &s
		if err := rows.Scan(dst...); err != nil {
			rows.Close()
			return fmt.Errorf("upgrade %s.%s: %w", table, column, err)
		}
		out, err := fn(s)
		if err != nil {
			w.log.Warn("upgrade: a stored value cannot be redacted; left as it was", "table", table, "key", key, "err", err)
			continue
		}
		if out != s {
			changed = append(changed, row{key, out})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("upgrade %s.%s: %w", table, column, err)
	}
	where := make([]string, len(keys))
	for i, k := range keys {
		where[i] = k + " = ?"
	}
	update := fmt.Sprintf(`UPDATE %s SET %s = ? WHERE %s`, table, column, strings.Join(where, " AND "))
	for _, r := range changed {
		if _, err := tx.ExecContext(ctx, update, append([]any{r.text}, r.key...)...); err != nil {
			return fmt.Errorf("upgrade %s.%s: %w", table, column, err)
		}
	}
	if len(changed) > 0 {
		w.log.Info("upgrade: redaction policy re-applied", "table", table, "column", column, "rows_changed", len(changed))
	}
	return nil
}

// upgradeAccounts is migration 5's Go step: column_docs learns the new
// columns at once, and a card field whose cards_flat column was called
// account (case-insensitively) gets another name (account_2, ...): the
// view, generated after the migrations, gives its own column that name.
func upgradeAccounts(ctx context.Context, tx *sql.Tx) error {
	used := map[string]bool{}
	var clash []string
	err := eachRow(ctx, tx, `SELECT name, column_name FROM card_fields WHERE column_name IS NOT NULL ORDER BY rowid`, nil,
		func(scan func(...any) error) error {
			var name, column string
			if err := scan(&name, &column); err != nil {
				return err
			}
			if strings.EqualFold(column, "account") {
				clash = append(clash, name)
			} else {
				used[strings.ToLower(column)] = true
			}
			return nil
		})
	if err != nil {
		return fmt.Errorf("upgrade card_fields: %w", err)
	}
	for _, name := range clash {
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET column_name = ? WHERE name = ?`, cardfield.ColumnName(name, used, maxColumnName), name); err != nil {
			return fmt.Errorf("upgrade card_fields: %w", err)
		}
	}
	return fillColumnDocs(ctx, tx)
}
