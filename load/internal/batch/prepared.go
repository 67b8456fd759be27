package batch

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// PreparedPage is the database-independent part of a page ready to commit:
// its numbers, timing and request counters (from Page), how many items and
// storable cards it held, the cards to insert (new) and to write (changed
// or returned), the items to quarantine and the page's result. Each
// destination's prepared page embeds it and adds its own form of the ids
// the page listed. Its fields are set by load's rules only
// (NewPreparedPage, Compare, ResolveRepeats, Recount); the methods read
// them.
type PreparedPage struct {
	number, totalPages, totalItems int
	fetchedAt                      time.Time
	duration                       time.Duration
	bodySHA256                     string
	requests, retries, limited     int64
	authRequests                   int64
	anomaly                        string
	// items is how many items the page held (cards and rejected).
	items int
	// cards counts the cards stored or compared (sync_runs.cards_seen).
	cards int
	// fresh are the new cards (the warehouse has no row for them) and
	// writes the changed and returned ones.
	fresh, writes []CardWrite
	// rejected are the items to quarantine, Data included.
	rejected []load.Rejection
	res      load.PageResult
}

// NewPreparedPage starts the prepared page of p: its numbers and counters,
// FetchedAt (now() when p has none), cards storable cards and rejected the
// items to quarantine (counted in the result, which lists them without
// Data), and secrets the secrets the policy removed from them
// (PageItems.Secrets), counts its other counters (PageItems.Counts).
// Compare then sorts the cards.
func NewPreparedPage(p load.Page, now func() time.Time, cards int, rejected []load.Rejection, secrets int, counts load.RuleCounts) PreparedPage {
	pp := PreparedPage{
		number: p.Number, totalPages: p.TotalPages, totalItems: p.TotalItems,
		fetchedAt: orNow(p.FetchedAt, now), duration: p.Duration, bodySHA256: p.BodySHA256,
		requests: p.Requests, retries: p.Retries, limited: p.RateLimited, authRequests: p.AuthRequests,
		items: len(p.Cards) + len(p.Rejected),
		cards: cards, rejected: rejected, anomaly: p.Anomaly,
	}
	pp.res.Rejected = len(rejected)
	pp.res.Secrets = secrets
	pp.res.RuleCounts = counts
	for _, r := range rejected {
		r.Data = nil
		pp.res.Rejections = append(pp.res.Rejections, r)
	}
	return pp
}

// StoredCard is what a warehouse holds of a card, for the comparison of a
// page with it.
type StoredCard struct {
	Exists, Removed bool
	// Hash is card_state.data_hash (nil when stored without one).
	Hash []byte
}

// CardWrite is a card a page commit writes, and why.
type CardWrite struct {
	id     string
	data   string // redacted, canonical JSON
	hash   []byte
	change string // new, changed, returned (as classified before the write)
	values []cardfield.FieldValue
	money  load.CardMoney // the scale of its decimal fields (AmountRules.Of)
	minor  string         // card_state.minor ("": NULL), set by ApplyTypes
	// rounded: a decimal value was rounded to the scale (ApplyTypes).
	rounded bool
}

// Minor is the card's card_state.minor: the minor units of its decimal
// fields as a JSON object, "" (NULL) when it has none (MinorJSON).
func (c CardWrite) Minor() string { return c.minor }

// Money is card_state's amount_scale, amount_currency ("": NULL) and
// amounts_rounded of the card.
func (c CardWrite) Money() cardfield.StoredMoney {
	return cardfield.StoredMoney{Minor: c.minor, Scale: c.money.Scale, Currency: c.money.Currency, Rounded: c.rounded}
}

// ApplyTypes sets the minor units (CardWrite.Minor) of the cards p writes
// under the field types, each at its card's scale, and counts, per
// field, their values that do not fit their field's type in conflicts and
// those rounded to the scale in rounded.
func (p *PreparedPage) ApplyTypes(types map[string]cardfield.FieldType, conflicts, rounded map[string]int) {
	for _, cs := range [][]CardWrite{p.fresh, p.writes} {
		for i := range cs {
			cs[i].minor, cs[i].rounded = cardfield.MinorJSON(cs[i].values, types, cs[i].money.Scale, conflicts, rounded)
		}
	}
}

// ID is the card's id.
func (c CardWrite) ID() string { return c.id }

