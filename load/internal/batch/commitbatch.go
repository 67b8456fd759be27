package batch

import (
	"context"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// WalkState is what a walk's writer remembers between its commits so that
// a batch does not look it up again: the open walk and the fields this run
// has already recorded. The zero value knows nothing (a single page's
// commit).
type WalkState struct {
	WalkID     int64
	FirstTotal int
	// Fields are the fields and JSON types card_fields holds with
	// last_run = this run; nil: unknown, record every batch's fields.
	Fields map[string]cardfield.TypeMask
	// Budget bounds the fields the walk adds (MaxNewFieldsPerWalk).
	Budget cardfield.FieldBudget
	// Types are the types of the fields in Fields (card_fields.type),
	// so a batch whose fields this run recorded reads them here; a batch
	// whose values widen a type (FieldSet.Growth) updates them.
	Types map[string]cardfield.FieldType
}

// BatchPage is a dialect's page of a batch: the prepared page and the
// top-level fields its cards carry.
type BatchPage interface {
	Prepared() *PreparedPage
	FieldSet() *cardfield.FieldSet
}

// BatchTx is what CommitBatch needs of a dialect inside the transaction
// of one batch: its statements, not their sequence, which is
// CommitBatch's. A BatchTx knows its run, stream, account, the batch's
// pages and the time the attempt stamps.
type BatchTx interface {
	// OpenWalk returns the stream's open walk and its first total, or
	// starts one whose first total is firstTotal.
	OpenWalk(ctx context.Context, firstTotal int) (walkID int64, walkFirstTotal int, err error)
	// WritePage stores a page that changes something (PreparedPage.Changes):
	// its new, changed and returned cards with their versions (the
	// transaction re-reads the cards and has the last word:
	// PreparedPage.Recount), its rejected items and its audit row.
	WritePage(ctx context.Context, walkID int64, p *PreparedPage) error
	// RecordFields records the batch's new top-level fields in
	// card_fields within budget, types the fields still without a type
	// whose first non-null values the batch holds (PlanFields), and
	// returns the new fields it left out and the types card_fields holds
	// of the batch's fields.
	RecordFields(ctx context.Context, walkID int64, fields *cardfield.FieldSet, budget *cardfield.FieldBudget) ([]string, map[string]cardfield.FieldType, error)
	// GrowFields widens the fields of want (FieldSet.Growth) under the
	// lock that serializes card_fields' writers: it re-reads their rows,
	// applies GrowTypes, recomputes the minor units of every stored card
	// (all accounts) under the widened types at each card's scale
	// (Recompute: a card's stored scale stays), sets their conflicts and
	// rounded to the values found, and returns the types card_fields now
	// holds. The cards the batch writes come after it.
	GrowFields(ctx context.Context, want map[string]cardfield.FieldType) (map[string]cardfield.FieldType, error)
	// NumberTypes returns the types of card_fields' integer and decimal
	// fields as they are now, read so that no growth (GrowFields of
	// another writer) commits before this transaction does: a walk's
	// remembered types may be older than another account's growth.
	NumberTypes(ctx context.Context) (map[string]cardfield.FieldType, error)
	// AddConflicts adds to card_fields.conflicts, per field, the values
	// of the written cards that did not fit the field's type, and to
	// card_fields.rounded those rounded to their card's scale.
	AddConflicts(ctx context.Context, conflicts, rounded map[string]int) error
	// SaveProgress stores the bookkeeping of the batch: every page's seen
	// ids, the walk's running summary (an error when the walk is no longer
	// open), the checkpoint after last and the run's counters (an error
	// when the run does not exist).
	SaveProgress(ctx context.Context, walkID int64, last *PreparedPage, tally *BatchTally) error
}

// CommitBatch commits pages (in the order given) in one transaction: the
// cards they write, their seen ids, the walk's running summary, the
// checkpoint after the last of them and the run's counters, once. inTx
// runs its function in a transaction, once per attempt, with that
// attempt's BatchTx. st carries what the caller's earlier commits learnt;
// it is updated only when the transaction commits. Both dialects commit
// through it.
func CommitBatch[P BatchPage](ctx context.Context, inTx func(ctx context.Context, fn func(BatchTx) error) error, pages []P, st *WalkState) (load.Batch, error) {
	var batch load.Batch
	if len(pages) == 0 {
		return batch, nil
	}
	var fields cardfield.FieldSet
	for _, p := range pages {
		fields.Merge(p.FieldSet())
	}
	recordFields := st.Fields == nil || !fields.Within(st.Fields)
	next := *st
	var skipped []string
	err := inTx(ctx, func(tx BatchTx) error {
		batch = load.Batch{}
		next = *st
		skipped = nil
		if next.WalkID == 0 {
			walkID, firstTotal, err := tx.OpenWalk(ctx, pages[0].Prepared().TotalItems())
			if err != nil {
				return err
			}
			next.WalkID, next.FirstTotal = walkID, firstTotal
		}
		var types map[string]cardfield.FieldType
		if recordFields {
			var err error
			if skipped, types, err = tx.RecordFields(ctx, next.WalkID, &fields, &next.Budget); err != nil {
				return err
			}
		}
		next.Types = mergeTypes(st.Types, types)
		if err := currentTypes(ctx, tx, &fields, &next); err != nil {
			return err
		}
		tally, err := writePages(ctx, tx, pages, next)
		if err != nil {
			return err
		}
		batch = tally.Batch
		return tx.SaveProgress(ctx, next.WalkID, pages[len(pages)-1].Prepared(), tally)
	})
	if err != nil {
		return load.Batch{}, err
	}
	if recordFields {
		if next.Fields == nil {
			next.Fields = map[string]cardfield.TypeMask{}
		}
		fields.Into(next.Fields)
	}
	next.Budget.Skip(skipped)
	*st = next
	return batch, nil
}

// writePages writes the pages that change something, their cards' minor
// units under the field types st.Types (PreparedPage.ApplyTypes), counts
// the values that do not fit in card_fields.conflicts and those rounded
// in card_fields.rounded, and tallies every page.
func writePages[P BatchPage](ctx context.Context, tx BatchTx, pages []P, st WalkState) (*BatchTally, error) {
	conflicts, rounded := map[string]int{}, map[string]int{}
	var tally BatchTally
	for _, p := range pages {
		pp := p.Prepared()
		if pp.Changes() {
			pp.ApplyTypes(st.Types, conflicts, rounded)
			if err := tx.WritePage(ctx, st.WalkID, pp); err != nil {
				return nil, err
			}
		}
		tally.Add(pp, st.FirstTotal)
	}
	if len(conflicts) > 0 || len(rounded) > 0 {
		if err := tx.AddConflicts(ctx, conflicts, rounded); err != nil {
			return nil, err
		}
	}
	return &tally, nil
}

// currentTypes brings st.Types up to date for a batch that writes
// integer or decimal values: when they widen a type (FieldSet.Growth) it
// widens under card_fields' lock (BatchTx.GrowFields), else the batch
// reads the current types of number fields (BatchTx.NumberTypes), so a
// field another writer widened gets its cards' minor units here too. A
// batch that writes no number (an unchanged page) asks nothing.
func currentTypes(ctx context.Context, tx BatchTx, fields *cardfield.FieldSet, st *WalkState) error {
	var cur map[string]cardfield.FieldType
	var err error
	if want := fields.Growth(st.Types); want != nil {
		cur, err = tx.GrowFields(ctx, want)
	} else if fields.WritesNumbers() {
		cur, err = tx.NumberTypes(ctx)
	}
	if err != nil {
		return err
	}
	st.Types = mergeTypes(st.Types, cur)
	return nil
}

// mergeTypes is have with add's types on top (a new map when add holds
// any).
func mergeTypes(have, add map[string]cardfield.FieldType) map[string]cardfield.FieldType {
	if len(add) == 0 {
		return have
	}
	out := make(map[string]cardfield.FieldType, len(have)+len(add))
	for name, t := range have {
		out[name] = t
	}
	for name, t := range add {
		out[name] = t
	}
	return out
}
