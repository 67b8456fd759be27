package cardfield

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/redact"
)

func TestClassifyValue(t *testing.T) {
	for _, c := range []struct {
		raw   string
		kind  Kind
		scale int
	}{
		{`12`, KindInteger, 0},
		{`-9223372036854775808`, KindInteger, 0},
		{`9223372036854775808`, KindText, 0}, // beyond int64 at scale 0
		{`"4966"`, KindInteger, 0},
		{`"-07"`, KindInteger, 0},
		{`"4966.76"`, KindDecimal, 2},
		{`"-0.07"`, KindDecimal, 2},
		{`"12.345"`, KindDecimal, 3},
		{`"1.5e2"`, KindText, 0}, // a string decimal is plain
		{`"+1.00"`, KindText, 0},
		{`"1,000.00"`, KindText, 0},
		{`".5"`, KindText, 0},
		{`12.340`, KindDecimal, 3},
		{`1.5e1`, KindDecimal, 0},
		{`15e-3`, KindDecimal, 3},
		{`1e400`, KindText, 0},
		{`1.0000000000000000001`, KindDecimal, 19}, // a card's scale rounds it
		{`0.30000000000000004`, KindDecimal, 17},   // PHP's 0.1 + 0.2
		{`"0.30000000000000004"`, KindDecimal, 17},
		{`"92233720368547758.07"`, KindDecimal, 2},
		{`"9223372036854775808.5"`, KindText, 0}, // whole part beyond int64
		{`true`, KindBoolean, 0},
		{`false`, KindBoolean, 0},
		{`null`, KindNull, 0},
		{`{"a":1}`, KindObject, 0},
		{`[1]`, KindArray, 0},
		{`"2025-03-01T12:00:00Z"`, KindTimestamp, 0},
		{`"2025-03-01T12:00:00.123+02:00"`, KindTimestamp, 0},
		{`"2025-03-01 12:00:00"`, KindTimestamp, 0},
		{`"2025-03-01 12:00:00.250"`, KindTimestamp, 0},
		{`"2025-03-01"`, KindTimestamp, 0},
		{`"2025-13-01"`, KindText, 0},
		{`"2025-03-01x"`, KindText, 0},
		{`"12/29"`, KindText, 0},
		{`"N/A"`, KindText, 0},
		{`"a\"b"`, KindText, 0},
		{` "1.25" `, KindDecimal, 2},
	} {
		v := ClassifyValue([]byte(c.raw))
		if v.Kind != c.kind || v.Scale != c.scale {
			t.Errorf("%s: %v scale %d, want %v scale %d", c.raw, v.Kind, v.Scale, c.kind, c.scale)
		}
	}
}

func TestKindsDecide(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   string
	}{
		{nil, "null"},
		{[]string{`null`}, "null"},
		{[]string{`1`, `"2"`, `null`}, "integer"},
		{[]string{`1`, `"2.5"`, `3.125`}, "decimal"},
		{[]string{`"1.00"`, `"2.50"`}, "decimal"},
		{[]string{`true`, `false`}, "boolean"},
		{[]string{`"2025-03-01"`, `"2025-03-01T12:00:00Z"`}, "timestamp"},
		{[]string{`{}`, `{"a":1}`}, "object"},
		{[]string{`[]`}, "array"},
		{[]string{`"x"`}, "text"},
		{[]string{`"1.00"`, `"N/A"`}, "text"},             // no kind has more than half
		{[]string{`"1.00"`, `"2.5"`, `"N/A"`}, "decimal"}, // "N/A" is then a conflict
		{[]string{`1`, `2`, `"x"`}, "integer"},
		{[]string{`"x"`, `"y"`, `1.5`}, "text"},
		{[]string{`true`, `false`, `"maybe"`}, "boolean"},
		{[]string{`true`, `1`}, "text"},
	} {
		var k kindSeen
		for _, raw := range c.values {
			k.add(ClassifyValue([]byte(raw)))
		}
		if got := fmt.Sprint(k.decide()); got != c.want {
			t.Errorf("%q: %s, want %s", c.values, got, c.want)
		}
	}
}

