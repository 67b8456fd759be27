package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/reportrows"
)

// load.ReportData reads what a report of the period [since, now] shows. It only
// reads, in one transaction, so a read-only warehouse (OpenReadOnly) serves
// it while the worker writes.
func (w *Warehouse) ReportData(ctx context.Context, since, now time.Time) (_ load.ReportData, err error) {
	defer classify(&err)
	d, err := load.NewReportData(w.path, since, now)
	if err != nil {
		return d, err
	}
	tx, err := w.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return d, fmt.Errorf("report data: %w", err)
	}
	defer tx.Rollback()
	// Every step reads the rows of the Warehouse's account (a) only.
	from, to, a := formatTime(since), formatTime(now), w.account
	steps := []struct {
		what string
		fn   func() error
	}{
		{"health", func() error { return reportHealth(ctx, tx, &d, a) }},
		{"balances", func() error { return reportBalances(ctx, tx, &d, a, from, to) }},
		{"latest balances", func() error { return reportLatest(ctx, tx, &d, a) }},
		{"card statuses", func() error { return reportStatuses(ctx, tx, &d, a, from, to) }},
		{"card changes", func() error { return reportChangeDays(ctx, tx, &d, a, from, to) }},
		{"runs", func() error { return reportRuns(ctx, tx, &d, a, from, to) }},
		{"runs and hours", func() error { return reportFine(ctx, tx, &d, a, from, to) }},
		{"card sums", func() error { return reportCardSums(ctx, tx, &d, a) }},
		{"changed cards", func() error { return reportChangedCards(ctx, tx, &d, a, from, to) }},
		{"rejected cards", func() error { return reportRejected(ctx, tx, &d, a, from, to) }},
	}
	for _, s := range steps {
		if err := s.fn(); err != nil {
			return d, fmt.Errorf("report data: %s: %w", s.what, err)
		}
	}
	if d.LastRuns, err = runs(ctx, tx, a, reportrows.ReportLastRuns); err != nil {
		return d, fmt.Errorf("report data: %w", err)
	}
	return d, nil
}

