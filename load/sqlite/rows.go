package sqlite

import (
	"context"
	"database/sql"
)

// rowsQueryer is what *sql.DB, *sql.Conn and *sql.Tx offer for queries
// that return rows.
type rowsQueryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// eachRow runs query through q and calls row for every result row with the
// row's Scan; it closes the rows and returns the first error of the query,
// of row or of the iteration.
func eachRow(ctx context.Context, q rowsQueryer, query string, args []any, row func(scan func(dest ...any) error) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// queryStrings returns the first column of every row of query.
func queryStrings(ctx context.Context, q rowsQueryer, query string, args ...any) ([]string, error) {
	var out []string
	err := eachRow(ctx, q, query, args, func(scan func(...any) error) error {
		var s string
		if err := scan(&s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	return out, err
}
