package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/reportrows"
	"github.com/cardsync/cardsync/redact"
)

// ReportData is load.Warehouse.ReportData on PostgreSQL: what a report of
// the period [since, now] shows, read in one REPEATABLE READ READ ONLY
// transaction (a ReadOnly Warehouse serves it while replicas write),
// scoped to the Warehouse's account. It gives the same ReportData as the
// SQLite warehouse for the same history, Path aside (the redacted URL):
// days are UTC days, stamps are compared at whole seconds, amounts are
// the cents and the account_balances view's exact text, durations whole
// seconds, card ids ordered bytewise, and the card documents, stored as
// jsonb, are made canonical again (redact.Policy.JSON) before their fields
// are compared and shown. Where jsonb itself keeps less than SQLite's text
// (a number sent as 1e3 is stored as 1000), the report shows what is
// stored; a status that is a non-integer number shows as jsonb writes it.
func (w *Warehouse) ReportData(ctx context.Context, since, now time.Time) (_ load.ReportData, err error) {
	defer classify(&err)
	d, err := load.NewReportData(w.url, since, now)
	if err != nil {
		return d, err
	}
	// The SQLite warehouse compares its text stamps (whole seconds) to the
	// bounds' text, which drops their fraction: so do these.
	r := reportRead{d: &d, account: w.account, from: since.UTC().Truncate(time.Second), to: now.UTC().Truncate(time.Second),
		canon: redact.NewPolicy(nil)}
	err = pgx.BeginTxFunc(ctx, w.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		r.tx = tx
		steps := []struct {
			what string
			fn   func(context.Context) error
		}{
			{"health", r.health},
			{"balances", r.balances},
			{"latest balances", r.latest},
			{"card statuses", r.statuses},
			{"card changes", r.changeDays},
			{"runs", r.runs},
			{"runs and hours", r.fine},
			{"card sums", r.cardSums},
			{"changed cards", r.changedCards},
			{"rejected cards", r.rejected},
		}
		for _, s := range steps {
			if err := s.fn(ctx); err != nil {
				return fmt.Errorf("%s: %w", s.what, err)
			}
		}
		var err error
		d.LastRuns, err = runsOf(ctx, tx, w.account, reportrows.ReportLastRuns)
		return err
	})
	if err != nil {
		return d, fmt.Errorf("report data: %w", err)
	}
	return d, nil
}

// reportRead is one ReportData read: its transaction, account and bounds.
type reportRead struct {
	tx       pgx.Tx
	d        *load.ReportData
	account  string
	from, to time.Time
	// canon makes stored jsonb canonical JSON text again: built-in rules
	// only, which change nothing of what was stored redacted.
	canon *redact.Policy
}

// each runs query and calls row for each of its rows.
func (r *reportRead) each(ctx context.Context, query string, args []any, row func(pgx.CollectableRow) error) error {
	rows, err := r.tx.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	_, err = pgx.CollectRows(rows, func(cr pgx.CollectableRow) (struct{}, error) { return struct{}{}, row(cr) })
	return err
}

func (r *reportRead) health(ctx context.Context) error {
	d := r.d
	var lastRun *int64
	err := r.tx.QueryRow(ctx, `SELECT
			(SELECT max(run_id) FROM sync_runs WHERE account = $1 AND status = 'succeeded'),
			(SELECT finished_at FROM sync_runs WHERE run_id = (SELECT max(run_id) FROM sync_runs WHERE account = $1 AND status = 'succeeded')),
			(SELECT count(*) FROM card_state WHERE account = $1 AND removed_at IS NULL),
			(SELECT count(*) FROM card_state WHERE account = $1 AND removed_at IS NOT NULL),
			(SELECT count(*) FROM removal_pending WHERE account = $1)`, r.account).
		Scan(&lastRun, &d.LastSuccessAt, &d.CurrentCards, &d.RemovedCards, &d.PendingRemovals)
	if lastRun != nil {
		d.LastSuccessRun = *lastRun
	}
	d.LastSuccessAt = utcPtr(d.LastSuccessAt)
	return err
}

// utcDay is the UTC day of a timestamptz column, as a date (pgx reads it
// as midnight UTC).
func utcDay(column string) string { return "(" + column + " AT TIME ZONE 'UTC')::date" }

// balances downsamples the snapshots of the period to one row per amount
// and day: count, first, min, max, last (cents).
func (r *reportRead) balances(ctx context.Context) error {
	days, err := r.balanceRows(ctx, dayGrain)
	if err != nil {
		return err
	}
	r.d.SetBalances(days)
	return nil
}

