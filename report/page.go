package report

import (
	"context"
	"fmt"
	"html/template"
	"strconv"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/redact"
)

// maxStatuses is how many card statuses get a line of their own; the rest
// share one ("other").
const maxStatuses = 6

// maxFieldsShown is how many changed fields a changed card lists.
const maxFieldsShown = 8

// page is what the template shows.
type page struct {
	// Account names the account shown; empty when the settings name none.
	Account          string
	Path, Since, Now string
	Days             int
	LastSuccess      string
	// ChartsFrom says where the charts start when the period begins before
	// the warehouse's history.
	ChartsFrom       string
	Current, Removed int64
	Pending          int64

	Latest   *latestView
	Balances []figure
	// Unchanged are the amounts that held one value all period, said in
	// a line each rather than drawn flat.
	Unchanged    []unchangedAmount
	BalancesNote string
	// CardSums are the current cards' balances by currency; CardSumsNote
	// says by which rule (the balance field's type) they were summed.
	CardSums     []load.CardSum
	CardSumsNote string
	Statuses     figure
	Changes      figure
	Runs         []figure
	RunsNote     string

	LastRuns     []runRow
	ChangedCards []changeView
	ChangedTotal int64
	// ReturnedTotal counts the period's returned versions: cards listed
	// again after being marked removed, which are not content changes.
	ReturnedTotal int64
	Rejected      []load.RejectedItem
	RejectedTotal int64
}

type figure struct {
	Title  string
	SVG    template.HTML
	Legend []legendItem
}

// legendItem names one series: its colour (palette index, one per item
// of a legend) and whether it is a line (its swatch then shows the line's
// dash pattern) or an area.
type legendItem struct {
	Color int
	Name  string
	Line  bool
}

type latestView struct {
	TakenAt        string
	Amounts        []load.NamedAmount
	Applied, Avail string
	Rounded        bool
}

type runRow struct {
	load.Run
	Started, Duration string
	Consistent        string
}

