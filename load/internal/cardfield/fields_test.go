package cardfield

import (
	"testing"

	"github.com/cardsync/cardsync/load"
)

// TestFieldSetTypes: field types go through bit masks and come back as the
// names card_fields stores.
func TestFieldSetTypes(t *testing.T) {
	for i, name := range jsonTypes {
		if got := TypeBit(name); got != 1<<i {
			t.Errorf("TypeBit(%q) = %b, want %b", name, got, 1<<i)
		}
	}
	var s FieldSet
	s.Add("a", "string")
	s.Add("a", "null")
	s.Add("b", "object")
	add, _, _ := PlanFields(nil, &s, 1, FlatLimits{Fields: MaxFlatFields, ColumnBytes: 100}, load.MaxNewFieldsPerWalk)
	if len(add) != 2 || add[0].Name != "a" || add[0].JSONTypes != "null,string" || add[1].Name != "b" || add[1].JSONTypes != "object" {
		t.Errorf("PlanFields added %+v", add)
	}
	if !s.Within(map[string]TypeMask{"a": TypeBit("string") | TypeBit("null") | TypeBit("number"), "b": TypeBit("object")}) {
		t.Error("a subset is not within its superset")
	}
	if s.Within(map[string]TypeMask{"a": TypeBit("string"), "b": TypeBit("object")}) {
		t.Error("a new type of a known field is within")
	}
}