// TestFieldTypeFit: a decimal type holds a value at the card's scale,
// whatever the type's own scale and the value's decimals: more decimals
// are rounded half to even and reported, a value beyond int64 minor units
// at that scale does not fit.
func TestFieldTypeFit(t *testing.T) {
	dec := FieldType{Kind: KindDecimal, Scale: 2}
	for _, c := range []struct {
		t       FieldType
		raw     string
		scale   int
		minor   int64
		rounded bool
		ok      bool
	}{
		{dec, `"4966.76"`, 2, 496676, false, true},
		{dec, `"-0.07"`, 2, -7, false, true},
		{dec, `"7"`, 2, 700, false, true},
		{dec, `12.340`, 2, 1234, false, true},
		{dec, `null`, 2, 0, false, true},
		{dec, `"12.345"`, 2, 1234, true, true}, // half to even: down
		{dec, `"12.355"`, 2, 1236, true, true}, // half to even: up
		{dec, `0.30000000000000004`, 2, 30, true, true},
		{dec, `"1007.01"`, 0, 1007, true, true}, // a JPY card
		{dec, `"1007.01"`, 3, 1007010, false, true},
		{FieldType{Kind: KindDecimal, Scale: 17}, `"15.00"`, 2, 1500, false, true}, // the card's scale, not the type's
		{dec, `"N/A"`, 2, 0, false, false},
		{dec, `1e400`, 2, 0, false, false},
		{dec, `"92233720368547758.07"`, 2, 9223372036854775807, false, true},
		{dec, `"92233720368547758.08"`, 2, 0, false, false}, // minor units beyond int64
		{dec, `"92233720368547758.07"`, 3, 0, false, false},
		{dec, `true`, 2, 0, false, false},
		{FieldType{Kind: KindInteger}, `"12"`, 2, 0, false, true},
		{FieldType{Kind: KindInteger}, `"12.5"`, 2, 0, false, false},
		{FieldType{Kind: KindText}, `[1]`, 2, 0, false, true},
		{FieldType{Kind: KindBoolean}, `"true"`, 2, 0, false, false},
	} {
		minor, rounded, ok := c.t.Fit(ClassifyValue([]byte(c.raw)), c.scale)
		if minor != c.minor || rounded != c.rounded || ok != c.ok {
			t.Errorf("%v/%d %s at %d: %d %v %v, want %d %v %v", c.t.Kind, c.t.Scale, c.raw, c.scale, minor, rounded, ok, c.minor, c.rounded, c.ok)
		}
	}
}

func TestDataValuesAndMinorJSON(t *testing.T) {
	// Canonical JSON and PostgreSQL's jsonb text read alike.
	for _, doc := range []string{
		`{"a\"b":"1.50","balance":"4966.76","n":null,"nested":{"x":"1.00","y":[1,"]"]},"s":"}"}`,
		`{"s": "}", "a\"b": "1.50", "nested": {"x": "1.00", "y": [1, "]"]}, "n": null, "balance": "4966.76"}`,
	} {
		vs := DataValues([]byte(doc))
		types := map[string]FieldType{"balance": {Kind: KindDecimal, Scale: 2}, `a"b`: {Kind: KindDecimal, Scale: 3}, "s": {Kind: KindInteger}}
		conflicts, rounded := map[string]int{}, map[string]int{}
		got, r := MinorJSON(vs, types, 3, conflicts, rounded)
		if len(vs) != 4 || conflicts["s"] != 1 || len(conflicts) != 1 || r || len(rounded) != 0 {
			t.Errorf("%s: values %v, conflicts %v, rounded %v", doc, vs, conflicts, rounded)
		}
		if got != `{"a\"b":1500,"balance":4966760}` && got != `{"balance":4966760,"a\"b":1500}` {
			t.Errorf("%s: minor %s", doc, got)
		}
		// At the scale of a JPY card, every decimal is rounded and marked.
		got, r = MinorJSON(vs, types, 0, conflicts, rounded)
		if !r || rounded["balance"] != 1 || rounded[`a"b`] != 1 {
			t.Errorf("%s: at scale 0, rounded %v %v", doc, r, rounded)
		}
		if got != `{"a\"b":2,"balance":4967}` && got != `{"balance":4967,"a\"b":2}` {
			t.Errorf("%s: minor at scale 0 %s", doc, got)
		}
	}
	if got, r := MinorJSON(nil, nil, 2, map[string]int{}, map[string]int{}); got != "" || r {
		t.Errorf("no values: minor %q %v, want empty", got, r)
	}
}

