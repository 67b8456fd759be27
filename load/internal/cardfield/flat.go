package cardfield

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cardsync/cardsync/load"
)

// MaxFlatFields is how many field columns cards_flat holds at most. SQLite
// refuses a view of more than 2,000 columns; a field first seen after the
// view is full keeps card_fields.in_flat_view = 0 and stays reachable in
// cards.data.
const MaxFlatFields = 1900

// FlatLimits bound a database's cards_flat view, and carry the scale
// card_fields gives a field typed decimal.
type FlatLimits struct {
	// Fields is how many field columns the view holds at most.
	Fields int
	// ColumnBytes bounds a column name in bytes: a longer field name is cut
	// and given a short hash, a suffix never makes it longer.
	ColumnBytes int
	// AmountScale is card_fields.scale of a field typed decimal: the
	// writer's [cards] amount_scale (AmountRules.Scale).
	AmountScale int
}

// FieldRow is one row of card_fields as the page commit reads and writes
// it.
type FieldRow struct {
	Name string
	// JSONTypes are the JSON types seen, sorted and joined with commas.
	JSONTypes string
	LastRun   int64
	// Column is the field's cards_flat column, "" when it has none.
	Column     string
	InFlatView bool
	// LastSeen is when a commit last saw the field (card_fields.last_seen_at).
	LastSeen time.Time
	// Type is card_fields.type, scale and minor_column: set from the first
	// batch that holds non-null values of the field; then an integer
	// widens to decimal (GrowTypes), and every other change is a conflict.
	Type FieldType
}

// PlanFields is card_fields' rule, shared by both warehouses: given the
// rows card_fields holds (in the order fields first appeared) and a batch's
// fields s, committed by run runID, it returns the rows to insert (fields
// not seen before, in order of appearance, each with a unique column name
// while the view has room), the rows to update (known fields with a new
// JSON type or last seen by another run; JSONTypes merged, LastRun runID)
// and the new fields left out because the walk may add only room more
// (FieldBudget.Room): those stay in the cards' data alone. The caller
// stamps last_seen_at on every row it inserts or updates.
//
// A field without a type (KindNull) whose batch holds non-null values gets
// one (FieldSet.Decide), with a minor-units column in cards_flat for a
// decimal field while the view has room (a minor column counts as a
// column of the view); such a row is added or updated. Every field's
// column is named before any minor-units column. A type once set changes
// only by an integer widening to decimal (FieldSet.Growth, GrowTypes).
func PlanFields(have []FieldRow, s *FieldSet, runID int64, lim FlatLimits, room int) (add, update []FieldRow, skipped []string) {
	byName := make(map[string]FieldRow, len(have))
	for _, f := range have {
		byName[f.Name] = f
	}
	used, inView := usedColumns(have)
	// Every field takes its column first, then the minor-units columns
	// are named: an API field called balance_minor keeps its own name
	// beside a decimal balance first seen in the same batch.
	for _, name := range s.order {
		k, ok := byName[name]
		if !ok && len(add) >= room {
			skipped = append(skipped, name)
			continue
		}
		types := map[string]bool{}
		for i, t := range jsonTypes {
			if s.types[name]&(1<<i) != 0 {
				types[t] = true
			}
		}
		if ok {
			for t := range strings.SplitSeq(k.JSONTypes, ",") {
				types[t] = true
			}
		}
		list := make([]string, 0, len(types))
		for t := range types {
			list = append(list, t)
		}
		slices.Sort(list)
		joined := strings.Join(list, ",")
		switch {
		case !ok:
			f := FieldRow{Name: name, JSONTypes: joined, LastRun: runID, InFlatView: inView < lim.Fields}
			if f.InFlatView {
				f.Column = ColumnName(name, used, lim.ColumnBytes)
				inView++
			}
			add = append(add, f)
		case joined != k.JSONTypes || k.LastRun != runID:
			k.JSONTypes, k.LastRun = joined, runID
			update = append(update, k)
			byName[name] = k
		}
	}
	for i := range add {
		typeField(&add[i], s, used, &inView, lim)
	}
	for i := range update {
		typeField(&update[i], s, used, &inView, lim)
	}
	for _, name := range s.order {
		// A known field typed now whose row did not change otherwise.
		if k, ok := byName[name]; ok && k.Type.Kind == KindNull && !slices.ContainsFunc(update, func(f FieldRow) bool { return f.Name == name }) &&
			typeField(&k, s, used, &inView, lim) {
			update = append(update, k)
		}
	}
	return add, update, skipped
}

