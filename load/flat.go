package load

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxFlatFields is how many field columns cards_flat holds at most. SQLite
// refuses a view of more than 2,000 columns; a field first seen after the
// view is full keeps card_fields.in_flat_view = 0 and stays reachable in
// cards.data.
const MaxFlatFields = 1900

// MaxNewFieldsPerWalk bounds how many fields one walk adds to card_fields
// (and so to cards_flat), across all its pages, batches and runs: the
// fields a walk finds beyond it stay in card_state.data only, with no
// card_fields row and no column. An API that puts ids or free text in its
// keys would otherwise grow card_fields and its index without end (200
// unique 1 KB names made a 488 MB warehouse). A later walk with room adds
// them.
const MaxNewFieldsPerWalk = 1000

// DefaultFieldRetention is how long a card_fields row stays after the last
// commit whose cards held its field: 90 days (config
// warehouse.field_retention). Older rows are pruned after a complete walk
// (PruneFields), and their cards_flat columns go with them.
const DefaultFieldRetention = 90 * 24 * time.Hour

// maxColumnName bounds a cards_flat column name in bytes; a longer field
// name is cut and given a short hash so two long names stay distinct.
const maxColumnName = 100

// FlatLimits bound a database's cards_flat view.
type FlatLimits struct {
	// Fields is how many field columns the view holds at most.
	Fields int
	// ColumnBytes bounds a column name in bytes: a longer field name is cut
	// and given a short hash, a suffix never makes it longer.
	ColumnBytes int
}

// SQLiteFlatLimits are the SQLite warehouse's bounds: MaxFlatFields
// columns, names of at most 100 bytes.
func SQLiteFlatLimits() FlatLimits {
	return FlatLimits{Fields: MaxFlatFields, ColumnBytes: maxColumnName}
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
func PlanFields(have []FieldRow, s *FieldSet, runID int64, lim FlatLimits, room int) (add, update []FieldRow, skipped []string) {
	byName := make(map[string]FieldRow, len(have))
	used := map[string]bool{}
	inView := 0
	for _, f := range have {
		byName[f.Name] = f
		if f.Column != "" {
			used[strings.ToLower(f.Column)] = true
		}
		if f.InFlatView {
			inView++
		}
	}
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
				f.Column = columnName(name, used, lim.ColumnBytes)
				inView++
			}
			add = append(add, f)
			byName[name] = f
		case joined != k.JSONTypes || k.LastRun != runID:
			k.JSONTypes, k.LastRun = joined, runID
			update = append(update, k)
			byName[name] = k
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
func (b *FieldBudget) Room() int { return max(0, MaxNewFieldsPerWalk-b.added) }

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

// recordFields updates card_fields with the top-level fields of a batch's
// cards (PlanFields), within the walk's budget b, stamps last_seen_at on
// every field it adds or updates, and regenerates cards_flat when a field
// joins the view. It returns the new fields it left out.
func (w *Warehouse) recordFields(ctx context.Context, tx *sql.Tx, runID, walkID int64, now string, s *FieldSet, b *FieldBudget) ([]string, error) {
	if len(s.order) == 0 {
		return nil, nil
	}
	if !b.Known() {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM card_fields
			WHERE first_run IN (SELECT run_id FROM sync_runs WHERE account = ?
				AND run_id >= (SELECT started_run FROM sync_walks WHERE walk_id = ?))`, w.account, walkID).Scan(&n); err != nil {
			return nil, fmt.Errorf("count the walk's fields: %w", err)
		}
		b.Start(n)
	}
	have, err := readFields(ctx, tx)
	if err != nil {
		return nil, err
	}
	add, update, skipped := PlanFields(have, s, runID, SQLiteFlatLimits(), b.Room())
	added := false
	for _, f := range add {
		var column any
		if f.Column != "" {
			column = f.Column
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO card_fields (name, json_types, first_run, last_run, first_seen_at, column_name, in_flat_view, last_seen_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, f.Name, f.JSONTypes, runID, runID, now, column, boolInt(f.InFlatView), now); err != nil {
			return nil, fmt.Errorf("add field %q: %w", f.Name, err)
		}
		added = added || f.InFlatView
	}
	b.Added(len(add))
	for _, f := range update {
		if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET json_types = ?, last_run = ?, last_seen_at = max(last_seen_at, ?) WHERE name = ?`,
			f.JSONTypes, f.LastRun, now, f.Name); err != nil {
			return nil, fmt.Errorf("update field %q: %w", f.Name, err)
		}
	}
	if added {
		return skipped, regenerateFlat(ctx, tx)
	}
	return skipped, nil
}

