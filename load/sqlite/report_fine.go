package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cardsync/cardsync/load"
)

// grain is how the report's rows are grouped in time: by the first n
// characters of their stamps (timeFormat), read back by parse.
type grain struct {
	n     int
	parse func(string) time.Time
}

var (
	// dayGrain groups by UTC day.
	dayGrain = grain{10, parseDay}
	// stampGrain groups by stamp (whole seconds), for load.FineData to
	// merge into runs or hours.
	stampGrain = grain{len(timeFormat), parseTime}
)

func (g grain) key(column string) string { return fmt.Sprintf("substr(%s, 1, %d)", column, g.n) }

// reportFine fills d.Fine when the period is short (load.PlanFine): the
// balances, statuses and card changes per stamp, merged into its slots.
func reportFine(ctx context.Context, tx *sql.Tx, d *load.ReportData, account, from, to string) error {
	f := load.PlanFine(d)
	if f == nil {
		return nil
	}
	rows, err := balanceRows(ctx, tx, account, from, to, stampGrain)
	if err != nil {
		return err
	}
	f.SetBalances(rows)
	tally := f.Tally()
	if err := tallyStatuses(ctx, tx, tally, account, from, to, stampGrain); err != nil {
		return err
	}
	f.Statuses, f.StatusCounts = tally.Lists()
	changes, err := changeRows(ctx, tx, account, from, to, stampGrain)
	if err != nil {
		return err
	}
	f.AddChanges(changes)
	d.Fine = f
	return nil
}

// reportCardSums sums the current cards' balance field by currency field,
// exactly (load.CardSumTally), from each field's JSON text: never
// json_extract's REAL.
func reportCardSums(ctx context.Context, tx *sql.Tx, d *load.ReportData, account string) error {
	tally := load.NewCardSumTally()
	err := eachRow(ctx, tx, `SELECT data -> '$.currency', data -> '$.balance', count(*) FROM card_state
		WHERE account = ? AND removed_at IS NULL GROUP BY 1, 2`, []any{account}, func(scan func(...any) error) error {
		var currency, balance sql.NullString
		var n int64
		if err := scan(&currency, &balance, &n); err != nil {
			return err
		}
		tally.Add(nullPtr(currency), nullPtr(balance), n)
		return nil
	})
	if err != nil {
		return err
	}
	d.CardSums, err = tally.Sums()
	return err
}

func nullPtr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}