type changeView struct {
	load.CardChange
	When   string
	Shown  []load.FieldChange
	Hidden int
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func day(t time.Time) string { return t.Format(time.DateOnly) }

func cents(v int64) string { return money.FromMinor(v, 2).String() }

func count(v int64) string { return strconv.FormatInt(v, 10) }

// newPage lays out the page of d. It stops with ctx's error, checked
// before each figure and each amount, when ctx is done.
func newPage(ctx context.Context, d load.ReportData) (page, error) {
	p := page{
		Path: d.Path, Since: stamp(d.Since), Now: stamp(d.Now), Days: len(d.Days),
		Current: d.CurrentCards, Removed: d.RemovedCards, Pending: d.PendingRemovals,
		ChangedTotal: d.ChangedCardsTotal, Rejected: rejectedViews(d.Rejected), RejectedTotal: d.RejectedTotal,
		LastSuccess: "never",
	}
	if d.LastSuccessAt != nil {
		p.LastSuccess = fmt.Sprintf("%s (run %d, %s before this report)", stamp(*d.LastSuccessAt), d.LastSuccessRun,
			span(d.Now.Sub(*d.LastSuccessAt)))
	}
	if l := d.Latest; l != nil {
		v := &latestView{TakenAt: stamp(l.TakenAt), Amounts: l.Amounts, Rounded: l.Rounded, Applied: "null", Avail: "null"}
		if l.AppliedCards != nil {
			v.Applied = count(*l.AppliedCards)
		}
		if l.AvailableToApply != nil {
			v.Avail = count(*l.AvailableToApply)
		}
		p.Latest = v
	}
	if d, p.ChartsFrom = trimToData(d); p.ChartsFrom != "" && d.Fine == nil {
		p.ChartsFrom = "Charts start on " + p.ChartsFrom + ", the first day with data in the period."
	} else {
		p.ChartsFrom = ""
	}
	tl := newTimeline(d)
	p.BalancesNote = tl.note
	var err error
	if p.Balances, p.Unchanged, err = balanceFigures(ctx, tl); err != nil {
		return page{}, err
	}
	if err := ctx.Err(); err != nil {
		return page{}, err
	}
	p.Statuses = statusFigure(tl)
	p.Changes = changeFigure(tl, d.FirstRunAt != nil)
	for _, c := range d.CardChanges {
		p.ReturnedTotal += c.Returned
	}
	p.CardSums, p.CardSumsNote = d.CardSums, cardSumsNote(d)
	if err := ctx.Err(); err != nil {
		return page{}, err
	}
	p.Runs, p.RunsNote = runFigures(d)
	if err := ctx.Err(); err != nil {
		return page{}, err
	}
	p.LastRuns, p.ChangedCards = runRows(d.LastRuns), changeViews(d.ChangedCards)
	return p, nil
}

// runRows are the runs table's rows: durations as measured, to the
// millisecond (sync_runs.duration_ms), else from the stamps, exact to the
// second, to the last heartbeat while a run runs; an abandoned run
// without duration_ms is "unknown" (killed: its stamps stop at its last
// heartbeat). Starts are to the second.
func runRows(runs []load.Run) []runRow {
	var out []runRow
	for _, r := range runs {
		row := runRow{Run: r, Started: r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"), Consistent: "–"}
		end := r.HeartbeatAt
		if r.FinishedAt != nil {
			end = *r.FinishedAt
		}
		switch {
		case r.DurationMS != nil:
			row.Duration = runSpan(*r.DurationMS, true)
		case r.Status == load.StatusAbandoned:
			row.Duration = "unknown"
		default:
			row.Duration = span(end.Sub(r.StartedAt))
		}
		if r.WalkConsistent != nil {
			row.Consistent = map[bool]string{true: "yes", false: "no"}[*r.WalkConsistent]
		}
		out = append(out, row)
	}
	return out
}

// changeViews are the changed cards' rows, each with at most
// maxFieldsShown fields.
func changeViews(changes []load.CardChange) []changeView {
	var out []changeView
	for _, c := range changes {
		c.CardID = shownID(c.CardID)
		v := changeView{CardChange: c, When: stamp(c.At), Shown: c.Fields}
		if len(c.Fields) > maxFieldsShown {
			v.Shown, v.Hidden = c.Fields[:maxFieldsShown], len(c.Fields)-maxFieldsShown
		}
		out = append(out, v)
	}
	return out
}

// maxIDRunes is the most characters of a card id a table shows: a UUID
// (36) whole; a longer id is cut, so that its row keeps one line.
const maxIDRunes = 40

// idHTML is a card id as a table cell shows it: on one line, and when
// longer than maxIDRunes cut with an ellipsis, whole in its title (the
// tooltip).
func idHTML(id string) template.HTML {
	r := []rune(id)
	if len(r) <= maxIDRunes {
		return template.HTML(`<span class="id">` + escape(id) + `</span>`)
	}
	return template.HTML(`<span class="id" title="` + escape(id) + `">` + escape(string(r[:maxIDRunes-1])) + `…</span>`)
}

// shownID is a card id as the page shows it. The warehouse stores an id
// that holds a card number by its pseudonym (load.StoredID); one stored in
// full by an older release is shown masked, never whole.
func shownID(id string) string {
	if m, ok := redact.HoldsCardNumber(id); ok {
		return m
	}
	return id
}

// rejectedViews are the rejected items as the page shows them: ids by
// shownID, and card numbers in the data masked, as a last line for rows an
// older release stored.
func rejectedViews(items []load.RejectedItem) []load.RejectedItem {
	out := make([]load.RejectedItem, len(items))
	for i, r := range items {
		r.CardID = shownID(r.CardID)
		r.Data = redact.PANs(r.Data)
		r.Reason = redact.PANs(r.Reason)
		out[i] = r
	}
	return out
}

// trimToData drops the days of the period before the first one with any
// data (a snapshot, a card version, a run or a listed card), so that a
// young warehouse does not draw its history squeezed against the right
// edge. It returns the first day kept when it dropped any.
func trimToData(d load.ReportData) (load.ReportData, string) {
	if len(d.Days) == 0 {
		return d, ""
	}
	k := len(d.Days)
	see := func(t time.Time) { k = min(k, int(t.Sub(d.Days[0])/(24*time.Hour))) }
	for _, b := range d.Balances {
		see(b.Day)
	}
	for _, c := range d.CardChanges {
		see(c.Day)
	}
	for _, r := range d.RunDays {
		see(r.Day)
	}
	for _, counts := range d.StatusCounts {
		for i, n := range counts[:k] {
			if n != 0 {
				k = i
				break
			}
		}
	}
	if k <= 0 || k >= len(d.Days) {
		return d, ""
	}
	d.Days = d.Days[k:]
	trimmed := make([][]int64, len(d.StatusCounts))
	for i, counts := range d.StatusCounts {
		trimmed[i] = counts[k:]
	}
	d.StatusCounts = trimmed
	return d, day(d.Days[0])
}

// cardSumsNote says how the card sums were made: the typed rule of
// cards_flat's balance_minor, by the balance field's card_fields.type.
func cardSumsNote(d load.ReportData) string {
	const apart = ` "No balance" counts the cards without one (absent or null); both are in "cards", not in the sum. Balances are never added across currencies.`
	switch d.BalanceType {
	case "decimal":
		return `The balance field is decimal (card_fields): each card's balance is summed exactly from its minor units, as the balance field's card_fields.minor_column in cards_flat holds them, at the card's scale (cards.amount_scale: its currency's ISO 4217 minor unit, else [cards] amount_scale); a currency's sum is at its cards' scale. "Not an amount" counts the cards whose balance does not fit that type (NULL there, e.g. "n/a").` + apart
	case "integer":
		return `The balance field is integer (card_fields): the integers are summed exactly, at scale 0. "Not an amount" counts the cards whose balance is not an integer.` + apart
	case "", "null":
		return `No card has a balance yet (card_fields types no balance field): nothing is summed.` + apart
	}
	return fmt.Sprintf(`The balance field is %s (card_fields.type), neither decimal nor integer: it is not summed, and "not an amount" counts the cards that have one.`, d.BalanceType) + apart
}
