package sqlite

import (
	"context"
	"database/sql"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/reportrows"
)

// reportChangedCards lists the newest content changes of the period with
// the top-level fields that changed (reportrows.FieldChanges of the stored canonical
// JSON).
func reportChangedCards(ctx context.Context, tx *sql.Tx, d *load.ReportData, account, from, to string) error {
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM card_versions
		WHERE account = ? AND change = 'changed' AND valid_from >= ? AND valid_from <= ?`, account, from, to).Scan(&d.ChangedCardsTotal); err != nil {
		return err
	}
	err := eachRow(ctx, tx, `SELECT v.card_id, v.version, v.valid_from, v.run_id, p.data, v.data
		FROM card_versions v JOIN card_versions p ON p.account = v.account AND p.card_id = v.card_id AND p.version = v.version - 1
		WHERE v.account = ? AND v.change = 'changed' AND v.valid_from >= ? AND v.valid_from <= ?
		ORDER BY v.valid_from DESC, v.card_id, v.version DESC LIMIT ?`, []any{account, from, to, reportrows.ReportCardChanges}, func(scan func(...any) error) error {
		var c load.CardChange
		var at string
		var before, after []byte
		if err := scan(&c.CardID, &c.Version, &at, &c.RunID, &before, &after); err != nil {
			return err
		}
		c.At = parseTime(at)
		c.Fields = reportrows.FieldChanges(before, after)
		d.ChangedCards = append(d.ChangedCards, c)
		return nil
	})
	return err
}
