package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"github.com/cardsync/cardsync/schema"
)

// ownViewName finds the names of the views schema.Views creates.
var ownViewName = regexp.MustCompile(`(?i)CREATE\s+VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?"?(\w+)`)

// ownViews are the names of cardsync's views, lower-cased: schema.Views'
// and cards_flat (every release's views had these names).
func ownViews() map[string]bool {
	own := map[string]bool{"cards_flat": true}
	for _, m := range ownViewName.FindAllStringSubmatch(schema.Views, -1) {
		own[strings.ToLower(m[1])] = true
	}
	return own
}

// userView is a view of the file that is not cardsync's: an analyst's.
type userView struct{ name, sql string }

// userViews reads the file's views that are not cardsync's, in the order
// they were created, before a migration drops every view.
func userViews(ctx context.Context, tx *sql.Tx) ([]userView, error) {
	own := ownViews()
	var out []userView
	err := eachRow(ctx, tx, `SELECT name, sql FROM sqlite_schema WHERE type = 'view' ORDER BY rowid`, nil, func(scan func(...any) error) error {
		var v userView
		if err := scan(&v.name, &v.sql); err != nil {
			return err
		}
		if !own[strings.ToLower(v.name)] {
			out = append(out, v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read views: %w", err)
	}
	return out, nil
}

// restoreUserViews creates the analysts' views again once a migration has
// made cardsync's, each in a savepoint: a view the new schema cannot hold
// (a column gone) is left out with a warning, never a failed migration.
func (w *Warehouse) restoreUserViews(ctx context.Context, tx *sql.Tx, views []userView) error {
	for _, v := range views {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT user_view"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, v.sql); err != nil {
			w.log.Warn("a view of the file could not be made again after the migration; create it anew", "view", v.name, "err", err)
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO user_view"); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, "RELEASE user_view"); err != nil {
			return err
		}
	}
	return nil
}
