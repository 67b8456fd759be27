package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
)

// utcSecond is a timestamptz column at whole seconds, as the SQLite
// warehouse stores its stamps: rows grouped by it are merged into runs or
// hours by load.FineData.
func utcSecond(column string) string { return "date_trunc('second', " + column + ")" }

// fine fills d.Fine when the period is short (load.PlanFine): the
// balances, statuses and card changes per second, merged into its slots.
func (r *reportRead) fine(ctx context.Context) error {
	f := load.PlanFine(r.d)
	if f == nil {
		return nil
	}
	rows, err := r.balanceRows(ctx, utcSecond)
	if err != nil {
		return err
	}
	f.SetBalances(rows)
	tally := f.Tally()
	if err := r.tallyStatuses(ctx, tally, utcSecond); err != nil {
		return err
	}
	f.Statuses, f.StatusCounts = tally.Lists()
	changes, err := r.changeRows(ctx, utcSecond)
	if err != nil {
		return err
	}
	f.AddChanges(changes)
	r.d.Fine = f
	return nil
}

// cardSums sums the current cards' balance field by currency field,
// exactly (load.CardSumTally), from each field's JSON text as jsonb
// writes it.
func (r *reportRead) cardSums(ctx context.Context) error {
	tally := load.NewCardSumTally()
	err := r.each(ctx, `SELECT (data->'currency')::text, (data->'balance')::text, count(*) FROM card_state
		WHERE account = $1 AND removed_at IS NULL GROUP BY 1, 2`, []any{r.account}, func(row pgx.CollectableRow) error {
		var currency, balance *string
		var n int64
		if err := row.Scan(&currency, &balance, &n); err != nil {
			return err
		}
		tally.Add(currency, balance, n)
		return nil
	})
	if err != nil {
		return err
	}
	r.d.CardSums, err = tally.Sums()
	return err
}
