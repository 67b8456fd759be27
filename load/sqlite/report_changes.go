package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/money"
)

func reportChangedCards(ctx context.Context, tx *sql.Tx, d *load.ReportData, account, from, to string) error {
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM card_versions
		WHERE account = ? AND change = 'changed' AND valid_from >= ? AND valid_from <= ?`, account, from, to).Scan(&d.ChangedCardsTotal); err != nil {
		return err
	}
	err := eachRow(ctx, tx, `SELECT v.card_id, v.version, v.valid_from, v.run_id, p.data, v.data
		FROM card_versions v JOIN card_versions p ON p.account = v.account AND p.card_id = v.card_id AND p.version = v.version - 1
		WHERE v.account = ? AND v.change = 'changed' AND v.valid_from >= ? AND v.valid_from <= ?
		ORDER BY v.valid_from DESC, v.card_id, v.version DESC LIMIT ?`, []any{account, from, to, load.ReportCardChanges}, func(scan func(...any) error) error {
		var c load.CardChange
		var at string
		var before, after []byte
		if err := scan(&c.CardID, &c.Version, &at, &c.RunID, &before, &after); err != nil {
			return err
		}
		c.At = parseTime(at)
		c.Fields = fieldChanges(before, after)
		d.ChangedCards = append(d.ChangedCards, c)
		return nil
	})
	return err
}

// fieldChanges compares two stored card documents field by field. Stored
// documents are canonical JSON, so equal values have equal bytes; values
// keep their exact text (json.RawMessage: numbers are never parsed).
func fieldChanges(before, after []byte) []load.FieldChange {
	var b, a map[string]json.RawMessage
	if json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil {
		return []load.FieldChange{{Name: "(document)", Before: cut(string(before)), After: cut(string(after))}}
	}
	var out []load.FieldChange
	for name, av := range a {
		bv, ok := b[name]
		switch {
		case !ok:
			out = append(out, load.FieldChange{Name: name, After: cut(string(av)), Added: true})
		case !bytes.Equal(av, bv):
			out = append(out, load.FieldChange{Name: name, Before: cut(string(bv)), After: cut(string(av))})
		}
	}
	for name, bv := range b {
		if _, ok := a[name]; !ok {
			out = append(out, load.FieldChange{Name: name, Before: cut(string(bv)), Dropped: true})
		}
	}
	slices.SortFunc(out, func(x, y load.FieldChange) int {
		if x.Name < y.Name {
			return -1
		}
		if x.Name > y.Name {
			return 1
		}
		return 0
	})
	return out
}

// cut shortens s to at most ReportValueBytes bytes on a rune boundary,
// marking the cut with "…".
func cut(s string) string {
	if len(s) <= load.ReportValueBytes {
		return s
	}
	n := load.ReportValueBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// centsText is the exact decimal text of an amount in cents, as the views
// show it ('31337.07', '-0.07').
func centsText(minor int64) string { return money.FromMinor(minor, 2).String() }
