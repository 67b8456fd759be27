package sim_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// TestWalkFaults: the faults that make a card list move or lie under a
// walk (empty-page, shrinking-total, repeated-page), each on the pages it
// names or its default ones, once or on every request.
func TestWalkFaults(t *testing.T) {
	ids := func(p page) string {
		var out []string
		for _, d := range p.Data {
			var c struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal(d, &c); err != nil {
				t.Fatal(err)
			}
			out = append(out, string(c.ID))
		}
		return strings.Join(out, ",")
	}
	get := func(e *env, n int) page {
		t.Helper()
		r := e.get("/cards?page="+strconv.Itoa(n), e.token())
		if r.status != 200 || !json.Valid(r.body) {
			t.Fatalf("page %d: status %d, body %.200s", n, r.status, r.body)
		}
		return decodePage(t, r)
	}
	walkFaultsEmptyAndShrinking(t, ids, get)
	walkFaultsOfPagination(t, ids, get)
}

// walkFaultsEmptyAndShrinking runs the subtests of empty, shrinking and repeated pages.
func walkFaultsEmptyAndShrinking(t *testing.T, ids func(page) string, get func(*env, int) page) {
	t.Run("empty-page defaults to page 2, totals unchanged, every request", func(t *testing.T) {
		f, err := sim.ParseFault("cards:empty-page")
		if err != nil {
			t.Fatal(err)
		}
		e := start(t, sim.Options{Cards: 45, Faults: []sim.Fault{f}})
		for _, n := range []int{1, 2, 2, 3} {
			p := get(e, n)
			pg := p.Meta.Pagination
			want := 15
			if n == 2 {
				want = 0
			}
			if len(p.Data) != want || pg.Count != want || pg.Total != 45 || pg.TotalPages != 3 {
				t.Errorf("page %d: %d items, pagination %+v; want %d items of 45 in 3 pages", n, len(p.Data), pg, want)
			}
		}
	})
	t.Run("empty-page=3,times=1 is empty once", func(t *testing.T) {
		f, err := sim.ParseFault("cards:empty-page=3,times=1")
		if err != nil {
			t.Fatal(err)
		}
		e := start(t, sim.Options{Cards: 60, Faults: []sim.Fault{f}})
		if n := len(get(e, 2).Data); n != 15 {
			t.Errorf("page 2: %d items, want 15", n)
		}
		if n := len(get(e, 3).Data); n != 0 {
			t.Errorf("page 3: %d items, want 0", n)
		}
		if n := len(get(e, 3).Data); n != 15 {
			t.Errorf("page 3 again: %d items, want 15", n)
		}
	})
	t.Run("shrinking-total from page 2 on, same items", func(t *testing.T) {
		e := start(t, sim.Options{Cards: 45, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultShrinkingTotal}}})
		for n, want := range map[int]int{1: 3, 2: 2, 3: 2} {
			p := get(e, n)
			if pg := p.Meta.Pagination; pg.TotalPages != want || pg.Total != 45 || len(p.Data) != 15 {
				t.Errorf("page %d: %d items, pagination %+v; want 15 items, total_pages %d", n, len(p.Data), pg, want)
			}
		}
	})
	t.Run("repeated-page serves page 1's items everywhere", func(t *testing.T) {
		e := start(t, sim.Options{Cards: 45, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultRepeatedPage}}})
		one := ids(get(e, 1))
		for _, n := range []int{2, 3} {
			p := get(e, n)
			if got := ids(p); got != one || p.Meta.Pagination.CurrentPage != n {
				t.Errorf("page %d: ids %s current_page %d; want page 1's ids %s", n, got, p.Meta.Pagination.CurrentPage, one)
			}
		}
	})
}

