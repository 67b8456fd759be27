package cardfield

// FieldSet collects top-level fields and their JSON types in order of first
// appearance (card_fields' input, PlanFields). A set of types is a bit mask
// over jsonTypes. The zero value is empty and ready to use.
type FieldSet struct {
	order []string
	types map[string]TypeMask
	// kinds are the kinds of the fields' non-null values (AddValues).
	kinds map[string]kindSeen
}

// TypeMask is a set of JSON types, one bit per type (array, boolean, null,
// number, object, string).
type TypeMask uint8

// jsonTypes are the JSON types package redact reports, in card_fields'
// sorted order.
var jsonTypes = [...]string{"array", "boolean", "null", "number", "object", "string"}

// TypeBit is the TypeMask bit of the JSON type t.
func TypeBit(t string) TypeMask {
	for i, name := range jsonTypes {
		if t == name {
			return 1 << i
		}
	}
	return 1 << len(jsonTypes) // not a JSON type: never matches a known one
}

// Add records a value of JSON type typ in field name.
func (s *FieldSet) Add(name, typ string) { s.addMask(name, TypeBit(typ)) }

func (s *FieldSet) addMask(name string, m TypeMask) {
	if s.types == nil {
		s.types = map[string]TypeMask{}
	}
	old, ok := s.types[name]
	if !ok {
		s.order = append(s.order, name)
	}
	s.types[name] = old | m
}

// Merge adds o's fields and types to s, keeping the order of appearance.
func (s *FieldSet) Merge(o *FieldSet) {
	for _, name := range o.order {
		s.addMask(name, o.types[name])
	}
	for name, k := range o.kinds {
		if s.kinds == nil {
			s.kinds = map[string]kindSeen{}
		}
		m := s.kinds[name]
		m.merge(k)
		s.kinds[name] = m
	}
}

// Within says whether every field and type of s is in known.
func (s *FieldSet) Within(known map[string]TypeMask) bool {
	for name, m := range s.types {
		if k, ok := known[name]; !ok || m&^k != 0 {
			return false
		}
	}
	return true
}

// Into adds every field and type of s to known.
func (s *FieldSet) Into(known map[string]TypeMask) {
	for name, m := range s.types {
		known[name] |= m
	}
}

// Names are the fields of s in order of first appearance.
func (s *FieldSet) Names() []string { return s.order }