func reportHealth(ctx context.Context, tx *sql.Tx, d *load.ReportData, account string) error {
	var lastSuccess sql.NullString
	var lastRun sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT
			(SELECT max(run_id) FROM sync_runs WHERE account = ?1 AND status = 'succeeded'),
			(SELECT finished_at FROM sync_runs WHERE run_id = (SELECT max(run_id) FROM sync_runs WHERE account = ?1 AND status = 'succeeded')),
			(SELECT count(*) FROM card_state WHERE account = ?1 AND removed_at IS NULL),
			(SELECT count(*) FROM card_state WHERE account = ?1 AND removed_at IS NOT NULL),
			(SELECT count(*) FROM removal_pending WHERE account = ?1)`, account).
		Scan(&lastRun, &lastSuccess, &d.CurrentCards, &d.RemovedCards, &d.PendingRemovals)
	d.LastSuccessRun = lastRun.Int64
	d.LastSuccessAt = parseNullTime(lastSuccess)
	return err
}

// reportBalances downsamples the snapshots of the period to one row per
// amount and day: count, first, min, max, last (cents), with the exact text
// of each (the views' formatting, done by SQLite on integers).
func reportBalances(ctx context.Context, tx *sql.Tx, d *load.ReportData, account, from, to string) error {
	days, err := balanceRows(ctx, tx, account, from, to, dayGrain)
	if err != nil {
		return err
	}
	d.SetBalances(days)
	return nil
}

// balanceRows reads the balance rows of the period grouped by g.
func balanceRows(ctx context.Context, tx *sql.Tx, account, from, to string, g grain) ([]load.BalanceDay, error) {
	var days []load.BalanceDay
	err := eachRow(ctx, tx, `WITH s AS (
			SELECT snapshot_id, taken_at, `+g.key("taken_at")+` AS day,
				balance_minor, cards_balance_minor, available_recharge_balance_minor,
				transfer_amount_minor, reach_amount_minor, authorizations_minor
			FROM account_snapshots WHERE account = ?3 AND taken_at >= ?1 AND taken_at <= ?2
		),
		l AS (
			SELECT day, taken_at, snapshot_id, 'balance' AS amount, balance_minor AS v FROM s
			UNION ALL SELECT day, taken_at, snapshot_id, 'cards_balance', cards_balance_minor FROM s
			UNION ALL SELECT day, taken_at, snapshot_id, 'available_recharge_balance', available_recharge_balance_minor FROM s
			UNION ALL SELECT day, taken_at, snapshot_id, 'transfer_amount', transfer_amount_minor FROM s
			UNION ALL SELECT day, taken_at, snapshot_id, 'reach_amount', reach_amount_minor FROM s
			UNION ALL SELECT day, taken_at, snapshot_id, 'authorizations', authorizations_minor FROM s
		),
		w AS (
			SELECT amount, day, v,
				first_value(v) OVER win AS first_v,
				last_value(v) OVER win AS last_v
			FROM l WHERE v IS NOT NULL
			WINDOW win AS (PARTITION BY amount, day ORDER BY taken_at, snapshot_id
				ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
		)
		SELECT amount, day, count(*), min(first_v), min(v), max(v), min(last_v)
		FROM w GROUP BY amount, day ORDER BY amount, day`, []any{from, to, account}, func(scan func(...any) error) error {
		var amount, day string
		var n, first, lo, hi, last int64
		if err := scan(&amount, &day, &n, &first, &lo, &hi, &last); err != nil {
			return err
		}
		if g.runSlot != nil {
			b := load.NewBalanceDay(amount, time.Time{}, n, first, lo, hi, last)
			b.Run = g.run(day)
			days = append(days, b)
			return nil
		}
		days = append(days, load.NewBalanceDay(amount, g.parse(day), n, first, lo, hi, last))
		return nil
	})
	return days, err
}

func reportLatest(ctx context.Context, tx *sql.Tx, d *load.ReportData, account string) error {
	var (
		l       load.LatestBalances
		takenAt string
		vals    = make([]sql.NullString, len(load.AmountNames()))
		applied sql.NullInt64
		avail   sql.NullInt64
		rounded int
	)
	dst := []any{&l.SnapshotID, &takenAt}
	for i := range vals {
		dst = append(dst, &vals[i])
	}
	dst = append(dst, &applied, &avail, &rounded)
	err := tx.QueryRowContext(ctx, `SELECT b.snapshot_id, b.taken_at,
			b.balance, b.cards_balance, b.available_recharge_balance, b.transfer_amount, b.reach_amount, b.authorizations,
			b.applied_card_count, b.available_to_apply_card_count, s.amounts_rounded
		FROM account_balances b JOIN account_snapshots s USING (snapshot_id) WHERE s.account = ?
		ORDER BY b.taken_at DESC, b.snapshot_id DESC LIMIT 1`, account).Scan(dst...)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return err
	}
	l.TakenAt = parseTime(takenAt)
	for i, name := range load.AmountNames() {
		l.Amounts = append(l.Amounts, load.NamedAmount{Name: name, Value: vals[i].String, Null: !vals[i].Valid})
	}
	if applied.Valid {
		l.AppliedCards = &applied.Int64
	}
	if avail.Valid {
		l.AvailableToApply = &avail.Int64
	}
	l.Rounded = rounded == 1
	d.Latest = &l
	return nil
}

// reportStatuses counts current cards by their status field at the end of
// each day: the count at the start of the period, then a +1 for each
// version that starts on a day and a -1 for each that ends, per status.
func reportStatuses(ctx context.Context, tx *sql.Tx, d *load.ReportData, account, from, to string) error {
	tally := load.NewStatusTally(d.Days)
	if err := tallyStatuses(ctx, tx, tally, account, from, to, dayGrain); err != nil {
		return err
	}
	tally.Fill(d)
	return nil
}

// tallyStatuses counts the period's card statuses into tally, grouping
// their changes by g.
func tallyStatuses(ctx context.Context, tx *sql.Tx, tally *load.StatusTally, account, from, to string, g grain) error {
	status := statusOf("data")
	err := eachRow(ctx, tx, `SELECT `+status+`, count(*) FROM card_versions
		WHERE account = ?2 AND change != 'removed' AND valid_from < ?1 AND (valid_to IS NULL OR valid_to >= ?1)
		GROUP BY 1`, []any{from, account}, func(scan func(...any) error) error {
		var st string
		var n int64
		if err := scan(&st, &n); err != nil {
			return err
		}
		tally.Start(st, n)
		return nil
	})
	if err != nil {
		return err
	}
	return eachRow(ctx, tx, `SELECT day, st, sum(n) FROM (
			SELECT `+g.key("valid_from")+` AS day, `+status+` AS st, 1 AS n FROM card_versions
			WHERE account = ?3 AND change != 'removed' AND valid_from >= ?1 AND valid_from <= ?2
			UNION ALL
			`+endedBy(g)+`
		) GROUP BY day, st ORDER BY day, st`, []any{from, to, account}, func(scan func(...any) error) error {
		var day, st string
		var n int64
		if err := scan(&day, &st, &n); err != nil {
			return err
		}
		if g.runSlot != nil {
			tally.ChangeSlot(g.runSlot(g.run(day)), st, n)
		} else {
			tally.Change(g.parse(day), st, n)
		}
		return nil
	})
}

func reportChangeDays(ctx context.Context, tx *sql.Tx, d *load.ReportData, account, from, to string) error {
	rows, err := changeRows(ctx, tx, account, from, to, dayGrain)
	d.CardChanges = rows
	return err
}

// changeRows counts the period's card versions by change, grouped by g.
func changeRows(ctx context.Context, tx *sql.Tx, account, from, to string, g grain) ([]load.ChangeDay, error) {
	var rows []load.ChangeDay
	err := eachRow(ctx, tx, `SELECT `+g.key("valid_from")+` AS day,
			sum(change = 'new'), sum(change = 'changed'), sum(change = 'removed'), sum(change = 'returned')
		FROM card_versions WHERE account = ? AND valid_from >= ? AND valid_from <= ?
		GROUP BY day ORDER BY day`, []any{account, from, to}, func(scan func(...any) error) error {
		var c load.ChangeDay
		var day string
		if err := scan(&day, &c.New, &c.Changed, &c.Removed, &c.Returned); err != nil {
			return err
		}
		if g.runSlot != nil {
			c.Run = g.run(day)
		} else {
			c.Day = g.parse(day)
		}
		rows = append(rows, c)
		return nil
	})
	return rows, err
}

// runSeconds is a run's duration: to its end, or to its last heartbeat
// while it runs (or since it died).
const runSeconds = `max(0, CAST(strftime('%s', coalesce(finished_at, heartbeat_at)) AS INTEGER) - CAST(strftime('%s', started_at) AS INTEGER))`

// runMillis is a run's duration in milliseconds: duration_ms, measured,
// or from the stamps (runSeconds) for a run without it; stampedMillis is
// the latter only, NULL for a run with duration_ms. An abandoned run
// without duration_ms has no known duration (its stamps end at its last
// heartbeat, not when it died): 0 in runMillis, NULL in stampedMillis.
const (
	runMillis     = `coalesce(duration_ms, CASE WHEN status != 'abandoned' THEN 1000 * ` + runSeconds + ` ELSE 0 END)`
	stampedMillis = `CASE WHEN duration_ms IS NULL AND status != 'abandoned' THEN 1000 * ` + runSeconds + ` END`
)

func reportRuns(ctx context.Context, tx *sql.Tx, d *load.ReportData, account, from, to string) error {
	rows, err := runDayRows(ctx, tx, account, from, to, dayGrain)
	if err != nil {
		return err
	}
	d.RunDays = rows
	var total int64
	for _, r := range rows {
		total += r.Runs
	}
	if total == 0 {
		return nil
	}
	var first string
	if err := tx.QueryRowContext(ctx, `SELECT min(started_at) FROM sync_runs WHERE account = ? AND started_at >= ? AND started_at <= ?`,
		account, from, to).Scan(&first); err != nil {
		return err
	}
	at := parseTime(first)
	d.FirstRunAt = &at
	if total > reportrows.ReportRunPoints {
		return nil
	}
	return runPoints(ctx, tx, d, account, from, to)
}

// runDayRows summarises the period's runs grouped by g (of their start).
func runDayRows(ctx context.Context, tx *sql.Tx, account, from, to string, g grain) ([]load.RunDay, error) {
	var rows []load.RunDay
	err := eachRow(ctx, tx, `SELECT `+g.key("started_at")+` AS day, count(*),
			sum(status = 'succeeded'), sum(status = 'failed'), sum(status = 'interrupted'),
			sum(status = 'abandoned'), sum(status = 'running'),
			max(duration_ms), max(`+stampedMillis+`), sum(`+runMillis+`),
			sum(rate_limited), sum(retries), sum(cards_rejected), sum(removals_held)
		FROM sync_runs WHERE account = ? AND started_at >= ? AND started_at <= ?
		GROUP BY day ORDER BY day`, []any{account, from, to}, func(scan func(...any) error) error {
		var r load.RunDay
		var day string
		var exact, stamped *int64
		if err := scan(&day, &r.Runs, &r.Succeeded, &r.Failed, &r.Interrupted, &r.Abandoned, &r.Running,
			&exact, &stamped, &r.TotalMillis, &r.RateLimited, &r.Retries, &r.Rejected, &r.RemovalsHeld); err != nil {
			return err
		}
		r.SetLongest(exact, stamped)
		r.Day = g.parse(day)
		rows = append(rows, r)
		return nil
	})
	return rows, err
}

// runPoints lists each run of the period.
func runPoints(ctx context.Context, tx *sql.Tx, d *load.ReportData, account, from, to string) error {
	return eachRow(ctx, tx, `SELECT run_id, started_at, duration_ms, `+runSeconds+`, status, rate_limited, cards_rejected, removals_held
		FROM sync_runs WHERE account = ? AND started_at >= ? AND started_at <= ? ORDER BY run_id`, []any{account, from, to}, func(scan func(...any) error) error {
		var p load.RunPoint
		var started string
		var exact *int64
		var secs int64
		if err := scan(&p.ID, &started, &exact, &secs, &p.Status, &p.RateLimited, &p.Rejected, &p.RemovalsHeld); err != nil {
			return err
		}
		p.SetDuration(exact, secs)
		p.StartedAt = parseTime(started)
		d.RunPoints = append(d.RunPoints, p)
		return nil
	})
}

func reportRejected(ctx context.Context, tx *sql.Tx, d *load.ReportData, account, from, to string) error {
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM rejected_cards WHERE account = ? AND last_rejected_at >= ? AND rejected_at <= ?`,
		account, from, to).Scan(&d.RejectedTotal); err != nil {
		return err
	}
	err := eachRow(ctx, tx, `SELECT rejected_id, coalesce(card_id, ''), reason, times, rejected_at, last_rejected_at,
			substr(data, 1, ?), length(data) > ?
		FROM rejected_cards WHERE account = ? AND last_rejected_at >= ? AND rejected_at <= ?
		ORDER BY last_rejected_at DESC, rejected_id DESC LIMIT ?`, []any{reportrows.ReportValueBytes, reportrows.ReportValueBytes, account, from, to, reportrows.ReportRejected}, func(scan func(...any) error) error {
		var r load.RejectedItem
		var first, last string
		if err := scan(&r.ID, &r.CardID, &r.Reason, &r.Times, &first, &last, &r.Data, &r.DataTruncated); err != nil {
			return err
		}
		r.FirstAt, r.LastAt = parseTime(first), parseTime(last)
		d.Rejected = append(d.Rejected, r)
		return nil
	})
	return err
}

func parseDay(s string) time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return t
}

// statusOf is the SQL of the status of the card version whose data is
// column, as the report names it.
func statusOf(column string) string {
	return `coalesce(CAST(json_extract(` + column + `, '$.status') AS TEXT), '(no status)')`
}

// endedBy is the SQL of the -1 rows of tallyStatuses: the versions whose
// time ended in the period (?1 to ?2, account ?3), grouped by g; per run,
// by the run of the version that followed.
func endedBy(g grain) string {
	if g.runSlot != nil {
		return `SELECT n.run_id, ` + statusOf("v.data") + `, -1 FROM card_versions v
			JOIN card_versions n ON n.account = v.account AND n.card_id = v.card_id AND n.version = v.version + 1
			WHERE v.account = ?3 AND v.change != 'removed' AND v.valid_to >= ?1 AND v.valid_to <= ?2`
	}
	return `SELECT ` + g.key("valid_to") + `, ` + statusOf("data") + `, -1 FROM card_versions
			WHERE account = ?3 AND change != 'removed' AND valid_to >= ?1 AND valid_to <= ?2`
}
