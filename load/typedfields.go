package load

import (
	"strings"
)

// eachMember calls fn with the key (as written, between its quotes) and
// the value (as written) of each member of the JSON object doc, in order.
// doc is valid JSON (a card's stored data); anything else ends the walk.
func eachMember(doc []byte, fn func(key, value []byte)) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(doc, i)
		if i >= len(doc) || doc[i] != '"' {
			return
		}
		kEnd := skipString(doc, i)
		key := doc[i+1 : kEnd-1]
		i = skipSpace(doc, kEnd)
		if i >= len(doc) || doc[i] != ':' {
			return
		}
		i = skipSpace(doc, i+1)
		end := skipValue(doc, i)
		fn(key, doc[i:end])
		i = skipSpace(doc, end)
		if i >= len(doc) || doc[i] != ',' {
			return
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the offset after the string that starts at b[i].
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the offset after the value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[j])) {
		j++
	}
	return j
}

// DataValues classifies the non-null top-level values of a card's stored
// JSON data (canonical, or PostgreSQL's jsonb text): the upgrade of a
// warehouse made before card_fields had types reads its cards with it.
func DataValues(data []byte) []FieldValue {
	var out []FieldValue
	eachMember(data, func(key, raw []byte) {
		v := ClassifyValue(raw)
		if v.Kind == KindNull {
			return
		}
		out = append(out, FieldValue{Name: unquoteKey(string(key)), Value: v})
	})
	return out
}

// AddWritten adds to s the kinds of the values of the cards p writes
// (new, changed, returned), of the fields s holds: a type is decided by
// the first commit that stores non-null values of its field (an unchanged
// card's values were seen when it was stored).
func (s *FieldSet) AddWritten(p *PreparedPage) {
	for _, cs := range [][]CardWrite{p.fresh, p.writes} {
		for _, c := range cs {
			s.addKinds(c.values, true)
		}
	}
}

// AddFieldValues adds the kinds of vs, whatever their fields.
func (s *FieldSet) AddFieldValues(vs []FieldValue) { s.addKinds(vs, false) }

func (s *FieldSet) addKinds(vs []FieldValue, heldOnly bool) {
	for _, fv := range vs {
		if _, ok := s.types[fv.Name]; heldOnly && !ok {
			continue
		}
		if s.kinds == nil {
			s.kinds = map[string]kindSeen{}
		}
		k := s.kinds[fv.Name]
		k.add(fv.Value)
		s.kinds[fv.Name] = k
	}
}

// Decide is the type card_fields gives field name when the batch of s
// holds its first non-null values (KindNull: none).
func (s *FieldSet) Decide(name string) (Kind, int) { return s.kinds[name].decide() }

// typeField sets f's type from s when f has none yet (KindNull) and the
// batch holds non-null values of it, with a minor-units column for a
// decimal field in cards_flat while the view has room (*inView counts the
// view's columns). It reports whether it set the type.
func typeField(f *FieldRow, s *FieldSet, used map[string]bool, inView *int, lim FlatLimits) bool {
	if f.Type.Kind != KindNull {
		return false
	}
	kind, scale := s.Decide(f.Name)
	if kind == KindNull {
		return false
	}
	f.Type = FieldType{Kind: kind, Scale: scale}
	if kind == KindDecimal && f.Column != "" && *inView < lim.Fields {
		f.Type.MinorColumn = ColumnName(f.Column+"_minor", used, lim.ColumnBytes)
		*inView++
	}
	return true
}

// TypesOf are the field types of the rows have after a plan's add and
// update (PlanFields), by field name.
func TypesOf(have, add, update []FieldRow) map[string]FieldType {
	out := make(map[string]FieldType, len(have)+len(add))
	for _, rows := range [][]FieldRow{have, add, update} {
		for _, f := range rows {
			out[f.Name] = f.Type
		}
	}
	return out
}

// TypeExisting is the type rule applied to a warehouse's stored cards at
// once (the upgrade to typed fields): every field of have still without a
// type gets one from s, the kinds of all the stored cards' values. It
// returns the rows it typed.
func TypeExisting(have []FieldRow, s *FieldSet, lim FlatLimits) []FieldRow {
	used, inView := usedColumns(have)
	var typed []FieldRow
	for _, f := range have {
		if typeField(&f, s, used, &inView, lim) {
			typed = append(typed, f)
		}
	}
	return typed
}

// usedColumns are the lower-cased cards_flat column names rows take
// (field and minor-units columns) and how many of them are in the view.
func usedColumns(have []FieldRow) (map[string]bool, int) {
	used := map[string]bool{}
	inView := 0
	for _, f := range have {
		if f.Column != "" {
			used[strings.ToLower(f.Column)] = true
		}
		if f.InFlatView {
			inView++
		}
		if f.Type.MinorColumn != "" {
			used[strings.ToLower(f.Type.MinorColumn)] = true
			inView++
		}
	}
	return used, inView
}