// Data is the card's redacted, canonical JSON.
func (c CardWrite) Data() string { return c.data }

// Hash is Data's hash (card_state.data_hash).
func (c CardWrite) Hash() []byte { return c.hash }

// Change is why the card is written, as the page's comparison found: new,
// changed or returned.
func (c CardWrite) Change() string { return c.change }

// Compare sorts the page's storable cards by what the warehouse holds of
// each (have[i] of cards[i]) and counts them in the result: a card not
// stored is new, one marked removed is returned, one whose hash differs is
// changed, the rest are unchanged (counted, not written). Each card
// written gets the scale of its decimal fields by rules (AmountRules.Of).
func (p *PreparedPage) Compare(cards []load.PreparedCard, have []StoredCard, rules load.AmountRules) {
	for i, c := range cards {
		s := have[i]
		change := ""
		switch {
		case !s.Exists:
			change = "new"
			p.res.New++
		case s.Removed:
			change = "returned"
			p.res.Returned++
		case !bytes.Equal(s.Hash, c.Hash):
			change = "changed"
			p.res.Changed++
		default:
			p.res.Unchanged++
		}
		switch change {
		case "new":
			p.fresh = append(p.fresh, CardWrite{id: c.ID, data: string(c.Data), hash: c.Hash, change: change, values: cardfield.CardValues(c.Data, c.Fields), money: rules.Of(c.Data)})
		case "":
		default:
			p.writes = append(p.writes, CardWrite{id: c.ID, data: string(c.Data), hash: c.Hash, change: change, values: cardfield.CardValues(c.Data, c.Fields), money: rules.Of(c.Data)})
		}
	}
}

// ResolveRepeats settles the cards p compared as new that an earlier page
// of the same batch already writes: every page of a batch is compared with
// the warehouse as it was before the batch, so a card the warehouse has
// never stored that a walk lists on two pages of one batch (a repeated
// page, offset drift) would otherwise be inserted twice. earlier maps the
// id of each card the batch's earlier pages write (new, changed or
// returned) to the hash of its latest occurrence, in page order. The later
// occurrence is compared with it: unchanged when the hashes are equal (not
// written), else changed (written after the earlier one, in the same
// transaction, which reads the card again and has the last word). The
// page's counts move with it: a repeat is never counted new twice.
// earlier is updated with what p writes, for the pages after it.
func (p *PreparedPage) ResolveRepeats(earlier map[string][]byte) {
	kept := p.fresh[:0:0]
	for _, c := range p.fresh {
		h, ok := earlier[c.id]
		switch {
		case !ok:
			kept = append(kept, c)
		case bytes.Equal(h, c.hash):
			count(&p.res, c.change, -1)
			count(&p.res, "", +1)
		default:
			count(&p.res, c.change, -1)
			c.change = "changed"
			count(&p.res, c.change, +1)
			p.writes = append(p.writes, c)
		}
	}
	if len(kept) < len(p.fresh) {
		p.fresh = kept
	}
	for _, c := range p.fresh {
		earlier[c.id] = c.hash
	}
	for _, c := range p.writes {
		earlier[c.id] = c.hash
	}
}

// Recount moves c from the count of c.Change to that of change ("":
// unchanged) when they differ: the write transaction, which reads the card
// again, has the last word.
func (p *PreparedPage) Recount(c CardWrite, change string) {
	if change != c.change {
		count(&p.res, c.change, -1)
		count(&p.res, change, +1)
	}
}

// Prepared returns p: a destination's page that embeds PreparedPage is
// Batchable through it.
func (p *PreparedPage) Prepared() *PreparedPage { return p }

// Changes says whether committing the page writes more than bookkeeping:
// a new, changed or returned card, or a rejected item.
func (p *PreparedPage) Changes() bool {
	return len(p.fresh) > 0 || len(p.writes) > 0 || len(p.rejected) > 0
}

// Number is the page's number.
func (p *PreparedPage) Number() int { return p.number }

// TotalPages is the total_pages the page reported.
func (p *PreparedPage) TotalPages() int { return p.totalPages }

// TotalItems is the total the page reported.
func (p *PreparedPage) TotalItems() int { return p.totalItems }

// FetchedAt is when the page was fetched.
func (p *PreparedPage) FetchedAt() time.Time { return p.fetchedAt }

// Duration is how long the page's request took.
func (p *PreparedPage) Duration() time.Duration { return p.duration }

