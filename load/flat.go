package load

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxFlatFields is how many field columns cards_flat holds at most. SQLite
// refuses a view of more than 2,000 columns; a field first seen after the
// view is full keeps card_fields.in_flat_view = 0 and stays reachable in
// cards.data.
const MaxFlatFields = 1900

// maxColumnName bounds a cards_flat column name in bytes; a longer field
// name is cut and given a short hash so two long names stay distinct.
const maxColumnName = 100

// fieldInfo is one row of card_fields.
type fieldInfo struct {
	types   string
	lastRun int64
}

// recordFields updates card_fields with the top-level fields of a page's
// cards (order: first appearance; seen: JSON types per field) and
// regenerates cards_flat when a field joins the view.
func (w *Warehouse) recordFields(ctx context.Context, tx *sql.Tx, runID int64, now string, order []string, seen map[string]map[string]bool) error {
	if len(order) == 0 {
		return nil
	}
	have := map[string]fieldInfo{}
	used := map[string]bool{}
	inView := 0
	rows, err := tx.QueryContext(ctx, `SELECT name, json_types, last_run, column_name, in_flat_view FROM card_fields`)
	if err != nil {
		return fmt.Errorf("read fields: %w", err)
	}
	for rows.Next() {
		var name string
		var k fieldInfo
		var column sql.NullString
		var flat bool
		if err := rows.Scan(&name, &k.types, &k.lastRun, &column, &flat); err != nil {
			rows.Close()
			return fmt.Errorf("read fields: %w", err)
		}
		have[name] = k
		if column.Valid {
			used[strings.ToLower(column.String)] = true
		}
		if flat {
			inView++
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read fields: %w", err)
	}
	added := false
	for _, name := range order {
		k, ok := have[name]
		types := map[string]bool{}
		for t := range seen[name] {
			types[t] = true
		}
		if ok {
			for t := range strings.SplitSeq(k.types, ",") {
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
			var column any
			flat := inView < MaxFlatFields
			if flat {
				column = columnName(name, used)
				inView++
				added = true
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO card_fields (name, json_types, first_run, last_run, first_seen_at, column_name, in_flat_view)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, name, joined, runID, runID, now, column, boolInt(flat)); err != nil {
				return fmt.Errorf("add field %q: %w", name, err)
			}
			have[name] = fieldInfo{types: joined, lastRun: runID}
		case joined != k.types || k.lastRun != runID:
			if _, err := tx.ExecContext(ctx, `UPDATE card_fields SET json_types = ?, last_run = ? WHERE name = ?`,
				joined, runID, name); err != nil {
				return fmt.Errorf("update field %q: %w", name, err)
			}
			have[name] = fieldInfo{types: joined, lastRun: runID}
		}
	}
	if added {
		return regenerateFlat(ctx, tx)
	}
	return nil
}

// reservedColumns are cards_flat's own columns.
var reservedColumns = []string{"card_id", "removed_at", "account"}

// columnName picks the cards_flat column of a field: the field name itself
// when it can be one, made unique case-insensitively (SQLite compares column
// names that way) with a _2, _3... suffix. Control characters become "_",
// an empty name becomes "field", and a name longer than maxColumnName bytes
// is cut and given a short hash. used holds the lower-cased names taken.
func columnName(name string, used map[string]bool) string {
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
	if len(clean) > maxColumnName {
		cut := maxColumnName - 9
		for cut > 0 && !utf8.RuneStart(clean[cut]) {
			cut--
		}
		sum := sha256.Sum256([]byte(name))
		clean = clean[:cut] + "_" + hex.EncodeToString(sum[:4])
	}
	alias := clean
	for i := 2; used[strings.ToLower(alias)]; i++ {
		alias = clean + "_" + strconv.Itoa(i)
	}
	used[strings.ToLower(alias)] = true
	return alias
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