// TypeUpgrade types the fields of a warehouse made before card_fields had
// types, from the cards it stores (schema: SQLite 13, PostgreSQL 10): See
// every stored card's data, Plan the types, then give each card its
// Minor. Both dialects read their cards in chunks around it.
type TypeUpgrade struct {
	seen  FieldSet
	types map[string]FieldType
	// Conflicts counts, per field, the stored values that do not fit the
	// type Plan gave it (card_fields.conflicts).
	Conflicts map[string]int
}

// See adds the kinds of a stored card's values (its data as stored).
func (u *TypeUpgrade) See(data []byte) { u.seen.AddFieldValues(DataValues(data)) }

// Plan types the fields of have still without a type, as one batch of
// every card seen would (TypeExisting), and returns the rows it typed.
func (u *TypeUpgrade) Plan(have []FieldRow, lim FlatLimits) []FieldRow {
	typed := TypeExisting(have, &u.seen, lim)
	u.types = TypesOf(have, nil, typed)
	u.Conflicts = map[string]int{}
	return typed
}

// Minor is card_state.minor of a stored card under the planned types
// ("": NULL), its conflicts counted.
func (u *TypeUpgrade) Minor(data []byte) string {
	return MinorJSON(DataValues(data), u.types, u.Conflicts)
}

// Growth is what the batch of s asks of the fields types holds: a decimal
// field whose written values have more decimals than its scale grows to
// their scale, and an integer field with a written decimal value widens to
// decimal at the scale of its decimals (integers fit any scale). Every
// other type stays (a value that does not fit is a conflict). nil: no
// field grows; a batch that writes no card costs nothing.
func (s *FieldSet) Growth(types map[string]FieldType) map[string]FieldType {
	var out map[string]FieldType
	for name, k := range s.kinds {
		if k.mask&(1<<KindDecimal) == 0 {
			continue
		}
		t, ok := types[name]
		switch {
		case !ok:
			continue
		case t.Kind == KindDecimal && k.scale > t.Scale:
			t.Scale = k.scale
		case t.Kind == KindInteger:
			t = FieldType{Kind: KindDecimal, Scale: k.scale}
		default:
			continue
		}
		if out == nil {
			out = map[string]FieldType{}
		}
		out[name] = t
	}
	return out
}

// writesNumbers: the batch of s writes an integer or a decimal value.
func (s *FieldSet) writesNumbers() bool {
	for _, k := range s.kinds {
		if k.mask&(1<<KindInteger|1<<KindDecimal) != 0 {
			return true
		}
	}
	return false
}

// GrowTypes applies want (FieldSet.Growth) to the rows card_fields holds
// now, in their order: a decimal field's scale becomes the larger of its
// own and want's, an integer field becomes decimal at want's scale, with a
// minor-units column in cards_flat while the view has room. Any other
// type stays. It returns the rows whose type changed; their cards' minor
// units must be recomputed (TypeUpgrade.Recompute) in the same
// transaction.
func GrowTypes(have []FieldRow, want map[string]FieldType, lim FlatLimits) []FieldRow {
	used, inView := usedColumns(have)
	var grown []FieldRow
	for _, f := range have {
		w, ok := want[f.Name]
		if !ok || w.Kind != KindDecimal {
			continue
		}
		switch {
		case f.Type.Kind == KindDecimal && w.Scale > f.Type.Scale:
			f.Type.Scale = w.Scale
		case f.Type.Kind == KindInteger:
			f.Type = FieldType{Kind: KindDecimal, Scale: w.Scale}
			if f.Column != "" && inView < lim.Fields {
				f.Type.MinorColumn = ColumnName(f.Column+"_minor", used, lim.ColumnBytes)
				inView++
			}
		default:
			continue
		}
		grown = append(grown, f)
	}
	return grown
}

// Recompute is the TypeUpgrade that recomputes stored cards' minor units
// under types, card_fields' types after a field grew (GrowTypes): Minor
// gives a card's card_state.minor and counts its misfits in Conflicts.
func Recompute(types map[string]FieldType) *TypeUpgrade {
	return &TypeUpgrade{types: types, Conflicts: map[string]int{}}
}

// GainsMinor reports whether a row of changed has a minor-units column
// its row in have (card_fields before the change) did not: cards_flat
// must then gain that column.
func GainsMinor(have, changed []FieldRow) bool {
	before := make(map[string]bool, len(have))
	for _, f := range have {
		before[f.Name] = f.Type.MinorColumn != ""
	}
	for _, f := range changed {
		if f.Type.MinorColumn != "" && !before[f.Name] {
			return true
		}
	}
	return false
}
