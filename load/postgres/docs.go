package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
)

// columnDocs is column_docs as this binary describes it (load.ColumnDocs,
// the SQLite warehouse's rows) for the tables and views the database has.
func columnDocs(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}) ([]load.ColumnDoc, error) {
	rows, err := q.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(load.ColumnDocs(), func(d load.ColumnDoc) bool { return !slices.Contains(names, d.Table) }), nil
}

// storedColumnDocs reads column_docs in load.ColumnDocs' order.
func storedColumnDocs(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}) ([]load.ColumnDoc, error) {
	rows, err := q.Query(ctx, `SELECT table_name, column_name, description, coalesce(unit, '')
		FROM column_docs ORDER BY table_name COLLATE "C", column_name COLLATE "C"`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (load.ColumnDoc, error) {
		var d load.ColumnDoc
		err := r.Scan(&d.Table, &d.Column, &d.Description, &d.Unit)
		return d, err
	})
}

// refreshColumnDocs brings column_docs in line with this binary's
// documentation. An up-to-date database costs two reads; otherwise the
// rows are rewritten in one transaction under docsLock, after reading them
// again there, so that replicas opening together (or binaries of two
// versions) write one after the other.
func (w *Warehouse) refreshColumnDocs(ctx context.Context) error {
	want, err := columnDocs(ctx, w.pool)
	if err != nil {
		return fmt.Errorf("read column_docs: %w", err)
	}
	got, err := storedColumnDocs(ctx, w.pool)
	if err != nil {
		return fmt.Errorf("read column_docs: %w", err)
	}
	if slices.Equal(got, want) {
		return nil
	}
	wrote := false
	err = pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(docsLock)); err != nil {
			return err
		}
		if got, err := storedColumnDocs(ctx, tx); err != nil || slices.Equal(got, want) {
			return err
		}
		var tables, columns, descriptions, units []string
		for _, d := range want {
			tables, columns = append(tables, d.Table), append(columns, d.Column)
			descriptions, units = append(descriptions, d.Description), append(units, d.Unit)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM column_docs`); err != nil {
			return err
		}
		wrote = true
		_, err := tx.Exec(ctx, `INSERT INTO column_docs (table_name, column_name, description, unit)
			SELECT t, c, d, nullif(u, '') FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS x(t, c, d, u)`,
			tables, columns, descriptions, units)
		return err
	})
	if err != nil {
		return fmt.Errorf("fill column_docs: %w", err)
	}
	if wrote {
		w.log.Info("column_docs refreshed", "rows", len(want))
	}
	return nil
}
