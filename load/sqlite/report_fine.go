package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// grain is how the report's rows are grouped in time: by the first n
// characters of their stamps (timeFormat), read back by parse; or, with
// runSlot set, by the run that wrote them, placed in a per-run
// load.FineData's slots.
type grain struct {
	n       int
	parse   func(string) time.Time
	runSlot func(run int64) int
}

// runGrain groups by run, for f's slots.
func runGrain(f *load.FineData) grain { return grain{runSlot: f.RunSlot} }

// run is the run id a run grain's key holds.
func (g grain) run(key string) int64 {
	n, _ := strconv.ParseInt(key, 10, 64)
	return n
}

var (
	// dayGrain groups by UTC day.
	dayGrain = grain{n: 10, parse: parseDay}
	// stampGrain groups by stamp (whole seconds), for load.FineData to
	// merge into runs or buckets.
	stampGrain = grain{n: len(timeFormat), parse: parseTime}
)

// key is the SQL of the group of a row by column (its stamp); per run,
// the row's run_id.
func (g grain) key(column string) string {
	if g.runSlot != nil {
		return "run_id"
	}
	return fmt.Sprintf("substr(%s, 1, %d)", column, g.n)
}

// reportFine fills d.Fine (load.PlanFine): the
// balances, statuses and card changes per stamp, merged into its slots.
func reportFine(ctx context.Context, tx *sql.Tx, d *load.ReportData, account, from, to string) error {
	f := load.PlanFine(d)
	if f == nil {
		return nil
	}
	g := stampGrain
	if f.Unit == load.FineRun {
		g = runGrain(f)
	}
	rows, err := balanceRows(ctx, tx, account, from, to, g)
	if err != nil {
		return err
	}
	f.SetBalances(rows)
	tally := f.Tally()
	if err := tallyStatuses(ctx, tx, tally, account, from, to, g); err != nil {
		return err
	}
	f.Statuses, f.StatusCounts = tally.Lists()
	changes, err := changeRows(ctx, tx, account, from, to, g)
	if err != nil {
		return err
	}
	f.AddChanges(changes)
	if f.Unit == load.FineBucket {
		runs, err := runDayRows(ctx, tx, account, from, to, stampGrain)
		if err != nil {
			return err
		}
		f.AddRuns(runs)
	}
	d.Fine = f
	return nil
}

// reportCardSums sums the current cards' balance field by currency field,
// exactly (cardfield.CardSumTally), by the balance field's card_fields type and
// each card's amount_scale, read in tx with the rest: a decimal's minor units from
// card_state.minor (json_extract gives an INTEGER; added in Go, never by
// sum(), which overflows), an integer's from its JSON text.
func reportCardSums(ctx context.Context, tx *sql.Tx, d *load.ReportData, account string) error {
	var kind sql.NullString
	var scale sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT type, scale FROM card_fields WHERE name = ?`, cardfield.BalanceField).Scan(&kind, &scale)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	d.BalanceType = kind.String
	tally := cardfield.NewCardSumTally(kind.String, int(scale.Int64))
	path := `$."` + cardfield.BalanceField + `"`
	err = eachRow(ctx, tx, `SELECT data -> '$.currency', data -> ?, json_extract(minor, ?), amount_scale, count(*) FROM card_state
		WHERE account = ? AND removed_at IS NULL GROUP BY 1, 2, 3, 4`, []any{path, path, account}, func(scan func(...any) error) error {
		var currency, balance, minor sql.NullString
		var scale sql.NullInt64
		var n int64
		if err := scan(&currency, &balance, &minor, &scale, &n); err != nil {
			return err
		}
		var at *int64
		if scale.Valid {
			at = &scale.Int64
		}
		tally.Add(nullPtr(currency), nullPtr(balance), nullPtr(minor), at, n)
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
