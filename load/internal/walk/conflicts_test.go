package walk

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
)

func TestFindConflicts(t *testing.T) {
	a, b := load.DataHash([]byte(`{"v":1}`)), load.DataHash([]byte(`{"v":2}`))
	sightings := []Sighting{
		{ID: "same", Page: 1, Hash: a}, {ID: "same", Page: 4, Hash: a}, // identical: harmless
		{ID: "two", Page: 3, Hash: b}, {ID: "two", Page: 1, Hash: a}, {ID: "two", Page: 3, Hash: b},
		{ID: "rejected", Page: 1, Hash: a}, {ID: "rejected", Page: 2}, // a rejected sighting takes no part
		{ID: "5", Page: 2, Hash: a}, {ID: "5", Page: 7, Hash: b}, {ID: "5", Page: 9, Hash: a},
	}
	want := []load.IDConflict{{ID: "5", Pages: []int{2, 7, 9}}, {ID: "two", Pages: []int{1, 3}}}
	for range 20 {
		rand.Shuffle(len(sightings), func(i, j int) { sightings[i], sightings[j] = sightings[j], sightings[i] })
		got := FindConflicts(sightings)
		if !slices.EqualFunc(got, want, func(x, y load.IDConflict) bool { return x.ID == y.ID && slices.Equal(x.Pages, y.Pages) }) {
			t.Fatalf("FindConflicts = %v, want %v", got, want)
		}
	}
}

// TestResolveConflict: a card current before the walk goes back to that
// version; one new or returned in the walk keeps its first version with
// the content of least hash, whatever order the walk wrote them in.
func TestResolveConflict(t *testing.T) {
	docs := []string{`{"id":"7","v":1}`, `{"id":"7","v":2}`, `{"id":7,"v":3}`, `{"id":"7","v":4}`}
	least := docs[0]
	for _, d := range docs[1:] {
		if bytes.Compare(load.DataHash([]byte(d)), load.DataHash([]byte(least))) < 0 {
			least = d
		}
	}
	types := map[string]cardfield.FieldType{}
	for _, tt := range []struct {
		name     string
		before   *CardVersion
		wantKeep int64
		wantData string
	}{
		{"current before the walk", &CardVersion{Version: 3, RunID: 5, Change: "changed", Data: `{"id":"7","v":0}`, Before: true}, 3, `{"id":"7","v":0}`},
		{"removed before the walk", &CardVersion{Version: 3, RunID: 5, Change: "removed", Data: `{"id":"7","v":0}`, Before: true}, 4, least},
		{"new in the walk", nil, 1, least},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for range 10 {
				order := slices.Clone(docs)
				rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				var vs []CardVersion
				next := int64(1)
				if tt.before != nil {
					vs = append(vs, *tt.before)
					next = tt.before.Version + 1
				}
				first := next
				for i, d := range order {
					change := "changed"
					switch {
					case next != first:
					case tt.before == nil:
						change = "new"
					case tt.before.Change == "removed":
						change = "returned"
					}
					vs = append(vs, CardVersion{Version: next, RunID: 10 + int64(i%2), Change: change, Data: d})
					next++
				}
				fix, ok := ResolveConflict("7", vs, types, load.DefaultAmountRules())
				if !ok || fix.Keep != tt.wantKeep || fix.Data != tt.wantData || !bytes.Equal(fix.Hash, load.DataHash([]byte(tt.wantData))) {
					t.Fatalf("ResolveConflict(%v) = %+v, %v; want keep %d with %s", vs, fix, ok, tt.wantKeep, tt.wantData)
				}
				wantDropped := len(docs)
				if tt.before == nil || tt.before.Change == "removed" {
					wantDropped--
				}
				if len(fix.Dropped) != wantDropped {
					t.Fatalf("dropped %d versions, want %d", len(fix.Dropped), wantDropped)
				}
				for _, v := range fix.Dropped {
					if v.Version <= fix.Keep || v.Change != "changed" {
						t.Fatalf("dropped %+v, keeping %d", v, fix.Keep)
					}
				}
			}
		})
	}
	if _, ok := ResolveConflict("7", []CardVersion{{Version: 2, Change: "new", Data: docs[0], Before: true}}, types, load.DefaultAmountRules()); ok {
		t.Error("a card the walk did not write was changed")
	}
}
