package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// grain is how the report's rows are grouped in time: by key of their
// stamp column, or, with runSlot set, by the run that wrote them, placed
// in a per-run load.FineData's slots.
type grain struct {
	key     func(column string) string
	runSlot func(run int64) int
}

var (
	dayGrain   = grain{key: utcDay}
	stampGrain = grain{key: utcSecond}
)

// runGrain groups by run, for f's slots.
func runGrain(f *load.FineData) grain {
	return grain{key: func(string) string { return "run_id" }, runSlot: f.RunSlot}
}

// of reads a row's key: a stamp (date or timestamptz, in UTC) or a run.
func (g grain) of(key any) (time.Time, int64) {
	switch k := key.(type) {
	case time.Time:
		return k.UTC(), 0
	case int64:
		return time.Time{}, k
	}
	return time.Time{}, 0
}

// endedBy is the SQL of the -1 rows of tallyStatuses: the versions whose
// time ended in the period ($1 to $2, account $3), grouped by g; per run,
// by the run of the version that followed.
func (g grain) endedBy() string {
	if g.runSlot != nil {
		return `SELECT n.run_id, v.data->'status', -1 FROM card_versions v
			JOIN card_versions n ON n.account = v.account AND n.card_id = v.card_id AND n.version = v.version + 1
			WHERE v.account = $3 AND v.change <> 'removed' AND v.valid_to >= $1 AND v.valid_to <= $2`
	}
	return `SELECT ` + g.key("valid_to") + `, data->'status', -1 FROM card_versions
			WHERE account = $3 AND change <> 'removed' AND valid_to >= $1 AND valid_to <= $2`
}

// utcSecond is a timestamptz column at whole seconds, as the SQLite
// warehouse stores its stamps: rows grouped by it are merged into runs or
// buckets by load.FineData.
func utcSecond(column string) string { return "date_trunc('second', " + column + ")" }

// fine fills d.Fine (load.PlanFine): the
// balances, statuses and card changes per second, merged into its slots.
func (r *reportRead) fine(ctx context.Context) error {
	f := load.PlanFine(r.d)
	if f == nil {
		return nil
	}
	g := stampGrain
	if f.Unit == load.FineRun {
		g = runGrain(f)
	}
	rows, err := r.balanceRows(ctx, g)
	if err != nil {
		return err
	}
	f.SetBalances(rows)
	tally := f.Tally()
	if err := r.tallyStatuses(ctx, tally, g); err != nil {
		return err
	}
	f.Statuses, f.StatusCounts = tally.Lists()
	changes, err := r.changeRows(ctx, g)
	if err != nil {
		return err
	}
	f.AddChanges(changes)
	if f.Unit == load.FineBucket {
		runs, err := r.runDayRows(ctx, stampGrain)
		if err != nil {
			return err
		}
		f.AddRuns(runs)
	}
	r.d.Fine = f
	return nil
}

// cardSums sums the current cards' balance field by currency field,
// exactly (cardfield.CardSumTally), by the balance field's card_fields type and
// each card's amount_scale, read in the report's transaction: a decimal's minor units from
// card_state.minor (as text, added in Go), an integer's from its JSON text
// as jsonb writes it.
func (r *reportRead) cardSums(ctx context.Context) error {
	var kind *string
	var scale *int64
	err := r.tx.QueryRow(ctx, `SELECT type, scale FROM card_fields WHERE name = $1`, cardfield.BalanceField).Scan(&kind, &scale)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if kind != nil {
		r.d.BalanceType = *kind
	}
	var sc int
	if scale != nil {
		sc = int(*scale)
	}
	tally := cardfield.NewCardSumTally(r.d.BalanceType, sc)
	err = r.each(ctx, `SELECT (data->'currency')::text, (data->$2::text)::text, minor->>$2::text, amount_scale::bigint, count(*) FROM card_state
		WHERE account = $1 AND removed_at IS NULL GROUP BY 1, 2, 3, 4`, []any{r.account, cardfield.BalanceField}, func(row pgx.CollectableRow) error {
		var currency, balance, minor *string
		var scale *int64
		var n int64
		if err := row.Scan(&currency, &balance, &minor, &scale, &n); err != nil {
			return err
		}
		tally.Add(currency, balance, minor, scale, n)
		return nil
	})
	if err != nil {
		return err
	}
	r.d.CardSums, err = tally.Sums()
	return err
}