// FieldBudget carries card_fields' per-walk bound (MaxNewFieldsPerWalk)
// from one commit of a walk to the next, in both warehouses: how many
// fields the walk has added, and which new fields the writer's commits
// left out, so that each is counted once (PageWriter.FieldsSkipped). The zero value knows nothing yet: the warehouse
// counts the walk's fields in card_fields first (Known, Start).
type FieldBudget struct {
	added   int
	known   bool
	seed    maphash.Seed
	skipped map[uint64]struct{}
}

// Known says whether Start has set the walk's count.
func (b *FieldBudget) Known() bool { return b.known }

// Start sets how many fields the walk added before this writer's first
// commit: card_fields rows whose first_run is one of the walk's runs.
func (b *FieldBudget) Start(added int) { b.added, b.known = added, true }

// Room is how many more fields the walk may add to card_fields.
func (b *FieldBudget) Room() int { return max(0, load.MaxNewFieldsPerWalk-b.added) }

// Added counts n more fields added to card_fields by the walk.
func (b *FieldBudget) Added(n int) { b.added += n }

// Skip notes the fields a committed batch left out (PlanFields' skipped).
// Only hashes of the names are kept: a walk may find very many.
func (b *FieldBudget) Skip(names []string) {
	if len(names) == 0 {
		return
	}
	if b.skipped == nil {
		b.seed = maphash.MakeSeed()
		b.skipped = map[uint64]struct{}{}
	}
	for _, name := range names {
		b.skipped[maphash.String(b.seed, name)] = struct{}{}
	}
}

// Skipped counts the distinct new fields the commits left out.
func (b *FieldBudget) Skipped() int { return len(b.skipped) }

// StaleFields is card_fields' retention rule, shared by both warehouses:
// the rows of have last seen before cutoff (now minus
// warehouse.field_retention). Call it after a complete walk only: such a
// walk saw every field the account's cards still hold, so a field it did
// not stamp is gone from them, or held by another account's cards that
// have not been walked within the retention either.
func StaleFields(have []FieldRow, cutoff time.Time) []FieldRow {
	// last_seen_at is stored to the second: a field stamped in the
	// second of cutoff is not older than it.
	cutoff = cutoff.Truncate(time.Second)
	var out []FieldRow
	for _, f := range have {
		if f.LastSeen.Before(cutoff) {
			out = append(out, f)
		}
	}
	return out
}

// reservedColumns are cards_flat's own columns.
var reservedColumns = []string{"card_id", "removed_at", "account"}

// ColumnName picks the cards_flat column of a field: the field name itself
// when it can be one, made unique case-insensitively (SQLite compares column
// names that way) with a _2, _3... suffix. Control characters become "_",
// an empty name becomes "field", and a name longer than maxColumnName bytes
// is cut and given a short hash. used holds the lower-cased names taken.
// A suffix that would make the name longer than maxBytes cuts it further.
func ColumnName(name string, used map[string]bool, maxBytes int) string {
	for _, r := range reservedColumns {
		used[r] = true
	}
	clean := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '_'
		}
		return r
	}, strings.ToValidUTF8(name, "_"))
	if clean == "" {
		clean = "field"
	}
	if len(clean) > maxBytes {
		sum := sha256.Sum256([]byte(name))
		clean = cutName(clean, maxBytes-9) + "_" + hex.EncodeToString(sum[:4])
	}
	alias := clean
	for i := 2; used[strings.ToLower(alias)]; i++ {
		suffix := "_" + strconv.Itoa(i)
		alias = cutName(clean, maxBytes-len(suffix)) + suffix
	}
	used[strings.ToLower(alias)] = true
	return alias
}

// cutName cuts s to at most n bytes on a rune boundary.
func cutName(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
