package cardfield

import (
	"strings"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/jsonscan"
)

// DataValues classifies the non-null top-level values of a card's stored
// JSON data (canonical, or PostgreSQL's jsonb text): the upgrade of a
// warehouse made before card_fields had types reads its cards with it.
func DataValues(data []byte) []FieldValue {
	var out []FieldValue
	jsonscan.EachMember(data, func(key, raw []byte) {
		v := ClassifyValue(raw)
		if v.Kind == KindNull {
			return
		}
		out = append(out, FieldValue{Name: jsonscan.UnquoteKey(string(key)), Value: v})
	})
	return out
}

// AddWritten adds to s the kinds of vs, the values of a card a commit
// writes (new, changed, returned), of the fields s holds: a type is decided
// by the first commit that stores non-null values of its field (an
// unchanged card's values were seen when it was stored).
func (s *FieldSet) AddWritten(vs []FieldValue) { s.addKinds(vs, true) }

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

// Decide is the kind card_fields gives field name when the batch of s
// holds its first non-null values (KindNull: none).
func (s *FieldSet) Decide(name string) Kind { return s.kinds[name].decide() }

// typeField sets f's type from s when f has none yet (KindNull) and the
// batch holds non-null values of it, a decimal at lim.AmountScale (never
// the values' own decimals), with a minor-units column for a decimal
// field in cards_flat while the view has room (*inView counts the view's
// columns). It reports whether it set the type.
func typeField(f *FieldRow, s *FieldSet, used map[string]bool, inView *int, lim FlatLimits) bool {
	if f.Type.Kind != KindNull {
		return false
	}
	kind := s.Decide(f.Name)
	if kind == KindNull {
		return false
	}
	f.Type = FieldType{Kind: kind}
	if kind == KindDecimal {
		f.Type.Scale = lim.AmountScale
	}
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
// Card (Minor). Both dialects read their cards in chunks around it. The
// recompute of a widened field (Recompute) and of every card by the
// migration to currency scales (SQLite 17, PostgreSQL 14) use it too.
type TypeUpgrade struct {
	seen  FieldSet
	types map[string]FieldType
	// Rules give each card's scale (zero value: DefaultAmountRules).
	Rules *load.AmountRules
	// Conflicts counts, per field, the stored values that do not fit the
	// type Plan gave it (card_fields.conflicts).
	Conflicts map[string]int
	// Rounded counts, per field, the stored values rounded half to even
	// to their card's scale (card_fields.rounded).
	Rounded map[string]int
}

// See adds the kinds of a stored card's values (its data as stored).
func (u *TypeUpgrade) See(data []byte) { u.seen.AddFieldValues(DataValues(data)) }

// Plan types the fields of have still without a type, as one batch of
// every card seen would (TypeExisting), and returns the rows it typed.
func (u *TypeUpgrade) Plan(have []FieldRow, lim FlatLimits) []FieldRow {
	typed := TypeExisting(have, &u.seen, lim)
	u.types = TypesOf(have, nil, typed)
	u.Conflicts, u.Rounded = map[string]int{}, map[string]int{}
	return typed
}

// Minor is card_state.minor of a stored card under the planned types
// ("": NULL), at its scale by the rules, its conflicts and rounded
// values counted.
func (u *TypeUpgrade) Minor(data []byte) string { return u.Card(data, nil).Minor }

// StoredMoney is what card_state holds of a card's money besides its
// data: minor units, scale, currency and flag.
type StoredMoney struct {
	// Minor is card_state.minor ("": NULL).
	Minor string
	// Scale is card_state.amount_scale.
	Scale int
	// Currency is card_state.amount_currency ("": NULL).
	Currency string
	// Rounded is card_state.amounts_rounded.
	Rounded bool
}

// Card is the money of a stored card under the planned types: at the
// scale its currency gives by the rules, or at stored's when the card
// names no known currency and stored is not nil (the scale of the
// account that wrote it, which another account's recompute keeps), its
// conflicts and rounded values counted.
func (u *TypeUpgrade) Card(data []byte, stored *StoredMoney) StoredMoney {
	rules := load.DefaultAmountRules()
	if u.Rules != nil {
		rules = *u.Rules
	}
	m := rules.Of(data)
	if m.Currency == "" && stored != nil {
		m.Scale = stored.Scale
	}
	if u.Rounded == nil {
		u.Rounded = map[string]int{}
	}
	if u.Conflicts == nil {
		u.Conflicts = map[string]int{}
	}
	minor, rounded := MinorJSON(DataValues(data), u.types, m.Scale, u.Conflicts, u.Rounded)
	return StoredMoney{Minor: minor, Scale: m.Scale, Currency: m.Currency, Rounded: rounded}
}

// Growth is what the batch of s asks of the fields types holds: an
// integer field with a written decimal value widens to decimal (integers
// fit any scale). A decimal field never grows: its values are held at
// their card's scale (load.AmountRules), rounded when they have more decimals.
// Every other type stays (a value that does not fit is a conflict). nil:
// no field widens; a batch that writes no card costs nothing.
func (s *FieldSet) Growth(types map[string]FieldType) map[string]FieldType {
	var out map[string]FieldType
	for name, k := range s.kinds {
		if k.mask&(1<<KindDecimal) == 0 {
			continue
		}
		if t, ok := types[name]; !ok || t.Kind != KindInteger {
			continue
		}
		if out == nil {
			out = map[string]FieldType{}
		}
		out[name] = FieldType{Kind: KindDecimal}
	}
	return out
}

// WritesNumbers reports whether the batch of s writes an integer or a decimal value.
func (s *FieldSet) WritesNumbers() bool {
	for _, k := range s.kinds {
		if k.mask&(1<<KindInteger|1<<KindDecimal) != 0 {
			return true
		}
	}
	return false
}

// GrowTypes applies want (FieldSet.Growth) to the rows card_fields holds
// now, in their order: an integer field becomes decimal at
// lim.AmountScale, with a minor-units column in cards_flat while the view
// has room. Any other type stays. It returns the rows whose type changed;
// their cards' minor units must be recomputed (Recompute) in the same
// transaction.
func GrowTypes(have []FieldRow, want map[string]FieldType, lim FlatLimits) []FieldRow {
	used, inView := usedColumns(have)
	var grown []FieldRow
	for _, f := range have {
		w, ok := want[f.Name]
		if !ok || w.Kind != KindDecimal || f.Type.Kind != KindInteger {
			continue
		}
		f.Type = FieldType{Kind: KindDecimal, Scale: lim.AmountScale}
		if f.Column != "" && inView < lim.Fields {
			f.Type.MinorColumn = ColumnName(f.Column+"_minor", used, lim.ColumnBytes)
			inView++
		}
		grown = append(grown, f)
	}
	return grown
}

// Recompute is the TypeUpgrade that recomputes stored cards' money under
// types, card_fields' types after a field widened (GrowTypes) or the
// migration to currency scales, by rules: Card gives a card's money and
// counts its misfits in Conflicts and its rounded values in Rounded.
func Recompute(types map[string]FieldType, rules load.AmountRules) *TypeUpgrade {
	return &TypeUpgrade{types: types, Rules: &rules, Conflicts: map[string]int{}, Rounded: map[string]int{}}
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
