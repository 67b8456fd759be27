package load

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/cardsync/cardsync/schema"
)

// columnDoc is one row of column_docs.
type columnDoc struct {
	table, column, description, unit string
}

// wantColumnDocs is column_docs as schema.Objects describes it, in primary
// key order.
func wantColumnDocs() []columnDoc {
	var out []columnDoc
	for _, o := range schema.Objects() {
		if o.Internal {
			continue
		}
		for _, c := range o.Columns {
			out = append(out, columnDoc{o.Name, c.Name, c.Description, c.Unit})
		}
	}
	slices.SortFunc(out, func(a, b columnDoc) int {
		if a.table != b.table {
			if a.table < b.table {
				return -1
			}
			return 1
		}
		switch {
		case a.column < b.column:
			return -1
		case a.column > b.column:
			return 1
		}
		return 0
	})
	return out
}

func storedColumnDocs(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}) ([]columnDoc, error) {
	rows, err := q.QueryContext(ctx, `SELECT table_name, column_name, description, coalesce(unit, '')
		FROM column_docs ORDER BY table_name, column_name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []columnDoc
	for rows.Next() {
		var d columnDoc
		if err := rows.Scan(&d.table, &d.column, &d.description, &d.unit); err != nil {
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
	for _, d := range wantColumnDocs() {
		var unit any
		if d.unit != "" {
			unit = d.unit
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO column_docs (table_name, column_name, description, unit) VALUES (?, ?, ?, ?)`,
			d.table, d.column, d.description, unit); err != nil {
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
	if slices.Equal(got, wantColumnDocs()) {
		return nil
	}
	if err := w.write(ctx, func(tx *sql.Tx) error { return fillColumnDocs(ctx, tx) }); err != nil {
		return err
	}
	w.log.Info("column_docs refreshed", "rows", len(wantColumnDocs()))
	return nil
}