// walkFaultsOfPagination runs the subtests of phantom pages, PHP floats, the account and parsing.
func walkFaultsOfPagination(t *testing.T, ids func(page) string, get func(*env, int) page) {
	t.Run("phantom-pages claims total_pages, total and items unchanged", func(t *testing.T) {
		e := start(t, sim.Options{Cards: 30, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultPhantomPages}}})
		for n, want := range map[int]int{1: 15, 2: 15, 3: 0, 1999: 0, 2000: 0} {
			p := get(e, n)
			if pg := p.Meta.Pagination; pg.TotalPages != sim.DefaultPhantomClaim || pg.Total != 30 || len(p.Data) != want || pg.CurrentPage != n {
				t.Errorf("page %d: %d items, pagination %+v; want %d items, total 30, total_pages %d", n, len(p.Data), pg, want, sim.DefaultPhantomClaim)
			}
		}
		e = start(t, sim.Options{Cards: 30, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultPhantomPages, Claim: 1e9, Pages: []int{2}}}})
		if tp := get(e, 1).Meta.Pagination.TotalPages; tp != 2 {
			t.Errorf("page 1: total_pages %d, want 2 (the fault names page 2 only)", tp)
		}
		if tp := get(e, 2).Meta.Pagination.TotalPages; tp != 1e9 {
			t.Errorf("page 2: total_pages %d, want 1e9", tp)
		}
	})
	t.Run("float-pagination writes PHP floats, fractional-pages total / per_page", func(t *testing.T) {
		pagination := func(e *env, n int) string {
			t.Helper()
			r := e.get("/cards?page="+strconv.Itoa(n), e.token())
			var doc struct {
				Meta struct {
					Pagination map[string]json.RawMessage
				}
			}
			if err := json.Unmarshal(r.body, &doc); err != nil {
				t.Fatal(err)
			}
			pg := doc.Meta.Pagination
			return fmt.Sprintf("%s %s %s %s %s", pg["total"], pg["count"], pg["per_page"], pg["current_page"], pg["total_pages"])
		}
		e := start(t, sim.Options{Cards: 38, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultFloatPagination}}})
		if got, want := pagination(e, 3), "38.0 8.0 15.0 3.0 3.0"; got != want {
			t.Errorf("float-pagination page 3: %s, want %s", got, want)
		}
		e = start(t, sim.Options{Cards: 38, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultFractionalPages}}})
		if got, want := pagination(e, 1), "38 15 15 1 2.533333333333333"; got != want {
			t.Errorf("fractional-pages page 1: %s, want %s", got, want)
		}
		e = start(t, sim.Options{Cards: 30, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultFractionalPages}}})
		if got, want := pagination(e, 2), "30 15 15 2 2.0"; got != want {
			t.Errorf("fractional-pages page 2 of 30 cards: %s, want %s", got, want)
		}
	})
	t.Run("account untouched", func(t *testing.T) {
		e := start(t, sim.Options{Cards: 45, Faults: []sim.Fault{{Kind: sim.FaultEmptyPage}, {Kind: sim.FaultRepeatedPage}}})
		if r := e.get("/account", e.token()); r.status != 200 {
			t.Errorf("account: status %d", r.status)
		}
	})
	t.Run("parse", func(t *testing.T) {
		for in, want := range map[string]sim.Fault{
			"cards:empty-page":                 {Endpoint: "cards", Kind: sim.FaultEmptyPage},
			"cards:empty-page=4,times=1":       {Endpoint: "cards", Kind: sim.FaultEmptyPage, Pages: []int{4}, Times: 1},
			"shrinking-total=2":                {Kind: sim.FaultShrinkingTotal, Shrink: 2},
			"shrinking-total,pages=3-4":        {Kind: sim.FaultShrinkingTotal, Pages: []int{3, 4}},
			"cards:repeated-page=2,times=1":    {Endpoint: "cards", Kind: sim.FaultRepeatedPage, Pages: []int{2}, Times: 1},
			"repeated-page":                    {Kind: sim.FaultRepeatedPage},
			"cards:phantom-pages":              {Endpoint: "cards", Kind: sim.FaultPhantomPages},
			"phantom-pages=1000000000,pages=2": {Kind: sim.FaultPhantomPages, Claim: 1000000000, Pages: []int{2}},
			"float-pagination":                 {Kind: sim.FaultFloatPagination},
			"cards:fractional-pages,times=1":   {Endpoint: "cards", Kind: sim.FaultFractionalPages, Times: 1},
		} {
			got, err := sim.ParseFault(in)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("ParseFault(%q) = %+v, %v; want %+v", in, got, err, want)
				continue
			}
			if again, err := sim.ParseFault(got.String()); err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("String() %q does not round-trip: %+v, %v", got.String(), again, err)
			}
		}
		for _, bad := range []string{"empty-page=0", "empty-page=x", "shrinking-total=-1", "repeated-page=a", "phantom-pages=-1",
			"phantom-pages=x", "float-pagination=2", "fractional-pages=1"} {
			if _, err := sim.ParseFault(bad); !errors.Is(err, sim.ErrBadFault) {
				t.Errorf("ParseFault(%q) error = %v, want ErrBadFault", bad, err)
			}
		}
	})
}
