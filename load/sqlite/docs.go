package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/cardsync/cardsync/schema"
)

func storedColumnDocs(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}) ([]schema.ColumnDoc, error) {
	rows, err := q.QueryContext(ctx, `SELECT table_name, column_name, description, coalesce(unit, '')
		FROM column_docs ORDER BY table_name, column_name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []schema.ColumnDoc
	for rows.Next() {
		var d schema.ColumnDoc
		if err := rows.Scan(&d.Table, &d.Column, &d.Description, &d.Unit); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// fillColumnDocs rewrites column_docs from schema.Objects: migration 4's Go
// step, and refreshColumnDocs's when the rows are stale.
func fillColumnDocs(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM column_docs`); err != nil {
		return fmt.Errorf("fill column_docs: %w", err)
	}
	for _, d := range schema.ColumnDocs() {
		var unit any
		if d.Unit != "" {
			unit = d.Unit
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO column_docs (table_name, column_name, description, unit) VALUES (?, ?, ?, ?)`,
			d.Table, d.Column, d.Description, unit); err != nil {
			return fmt.Errorf("fill column_docs: %w", err)
		}
	}
	return nil
}

// refreshColumnDocs brings column_docs in line with this binary's
// documentation after the migrations ran. It writes only when a row differs
// (a newer or older binary described the columns), so an open of an
// up-to-date warehouse reads ~200 rows and writes nothing.
func (w *Warehouse) refreshColumnDocs(ctx context.Context) error {
	got, err := storedColumnDocs(ctx, w.db)
	if err != nil {
		return fmt.Errorf("read column_docs: %w", err)
	}
	if slices.Equal(got, schema.ColumnDocs()) {
		return nil
	}
	if err := w.write(ctx, func(tx *sql.Tx) error { return fillColumnDocs(ctx, tx) }); err != nil {
		return err
	}
	w.log.Info("column_docs refreshed", "rows", len(schema.ColumnDocs()))
	return nil
}
