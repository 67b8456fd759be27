package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
	"github.com/cardsync/cardsync/schema"
)

var _ load.DocsReader = (*Warehouse)(nil)

// WarehouseDocs reads what the warehouse says of itself (load.DocsReader):
// its database and schema, column_docs and the card fields that are
// columns of cards_flat, with card_fields' type, scale and minor_column
// when the schema has them (migration 10). It only reads, in one
// read-only transaction.
func (w *Warehouse) WarehouseDocs(ctx context.Context) (_ schema.WarehouseDocs, err error) {
	defer classify(&err)
	d := schema.WarehouseDocs{Dialect: schema.DialectPostgres, Schema: w.schema}
	err = pgx.BeginTxFunc(ctx, w.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT current_database()`).Scan(&d.Database); err != nil {
			return fmt.Errorf("database: %w", err)
		}
		docs, err := storedColumnDocs(ctx, tx)
		if err != nil {
			return fmt.Errorf("column_docs: %w", err)
		}
		for _, c := range docs {
			d.Columns = append(d.Columns, schema.ColumnDoc(c))
		}
		rows, err := tx.Query(ctx, `SELECT column_name::text FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = 'card_fields'`)
		if err != nil {
			return fmt.Errorf("card_fields' columns: %w", err)
		}
		cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("card_fields' columns: %w", err)
		}
		d.Typed = sqlshare.TypedFields(cols)
		if d.Fields, err = docFields(ctx, tx, d.Typed); err != nil {
			return fmt.Errorf("card_fields: %w", err)
		}
		return nil
	})
	if err != nil {
		return d, fmt.Errorf("warehouse docs: %w", err)
	}
	return d, nil
}

// docFields reads the card fields that are columns of cards_flat, in the
// order fields first appeared; typed reads their type, scale and
// minor_column too.
func docFields(ctx context.Context, tx pgx.Tx, typed bool) ([]schema.CardField, error) {
	typeCols := `'', NULL::integer, ''`
	if typed {
		typeCols = `coalesce(type, ''), scale::integer, coalesce(minor_column, '')`
	}
	rows, err := tx.Query(ctx, `SELECT name, column_name, json_types, `+typeCols+`
		FROM card_fields WHERE in_flat_view = 1 AND column_name IS NOT NULL
		ORDER BY first_run, first_seen_at, name COLLATE "C"`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (schema.CardField, error) {
		var f schema.CardField
		var scale *int32
		err := r.Scan(&f.Name, &f.Column, &f.JSONTypes, &f.Type, &scale, &f.MinorColumn)
		if scale != nil {
			s := int(*scale)
			f.Scale = &s
		}
		return f, err
	})
}
