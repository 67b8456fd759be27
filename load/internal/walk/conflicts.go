package walk

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
	"github.com/cardsync/cardsync/load/internal/hashform"
)

// One id, one content per walk. A card id listed on two pages of one walk
// with different content (a stale cache behind the API, offset drift over
// a card that changed, 5 and "5", which are one id) cannot be trusted
// either way, and taking the later sighting would make the page order
// decide: every run would write one version, then the other. The rule is
// applied when the walk closes, over everything its pages committed (so a
// walk resumed after a kill, whose first sighting committed in another
// run, ends the same):
//
//   - a card stored and current before the walk keeps that content: the
//     versions the walk made of it are deleted and the version it had
//     before the walk is open again, as if the walk had not written it;
//   - a card the walk stored first (new) or brought back (returned after
//     a removal) keeps the walk's first version, whose content becomes
//     the sighting with the least hash (DataHash): the same whatever the
//     order of the pages, and unchanged by the next walk that lists the
//     same contents;
//   - either way the card counts as seen (no removal), the versions
//     deleted are counted unchanged instead of changed in their runs'
//     counters (sync_runs), and the walk records duplicate_ids with the
//     pages that listed the id (sync_walks.inconsistent_reason, kept when
//     another reason came first, and inconsistent_pages).
//
// Until the close, the warehouse shows what the pages wrote; run_pages
// keeps what each page's commit did.
//
// Identical duplicates (the same content on two pages) are harmless: they
// make no version and stay only counted in sync_walks.duplicate_ids. A
// rejected sighting has no content to compare and takes no part.

// ConflictTx is what closing a walk needs of a dialect to apply the rule
// above, inside the close's transaction.
type ConflictTx interface {
	// DuplicateSightings returns every sighting of the ids the walk listed
	// on more than one page (walk_seen), in any order.
	DuplicateSightings(ctx context.Context, walkID int64) ([]Sighting, error)
	// CardHistory returns the card's versions from the last one made
	// before the walk (by a run before the walk's first) on, in version
	// order, each marked Before or not.
	CardHistory(ctx context.Context, walkID int64, id string) ([]CardVersion, error)
	// ConflictTypes returns the types of card_fields' integer and decimal
	// fields and the writer's amount rules, for the money of a restored
	// card.
	ConflictTypes(ctx context.Context) (map[string]cardfield.FieldType, load.AmountRules, error)
	// RestoreCard applies fix: the card's versions after fix.Keep are
	// deleted, fix.Keep is open again with fix.Data, card_state holds
	// fix.Data, fix.Hash and fix.Minor (NULL when ""), is current, and its
	// updated_at is fix.Keep's valid_from; each version of fix.Dropped
	// moves, in its run's counters, from its change to unchanged.
	RestoreCard(ctx context.Context, fix ConflictFix) error
	// RecordAnomaly records reason on the walk unless one came first, and
	// appends pages to its inconsistent_pages (AppendPagesSQL).
	RecordAnomaly(ctx context.Context, walkID int64, reason string, pages []int) error
}

// Sighting is one listing of a card id by a page of an open walk.
type Sighting struct {
	ID   string
	Page int
	// Hash is the card's DataHash as the page's commit stored it
	// (walk_seen.hashes); nil for a rejected item, or a page committed by
	// a release that did not keep hashes.
	Hash []byte
}