// TestPlanFieldsTypes: a field is typed by the first batch holding
// non-null values, gets a minor column when decimal, and keeps its type.
func TestPlanFieldsTypes(t *testing.T) {
	lim := FlatLimits{Fields: 10, ColumnBytes: 100, AmountScale: 2}
	batch := func(cards ...string) *FieldSet {
		var s FieldSet
		for _, c := range cards {
			vs := DataValues([]byte(c))
			for _, v := range vs {
				s.Add(v.Name, "string")
			}
			s.AddFieldValues(vs)
		}
		s.Add("note", "null")
		return &s
	}
	add, _, _ := PlanFields(nil, batch(`{"balance":"1.50","count":"3"}`, `{"balance":"2.125"}`), 1, lim, 100)
	types := TypesOf(nil, add, nil)
	// The scale is the limits' [cards] amount_scale, never the values' 3
	// decimals.
	if b := types["balance"]; b.Kind != KindDecimal || b.Scale != 2 || b.MinorColumn != "balance_minor" {
		t.Errorf("balance: %+v", b)
	}
	if c := types["count"]; c.Kind != KindInteger || c.MinorColumn != "" {
		t.Errorf("count: %+v", c)
	}
	if n := types["note"]; n.Kind != KindNull {
		t.Errorf("note: %+v", n)
	}
	// A later batch of another kind changes no type; the null field is
	// typed by its first values.
	_, update, _ := PlanFields(add, batch(`{"balance":"N/A","count":"x","note":"hi"}`), 2, lim, 100)
	types = TypesOf(add, nil, update)
	if types["balance"] != add[0].Type || types["count"].Kind != KindInteger || types["note"].Kind != KindText {
		t.Errorf("after a second batch: %+v", types)
	}
	// A minor column's name is unique among the view's columns.
	have := []FieldRow{{Name: "b_minor", Column: "b_minor", InFlatView: true}}
	add, _, _ = PlanFields(have, batch(`{"b":"1.5"}`), 3, lim, 100)
	if len(add) != 2 || add[0].Type.MinorColumn != "b_minor_2" {
		t.Errorf("minor column clash: %+v", add)
	}
}

// TestPlanFieldsNamesFieldsFirst: a decimal balance and the API's own
// balance_minor first seen in one batch: the API's field keeps its name,
// balance's minor column is balance_minor_2.
func TestPlanFieldsNamesFieldsFirst(t *testing.T) {
	var s FieldSet
	vs := DataValues([]byte(`{"balance":"1.50","balance_minor":"150"}`))
	for _, v := range vs {
		s.Add(v.Name, "string")
	}
	s.AddFieldValues(vs)
	add, _, _ := PlanFields(nil, &s, 1, FlatLimits{Fields: 10, ColumnBytes: 100}, 100)
	if len(add) != 2 || add[1].Column != "balance_minor" || add[0].Type.MinorColumn != "balance_minor_2" {
		t.Errorf("columns: %+v", add)
	}
}