// readFields reads card_fields in the order fields first appeared.
func readFields(ctx context.Context, tx *sql.Tx) ([]FieldRow, error) {
	var have []FieldRow
	rows, err := tx.QueryContext(ctx, `SELECT name, json_types, last_run, coalesce(column_name, ''), in_flat_view, last_seen_at FROM card_fields ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("read fields: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f FieldRow
		var seen string
		if err := rows.Scan(&f.Name, &f.JSONTypes, &f.LastRun, &f.Column, &f.InFlatView, &seen); err != nil {
			return nil, fmt.Errorf("read fields: %w", err)
		}
		f.LastSeen = parseTime(seen)
		have = append(have, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read fields: %w", err)
	}
	return have, nil
}

// PruneFields deletes the card_fields rows last seen before cutoff
// (StaleFields) and regenerates cards_flat when one of them had a column
// there, in one transaction. card_fields is shared by the file's accounts:
// a field any account's commit saw since cutoff stays. The worker calls
// it after a complete walk, with cutoff now minus
// warehouse.field_retention. It returns the number of rows deleted.
func (w *Warehouse) PruneFields(ctx context.Context, cutoff time.Time) (_ int, err error) {
	defer classify(&err)
	n := 0
	err = w.write(ctx, func(tx *sql.Tx) error {
		have, err := readFields(ctx, tx)
		if err != nil {
			return err
		}
		flat := false
		stale := StaleFields(have, cutoff)
		for _, f := range stale {
			if _, err := tx.ExecContext(ctx, `DELETE FROM card_fields WHERE name = ?`, f.Name); err != nil {
				return fmt.Errorf("delete field: %w", err)
			}
			flat = flat || f.InFlatView
		}
		n = len(stale)
		if flat {
			return regenerateFlat(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune fields: %w", err)
	}
	return n, nil
}

// reservedColumns are cards_flat's own columns.
var reservedColumns = []string{"card_id", "removed_at", "account"}

// columnName picks the cards_flat column of a field: the field name itself
// when it can be one, made unique case-insensitively (SQLite compares column
// names that way) with a _2, _3... suffix. Control characters become "_",
// an empty name becomes "field", and a name longer than maxColumnName bytes
// is cut and given a short hash. used holds the lower-cased names taken.
// A suffix that would make the name longer than maxBytes cuts it further.
func columnName(name string, used map[string]bool, maxBytes int) string {
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

// regenerateFlat recreates the cards_flat view with one column per field in
// the view, in the order fields first appeared.
func regenerateFlat(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name, column_name FROM card_fields WHERE in_flat_view = 1 AND column_name IS NOT NULL ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	var fields [][2]string
	for rows.Next() {
		var n, c string
		if err := rows.Scan(&n, &c); err != nil {
			rows.Close()
			return fmt.Errorf("regenerate cards_flat: %w", err)
		}
		fields = append(fields, [2]string{n, c})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DROP VIEW IF EXISTS cards_flat"); err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	if _, err := tx.ExecContext(ctx, flatViewSQL(fields)); err != nil {
		return fmt.Errorf("regenerate cards_flat: %w", err)
	}
	return nil
}

// flatViewSQL builds CREATE VIEW cards_flat over card_state from (field
// name, column name) pairs, ending with the account column. Field names come
// from the API, so they are quoted as identifiers and string literals. A
// plain name is read with json_extract(data,
// '$."name"'), which works because card data is stored in canonical JSON
// (keys as UTF-8, no needless escapes). A name holding a quote, a backslash
// or a control character cannot be a path label: it is found by the key's
// canonical text in json_each's fullkey, which SQLite 3.40 and later render
// the same way.
func flatViewSQL(fields [][2]string) string {
	var b strings.Builder
	b.WriteString("CREATE VIEW cards_flat AS\nSELECT card_id")
	for _, f := range fields {
		name, column := f[0], f[1]
		b.WriteString(",\n    ")
		if strings.ContainsAny(name, "\"\\") || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) {
			b.WriteString("(SELECT value FROM json_each(card_state.data) WHERE fullkey = " + quoteLiteral(`$."`+canonicalKeyText(name)+`"`) + ")")
		} else {
			b.WriteString("json_extract(data, " + quoteLiteral(`$."`+name+`"`) + ")")
		}
		b.WriteString(" AS " + quoteIdent(column))
	}
	b.WriteString(",\n    removed_at,\n    account\nFROM card_state")
	return b.String()
}

// canonicalKeyText is a key's text inside the quotes of canonical JSON: '"'
// and '\' escaped, control characters as \b \f \n \r \t or \u00xx, all else
// as UTF-8. It must agree with package redact's canonical form.
func canonicalKeyText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

func quoteIdent(s string) string   { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteLiteral(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }
