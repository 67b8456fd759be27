package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
	"github.com/cardsync/cardsync/schema"
)

var _ load.DocsReader = (*Warehouse)(nil)

// WarehouseDocs reads what the warehouse says of itself (load.DocsReader):
// its file, column_docs and the card fields that are columns of
// cards_flat, with card_fields' type, scale and minor_column when the file
// has them (schema 13). It only reads, in one transaction.
func (w *Warehouse) WarehouseDocs(ctx context.Context) (_ schema.WarehouseDocs, err error) {
	defer classify(&err)
	d := schema.WarehouseDocs{Dialect: schema.DialectSQLite, Path: w.path}
	tx, err := w.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return d, fmt.Errorf("warehouse docs: %w", err)
	}
	defer tx.Rollback()
	if d.Columns, err = storedColumnDocs(ctx, tx); err != nil {
		return d, fmt.Errorf("warehouse docs: column_docs: %w", err)
	}
	cols, err := queryStrings(ctx, tx, `SELECT name FROM pragma_table_info('card_fields')`)
	if err != nil {
		return d, fmt.Errorf("warehouse docs: card_fields' columns: %w", err)
	}
	d.Typed = sqlshare.TypedFields(cols)
	if d.Fields, err = flatFields(ctx, tx, d.Typed); err != nil {
		return d, fmt.Errorf("warehouse docs: card_fields: %w", err)
	}
	return d, nil
}

// flatFields reads the card fields that are columns of cards_flat, in
// card_fields' order; typed reads their type, scale and minor_column too.
func flatFields(ctx context.Context, tx *sql.Tx, typed bool) ([]schema.CardField, error) {
	typeCols := `'', NULL, ''`
	if typed {
		typeCols = `coalesce(type, ''), scale, coalesce(minor_column, '')`
	}
	rows, err := tx.QueryContext(ctx, `SELECT name, column_name, json_types, `+typeCols+`
		FROM card_fields WHERE in_flat_view = 1 AND column_name IS NOT NULL ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []schema.CardField
	for rows.Next() {
		var f schema.CardField
		var scale sql.NullInt64
		if err := rows.Scan(&f.Name, &f.Column, &f.JSONTypes, &f.Type, &scale, &f.MinorColumn); err != nil {
			return nil, err
		}
		if scale.Valid {
			s := int(scale.Int64)
			f.Scale = &s
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