// balanceRows reads the balance rows of the period grouped by key.
func (r *reportRead) balanceRows(ctx context.Context, g grain) ([]load.BalanceDay, error) {
	var days []load.BalanceDay
	err := r.each(ctx, `WITH s AS (
			SELECT snapshot_id, taken_at, `+g.key("taken_at")+` AS day,
				balance_minor, cards_balance_minor, available_recharge_balance_minor,
				transfer_amount_minor, reach_amount_minor, authorizations_minor
			FROM account_snapshots WHERE account = $3 AND taken_at >= $1 AND taken_at <= $2
		),
		l AS (
			SELECT day, taken_at, snapshot_id, text 'balance' AS amount, balance_minor AS v FROM s
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
		FROM w GROUP BY amount, day ORDER BY amount COLLATE "C", day`, []any{r.from, r.to, r.account}, func(row pgx.CollectableRow) error {
		var amount string
		var key any
		var n, first, lo, hi, last int64
		if err := row.Scan(&amount, &key, &n, &first, &lo, &hi, &last); err != nil {
			return err
		}
		at, run := g.of(key)
		b := load.NewBalanceDay(amount, at, n, first, lo, hi, last)
		b.Run = run
		days = append(days, b)
		return nil
	})
	return days, err
}

// latest reads the latest snapshot's amounts as the account_balances
// view's exact numeric text ('31337.07', '-0.07', '0.10').
func (r *reportRead) latest(ctx context.Context) error {
	var (
		l       load.LatestBalances
		vals    = make([]*string, len(load.AmountNames()))
		rounded int16
	)
	dst := []any{&l.SnapshotID, &l.TakenAt}
	for i := range vals {
		dst = append(dst, &vals[i])
	}
	dst = append(dst, &l.AppliedCards, &l.AvailableToApply, &rounded)
	err := r.tx.QueryRow(ctx, `SELECT b.snapshot_id, b.taken_at,
			b.balance::text, b.cards_balance::text, b.available_recharge_balance::text,
			b.transfer_amount::text, b.reach_amount::text, b.authorizations::text,
			b.applied_card_count, b.available_to_apply_card_count, s.amounts_rounded
		FROM account_balances b JOIN account_snapshots s USING (snapshot_id) WHERE s.account = $1
		ORDER BY b.taken_at DESC, b.snapshot_id DESC LIMIT 1`, r.account).Scan(dst...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	l.TakenAt = l.TakenAt.UTC()
	for i, name := range load.AmountNames() {
		a := load.NamedAmount{Name: name, Null: vals[i] == nil}
		if vals[i] != nil {
			a.Value = *vals[i]
		}
		l.Amounts = append(l.Amounts, a)
	}
	l.Rounded = rounded == 1
	r.d.Latest = &l
	return nil
}

// statuses counts current cards by their status field at the end of each
// day (load.StatusTally). The status is grouped as jsonb and named in Go
// as the SQLite warehouse's CAST(json_extract(data, '$.status') AS TEXT)
// names it (statusName).
func (r *reportRead) statuses(ctx context.Context) error {
	tally := load.NewStatusTally(r.d.Days)
	if err := r.tallyStatuses(ctx, tally, dayGrain); err != nil {
		return err
	}
	tally.Fill(r.d)
	return nil
}

// tallyStatuses counts the period's card statuses into tally, grouping
// their changes by key.
func (r *reportRead) tallyStatuses(ctx context.Context, tally *load.StatusTally, g grain) error {
	err := r.each(ctx, `SELECT (data->'status')::text, count(*) FROM card_versions
		WHERE account = $2 AND change <> 'removed' AND valid_from < $1 AND (valid_to IS NULL OR valid_to >= $1)
		GROUP BY 1`, []any{r.from, r.account}, func(row pgx.CollectableRow) error {
		var st *string
		var n int64
		if err := row.Scan(&st, &n); err != nil {
			return err
		}
		tally.Start(r.statusName(st), n)
		return nil
	})
	if err != nil {
		return err
	}
	return r.each(ctx, `SELECT day, st::text, sum(n)::bigint FROM (
			SELECT `+g.key("valid_from")+` AS day, data->'status' AS st, 1 AS n FROM card_versions
			WHERE account = $3 AND change <> 'removed' AND valid_from >= $1 AND valid_from <= $2
			UNION ALL
			`+g.endedBy()+`
		) c GROUP BY day, st`, []any{r.from, r.to, r.account}, func(row pgx.CollectableRow) error {
		var key any
		var st *string
		var n int64
		if err := row.Scan(&key, &st, &n); err != nil {
			return err
		}
		if at, run := g.of(key); g.runSlot != nil {
			tally.ChangeSlot(g.runSlot(run), r.statusName(st), n)
		} else {
			tally.Change(at, r.statusName(st), n)
		}
		return nil
	})
}

// statusName is the name SQLite's CAST(json_extract(data, '$.status') AS
// TEXT) gives the status field whose jsonb text is raw (nil: absent): a
// string's value, 1 or 0 for true or false, a number's text, an object's
// or array's canonical JSON, and "(no status)" for null or none.
func (r *reportRead) statusName(raw *string) string {
	if raw == nil || *raw == "null" {
		return "(no status)"
	}
	switch s := *raw; s[0] {
	case '"':
		var v string
		if json.Unmarshal([]byte(s), &v) == nil {
			return v
		}
	case 't':
		return "1"
	case 'f':
		return "0"
	case '{', '[':
		return r.canonical(s)
	}
	return *raw
}

// canonical is doc's canonical JSON text, as the SQLite warehouse stores
// it (doc unchanged if the policy refuses it).
func (r *reportRead) canonical(doc string) string {
	out, _, err := r.canon.JSON([]byte(doc))
	if err != nil {
		return doc
	}
	return string(out)
}

func (r *reportRead) changeDays(ctx context.Context) error {
	rows, err := r.changeRows(ctx, dayGrain)
	r.d.CardChanges = rows
	return err
}

// changeRows counts the period's card versions by change, grouped by key.
func (r *reportRead) changeRows(ctx context.Context, g grain) ([]load.ChangeDay, error) {
	var rows []load.ChangeDay
	err := r.each(ctx, `SELECT `+g.key("valid_from")+` AS day,
			count(*) FILTER (WHERE change = 'new'), count(*) FILTER (WHERE change = 'changed'),
			count(*) FILTER (WHERE change = 'removed'), count(*) FILTER (WHERE change = 'returned')
		FROM card_versions WHERE account = $1 AND valid_from >= $2 AND valid_from <= $3
		GROUP BY day ORDER BY day`, []any{r.account, r.from, r.to}, func(row pgx.CollectableRow) error {
		var c load.ChangeDay
		var key any
		if err := row.Scan(&key, &c.New, &c.Changed, &c.Removed, &c.Returned); err != nil {
			return err
		}
		c.Day, c.Run = g.of(key)
		rows = append(rows, c)
		return nil
	})
	return rows, err
}

// runSeconds is a run's duration in whole seconds, as the SQLite
// warehouse counts it (the difference of the stamps' whole seconds): to
// its end, or to its last heartbeat while it runs (or since it died).
const runSeconds = `greatest(0, floor(extract(epoch FROM coalesce(finished_at, heartbeat_at)))::bigint - floor(extract(epoch FROM started_at))::bigint)`

// runMillis is a run's duration in milliseconds: duration_ms, measured,
// or from the stamps (runSeconds) for a run without it; stampedMillis is
// the latter only, NULL for a run with duration_ms. An abandoned run
// without duration_ms has no known duration (its stamps end at its last
// heartbeat, not when it died): 0 in runMillis, NULL in stampedMillis.
const (
	runMillis     = `coalesce(duration_ms, CASE WHEN status != 'abandoned' THEN 1000 * ` + runSeconds + ` ELSE 0 END)`
	stampedMillis = `CASE WHEN duration_ms IS NULL AND status != 'abandoned' THEN 1000 * ` + runSeconds + ` END`
)

func (r *reportRead) runs(ctx context.Context) error {
	rows, err := r.runDayRows(ctx, dayGrain)
	if err != nil {
		return err
	}
	r.d.RunDays = rows
	var total int64
	for _, d := range rows {
		total += d.Runs
	}
	if total == 0 {
		return nil
	}
	// At whole seconds, as the SQLite warehouse stores it.
	var first time.Time
	if err := r.tx.QueryRow(ctx, `SELECT date_trunc('second', min(started_at)) FROM sync_runs WHERE account = $1 AND started_at >= $2 AND started_at <= $3`,
		r.account, r.from, r.to).Scan(&first); err != nil {
		return err
	}
	first = first.UTC()
	r.d.FirstRunAt = &first
	if total > reportrows.ReportRunPoints {
		return nil
	}
	return r.runPoints(ctx)
}

// runDayRows summarises the period's runs grouped by g (of their start).
func (r *reportRead) runDayRows(ctx context.Context, g grain) ([]load.RunDay, error) {
	var rows []load.RunDay
	err := r.each(ctx, `SELECT `+g.key("started_at")+` AS day, count(*),
			count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status = 'failed'),
			count(*) FILTER (WHERE status = 'interrupted'), count(*) FILTER (WHERE status = 'abandoned'),
			count(*) FILTER (WHERE status = 'running'),
			max(duration_ms), max(`+stampedMillis+`), sum(`+runMillis+`)::bigint,
			sum(rate_limited)::bigint, sum(retries)::bigint, sum(cards_rejected)::bigint, sum(removals_held)::bigint
		FROM sync_runs WHERE account = $1 AND started_at >= $2 AND started_at <= $3
		GROUP BY day ORDER BY day`, []any{r.account, r.from, r.to}, func(row pgx.CollectableRow) error {
		var d load.RunDay
		var key any
		var exact, stamped *int64
		if err := row.Scan(&key, &d.Runs, &d.Succeeded, &d.Failed, &d.Interrupted, &d.Abandoned, &d.Running,
			&exact, &stamped, &d.TotalMillis, &d.RateLimited, &d.Retries, &d.Rejected, &d.RemovalsHeld); err != nil {
			return err
		}
		d.SetLongest(exact, stamped)
		d.Day, _ = g.of(key)
		rows = append(rows, d)
		return nil
	})
	return rows, err
}

// runPoints lists each run of the period.
func (r *reportRead) runPoints(ctx context.Context) error {
	return r.each(ctx, `SELECT run_id, started_at, duration_ms, `+runSeconds+`, status, rate_limited, cards_rejected, removals_held
		FROM sync_runs WHERE account = $1 AND started_at >= $2 AND started_at <= $3 ORDER BY run_id`, []any{r.account, r.from, r.to}, func(row pgx.CollectableRow) error {
		var p load.RunPoint
		var exact *int64
		var secs int64
		if err := row.Scan(&p.ID, &p.StartedAt, &exact, &secs, &p.Status, &p.RateLimited, &p.Rejected, &p.RemovalsHeld); err != nil {
			return err
		}
		p.SetDuration(exact, secs)
		p.StartedAt = p.StartedAt.UTC()
		r.d.RunPoints = append(r.d.RunPoints, p)
		return nil
	})
}

// changedCards lists the newest content changes of the period with the
// fields that changed, from the two versions' canonical JSON.
func (r *reportRead) changedCards(ctx context.Context) error {
	if err := r.tx.QueryRow(ctx, `SELECT count(*) FROM card_versions
		WHERE account = $1 AND change = 'changed' AND valid_from >= $2 AND valid_from <= $3`, r.account, r.from, r.to).Scan(&r.d.ChangedCardsTotal); err != nil {
		return err
	}
	return r.each(ctx, `SELECT v.card_id, v.version, v.valid_from, v.run_id, p.data::text, v.data::text
		FROM card_versions v JOIN card_versions p ON p.account = v.account AND p.card_id = v.card_id AND p.version = v.version - 1
		WHERE v.account = $1 AND v.change = 'changed' AND v.valid_from >= $2 AND v.valid_from <= $3
		ORDER BY v.valid_from DESC, v.card_id COLLATE "C", v.version DESC LIMIT $4`, []any{r.account, r.from, r.to, reportrows.ReportCardChanges}, func(row pgx.CollectableRow) error {
		var c load.CardChange
		var before, after string
		if err := row.Scan(&c.CardID, &c.Version, &c.At, &c.RunID, &before, &after); err != nil {
			return err
		}
		c.At = c.At.UTC()
		c.Fields = reportrows.FieldChanges([]byte(r.canonical(before)), []byte(r.canonical(after)))
		r.d.ChangedCards = append(r.d.ChangedCards, c)
		return nil
	})
}

// rejected lists the items set aside during the period, their data (text,
// as stored) cut to ReportValueBytes characters, as SQLite's substr does.
func (r *reportRead) rejected(ctx context.Context) error {
	if err := r.tx.QueryRow(ctx, `SELECT count(*) FROM rejected_cards WHERE account = $1 AND last_rejected_at >= $2 AND rejected_at <= $3`,
		r.account, r.from, r.to).Scan(&r.d.RejectedTotal); err != nil {
		return err
	}
	return r.each(ctx, `SELECT rejected_id, coalesce(card_id, ''), reason, times, rejected_at, last_rejected_at,
			substr(data, 1, $1), length(data) > $1
		FROM rejected_cards WHERE account = $2 AND last_rejected_at >= $3 AND rejected_at <= $4
		ORDER BY last_rejected_at DESC, rejected_id DESC LIMIT $5`, []any{reportrows.ReportValueBytes, r.account, r.from, r.to, reportrows.ReportRejected}, func(row pgx.CollectableRow) error {
		var it load.RejectedItem
		if err := row.Scan(&it.ID, &it.CardID, &it.Reason, &it.Times, &it.FirstAt, &it.LastAt, &it.Data, &it.DataTruncated); err != nil {
			return err
		}
		it.FirstAt, it.LastAt = it.FirstAt.UTC(), it.LastAt.UTC()
		r.d.Rejected = append(r.d.Rejected, it)
		return nil
	})
}