// FindConflicts returns the ids of sightings seen with two or more
// different contents (hashes), sorted by id, with every page that listed
// each. Sightings without a hash take no part.
func FindConflicts(sightings []Sighting) []load.IDConflict {
	byID := map[string][]Sighting{}
	for _, s := range sightings {
		byID[s.ID] = append(byID[s.ID], s)
	}
	var out []load.IDConflict
	for id, ss := range byID {
		var first []byte
		conflict := false
		for _, s := range ss {
			switch {
			case s.Hash == nil:
			case first == nil:
				first = s.Hash
			case !bytes.Equal(first, s.Hash):
				conflict = true
			}
		}
		if !conflict {
			continue
		}
		pages := make([]int, 0, len(ss))
		for _, s := range ss {
			pages = append(pages, s.Page)
		}
		slices.Sort(pages)
		out = append(out, load.IDConflict{ID: id, Pages: slices.Compact(pages)})
	}
	slices.SortFunc(out, func(a, b load.IDConflict) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// CardVersion is one stored version of a card (card_versions), as the
// close of a walk reads it for an id in conflict.
type CardVersion struct {
	Version int64
	RunID   int64
	Change  string
	// Data is the version's JSON as the warehouse gives it back (any
	// text of it: DataHash reads them all alike).
	Data string
	// Before says the version was made before the walk.
	Before bool
}

// ConflictFix is what the close of a walk does to a card in conflict
// (ConflictTx.RestoreCard).
type ConflictFix struct {
	ID string
	// Keep is the version left open; every later one is deleted.
	Keep int64
	// Data is what Keep and card_state hold, Hash its DataHash and Money
	// its card_state money (minor units at its scale, currency, flag).
	Data  string
	Hash  []byte
	Money cardfield.StoredMoney
	// Dropped are the versions deleted.
	Dropped []CardVersion
}

// ResolveConflict is the rule for a card in conflict (see ConflictTx)
// over versions, its versions from the last one made before the walk on
// (CardHistory); types and rules give the money of the content kept. ok is
// false when there is nothing to do: the walk wrote no version of it.
func ResolveConflict(id string, versions []CardVersion, types map[string]cardfield.FieldType, rules load.AmountRules) (fix ConflictFix, ok bool) {
	var before *CardVersion
	walk := versions
	if len(walk) > 0 && walk[0].Before {
		before, walk = &walk[0], walk[1:]
	}
	if len(walk) == 0 {
		return ConflictFix{}, false
	}
	keep := before
	var kept []CardVersion
	if before == nil || before.Change == "removed" {
		// New or returned in this walk: the walk's first version stays,
		// with the content of least hash among the walk's versions, which
		// hold every content its pages listed.
		keep, kept = &walk[0], walk[1:]
		best, bestHash := walk[0].Data, load.DataHash([]byte(walk[0].Data))
		for _, v := range walk[1:] {
			if h := load.DataHash([]byte(v.Data)); bytes.Compare(h, bestHash) < 0 {
				best, bestHash = v.Data, h
			}
		}
		fix = ConflictFix{Data: best, Hash: bestHash}
	} else {
		kept = walk
		fix = ConflictFix{Data: before.Data, Hash: load.DataHash([]byte(before.Data))}
	}
	fix.ID, fix.Keep = id, keep.Version
	fix.Money = cardfield.Recompute(types, rules).Card(compactJSON(fix.Data), nil)
	fix.Dropped = append([]CardVersion(nil), kept...)
	return fix, true
}

// compactJSON is doc without insignificant whitespace (PostgreSQL's jsonb
// text has some), as the field readers expect; doc as it is when it is not
// JSON.
func compactJSON(doc string) []byte {
	var b bytes.Buffer
	if json.Compact(&b, []byte(doc)) != nil {
		return []byte(doc)
	}
	return b.Bytes()
}

// resolveConflicts applies the rule to the walk's ids in conflict and
// returns them, with how many changes of run runID (0: none) it undid.
func resolveConflicts(ctx context.Context, tx ConflictTx, walkID, runID int64) ([]load.IDConflict, int, error) {
	sightings, err := tx.DuplicateSightings(ctx, walkID)
	if err != nil || len(sightings) == 0 {
		return nil, 0, err
	}
	conflicts := FindConflicts(sightings)
	if len(conflicts) == 0 {
		return nil, 0, nil
	}
	types, rules, err := tx.ConflictTypes(ctx)
	if err != nil {
		return nil, 0, err
	}
	undone := 0
	var pages []int
	for _, c := range conflicts {
		pages = append(pages, c.Pages...)
		versions, err := tx.CardHistory(ctx, walkID, c.ID)
		if err != nil {
			return nil, 0, err
		}
		fix, ok := ResolveConflict(c.ID, versions, types, rules)
		if !ok {
			continue
		}
		if err := tx.RestoreCard(ctx, fix); err != nil {
			return nil, 0, err
		}
		for _, v := range fix.Dropped {
			if runID != 0 && v.RunID == runID && v.Change == "changed" {
				undone++
			}
		}
	}
	slices.Sort(pages)
	if err := tx.RecordAnomaly(ctx, walkID, load.ReasonDuplicateIDs, slices.Compact(pages)); err != nil {
		return nil, 0, err
	}
	return conflicts, undone, nil
}

// SeenHashes is walk_seen.hashes of a page's storable cards: their
// hashes one after the other, in the order of the page's ids.
func SeenHashes(cards []load.PreparedCard) []byte {
	out := make([]byte, 0, hashform.HashLen*len(cards))
	for _, c := range cards {
		out = append(out, c.Hash...)
	}
	return out
}

// SightingHash is a Sighting's Hash from the 16 bytes a dialect read at
// its index of walk_seen.hashes: nil when there were none (a rejected
// item, past the page's storable cards, or a page without hashes).
func SightingHash(b []byte) []byte {
	if len(b) != hashform.HashLen {
		return nil
	}
	return b
}