// TestGrowth: a batch's decimals widen an integer field and never grow a
// decimal field's scale; other kinds and other types ask nothing;
// GrowTypes widens the rows as they are now, at the limits' amount scale,
// and names a widened field's minor column.
func TestGrowth(t *testing.T) {
	var s FieldSet
	s.AddFieldValues(DataValues([]byte(`{"a":"1.125","b":"2.5","c":"3.25","d":"x","e":"1.5","f":7}`)))
	types := map[string]FieldType{
		"a": {Kind: KindDecimal, Scale: 2, MinorColumn: "a_minor"},
		"b": {Kind: KindDecimal, Scale: 2, MinorColumn: "b_minor"},
		"c": {Kind: KindInteger},
		"d": {Kind: KindDecimal, Scale: 2},
		"e": {Kind: KindText},
		"f": {Kind: KindInteger},
	}
	want := s.Growth(types)
	if len(want) != 1 || want["c"].Kind != KindDecimal {
		t.Fatalf("Growth: %+v", want)
	}
	var none FieldSet
	if g := none.Growth(types); g != nil {
		t.Errorf("an empty batch grows %+v", g)
	}
	have := []FieldRow{
		{Name: "a", Column: "a", InFlatView: true, Type: FieldType{Kind: KindDecimal, Scale: 4, MinorColumn: "a_minor"}},
		{Name: "c", Column: "c", InFlatView: true, Type: FieldType{Kind: KindInteger}},
		{Name: "c_minor", Column: "c_minor", InFlatView: true, Type: FieldType{Kind: KindInteger}},
	}
	grown := GrowTypes(have, map[string]FieldType{"a": {Kind: KindDecimal, Scale: 9}, "c": want["c"]}, FlatLimits{Fields: 10, ColumnBytes: 100, AmountScale: 3})
	if len(grown) != 1 || grown[0].Name != "c" || grown[0].Type != (FieldType{Kind: KindDecimal, Scale: 3, MinorColumn: "c_minor_2"}) {
		t.Errorf("GrowTypes: %+v", grown)
	}
}

// FuzzCardValues: the classes a commit reads of a prepared card's values
// (cardValues of its Data and Fields) are those of its stored JSON's top-level members as encoding/json reads
// them, member for member, and reading the stored JSON again
// (DataValues, the upgrade's path) gives the same.
func FuzzCardValues(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"balance":"4966.76","n":null,"o":{"a":"}"},"l":[1,"]",{}],"t":"2025-03-01","b":true}`,
		`{"a\"b":"1.5","c\\d":12.340,"e":1e400,"f":"-0.07","g":"N/A"}`,
		`{"card_number":"4111 1111 1111 1111","cvv":"123","x":4111111111111111}`,
	} {
		f.Add([]byte(s))
	}
	policy := redact.NewPolicy(nil)
	f.Fuzz(func(t *testing.T, doc []byte) {
		it, err := load.PreparePageItems(load.NewItemRules(policy, nil, nil), load.Page{Number: 1, Cards: []load.Card{{ID: "1", Data: doc}}})
		if err != nil || len(it.Cards) != 1 {
			return
		}
		c := it.Cards[0]
		values := CardValues(c.Data, c.Fields)
		var members map[string]json.RawMessage
		if json.Unmarshal(c.Data, &members) != nil || bytes.Contains(c.Data, []byte(`\ud`)) {
			return // not an object, or a lone surrogate encoding/json reads otherwise
		}
		n := 0
		for _, v := range members {
			if ClassifyValue(v).Kind != KindNull {
				n++
			}
		}
		if len(values) != n {
			t.Fatalf("%s: %d values, want %d", c.Data, len(values), n)
		}
		again := DataValues(c.Data)
		for i, fv := range values {
			if want := ClassifyValue(members[fv.Name]); fv.Value != want {
				t.Fatalf("%s: field %q is %+v, want %+v", c.Data, fv.Name, fv.Value, want)
			}
			if i >= len(again) || again[i] != fv {
				t.Fatalf("%s: DataValues reads %+v, the commit %+v", c.Data, again, values)
			}
		}
	})
}