// BodySHA256 is the hex SHA-256 of the page's body.
func (p *PreparedPage) BodySHA256() string { return p.bodySHA256 }

// Items is how many items the page held (cards and rejected).
func (p *PreparedPage) Items() int { return p.items }

// Fresh are the new cards, to insert.
func (p *PreparedPage) Fresh() []CardWrite { return p.fresh }

// Writes are the changed and returned cards, to write after reading them
// again in the write transaction (Recount).
func (p *PreparedPage) Writes() []CardWrite { return p.writes }

// Rejected are the items to quarantine, Data as received.
func (p *PreparedPage) Rejected() []load.Rejection { return p.rejected }

// Result is the page's result so far (Committed unset).
func (p *PreparedPage) Result() load.PageResult { return p.res }

// AddTo adds the page to b, the next page of its batch.
func (p *PreparedPage) AddTo(b *load.Batch) {
	if b.Pages == 0 {
		b.FirstPage = p.number
	}
	b.Pages++
	b.LastPage = p.number
	b.TotalPages, b.TotalItems = p.totalPages, p.totalItems
	b.Cards += p.cards
	b.New += p.res.New
	b.Changed += p.res.Changed
	b.Returned += p.res.Returned
	b.Unchanged += p.res.Unchanged
	b.Rejected += p.res.Rejected
	b.Secrets += p.res.Secrets
	b.RuleCounts = b.RuleCounts.Add(p.res.RuleCounts)
}

// BatchTally sums the pages of a batch as its commit records them: the
// Batch (the run's card counters), the walk's running summary and the
// run's request counters.
type BatchTally struct {
	Batch load.Batch
	// MaxPage is the highest page number; MinTotal and MaxTotal the
	// smallest and largest total a page reported; TotalChanged whether a
	// page reported another total than the walk's first page.
	MaxPage, MinTotal, MaxTotal int
	TotalChanged                bool
	// Requests, Retries, RateLimited and AuthRequests sum the pages'
	// counters.
	Requests, Retries, RateLimited, AuthRequests int64
	// Anomaly is the first page anomaly of the batch ("" when none) and
	// AnomalyPages the pages that showed one, in order.
	Anomaly      string
	AnomalyPages []int
}

// AnomalyArgs returns the batch's anomaly and its pages as the walk update
// records them (AppendPagesSQL): nil and nil when no page showed one, else
// the reason and a JSON array of the page numbers.
func (t *BatchTally) AnomalyArgs() (reason, pages any) {
	if len(t.AnomalyPages) == 0 {
		return nil, nil
	}
	b, _ := json.Marshal(t.AnomalyPages)
	return t.Anomaly, string(b)
}

// Add counts p, the next page of a walk whose first page reported
// firstTotal. Call it once the page is written: the write has the last
// word on its counts.
func (t *BatchTally) Add(p *PreparedPage, firstTotal int) {
	if t.Batch.Pages == 0 {
		t.MinTotal, t.MaxTotal = p.totalItems, p.totalItems
	}
	t.TotalChanged = t.TotalChanged || p.totalItems != firstTotal
	t.MinTotal, t.MaxTotal = min(t.MinTotal, p.totalItems), max(t.MaxTotal, p.totalItems)
	t.MaxPage = max(t.MaxPage, p.number)
	t.Requests += p.requests
	t.Retries += p.retries
	t.RateLimited += p.limited
	t.AuthRequests += p.authRequests
	if p.anomaly != "" {
		if t.Anomaly == "" {
			t.Anomaly = p.anomaly
		}
		t.AnomalyPages = append(t.AnomalyPages, p.number)
	}
	p.AddTo(&t.Batch)
}

// AddKinds adds to s the kinds of the values of the cards p writes (new,
// changed, returned), of the fields s holds (FieldSet.AddWritten).
func (p *PreparedPage) AddKinds(s *cardfield.FieldSet) {
	for _, cs := range [][]CardWrite{p.fresh, p.writes} {
		for _, c := range cs {
			s.AddWritten(c.values)
		}
	}
}

func orNow(t time.Time, now func() time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return t
}

// count adds d to the counter of a change ("" is unchanged).
func count(r *load.PageResult, change string, d int) {
	switch change {
	case "new":
		r.New += d
	case "changed":
		r.Changed += d
	case "returned":
		r.Returned += d
	default:
		r.Unchanged += d
	}
}
