package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// insertFields inserts the rows of new fields and reports whether one
// joined cards_flat.
func insertFields(ctx context.Context, tx pgx.Tx, runID int64, now time.Time, add []cardfield.FieldRow) (bool, error) {
	if len(add) == 0 {
		return false, nil
	}
	flat := false
	var names, types, columns, kinds, minors []string
	var inView []int16
	var scales []*int32
	for _, f := range add {
		names, types, columns = append(names, f.Name), append(types, f.JSONTypes), append(columns, f.Column)
		inView = append(inView, boolInt(f.InFlatView))
		kinds, scales, minors = append(kinds, f.Type.Kind.String()), append(scales, typeScale(f.Type)), append(minors, f.Type.MinorColumn)
		flat = flat || f.InFlatView
	}
	if _, err := tx.Exec(ctx, `INSERT INTO card_fields (name, json_types, first_run, last_run, first_seen_at, column_name, in_flat_view, last_seen_at,
			type, scale, minor_column)
		SELECT name, types, $1, $1, $2, nullif(col, ''), flat, $2, kind, scale, nullif(minor, '')
		FROM unnest($3::text[], $4::text[], $5::text[], $6::smallint[], $7::text[], $8::int[], $9::text[])
			WITH ORDINALITY AS t(name, types, col, flat, kind, scale, minor, ord)
		ORDER BY ord`, runID, now, names, types, columns, inView, kinds, scales, minors); err != nil {
		return false, fmt.Errorf("add %s: %w", english.Count(len(add), "field"), err)
	}
	return flat, nil
}

// updateFields writes the rows of known fields with a new JSON type, a
// new last run or a type just set, and reports whether one got a
// minor-units column (cards_flat must follow).
func updateFields(ctx context.Context, tx pgx.Tx, runID int64, now time.Time, have, update []cardfield.FieldRow) (bool, error) {
	if len(update) == 0 {
		return false, nil
	}
	var names, types, kinds, minors []string
	var scales []*int32
	for _, f := range update {
		// A new JSON type leaves cards_flat as it is: its columns
		// are text whatever the type (flatType).
		names, types = append(names, f.Name), append(types, f.JSONTypes)
		kinds, scales, minors = append(kinds, f.Type.Kind.String()), append(scales, typeScale(f.Type)), append(minors, f.Type.MinorColumn)
	}
	if _, err := tx.Exec(ctx, `UPDATE card_fields f SET json_types = u.types, last_run = greatest(f.last_run, $1),
			last_seen_at = greatest(f.last_seen_at, $4), type = u.kind, scale = u.scale, minor_column = nullif(u.minor, '')
		FROM unnest($2::text[], $3::text[], $5::text[], $6::int[], $7::text[]) AS u(name, types, kind, scale, minor) WHERE f.name = u.name`,
		runID, names, types, now, kinds, scales, minors); err != nil {
		return false, fmt.Errorf("update %s: %w", english.Count(len(update), "field"), err)
	}
	return cardfield.GainsMinor(have, update), nil
}

// typeScale is card_fields.scale of type t: its scale for a decimal, else
// NULL.
func typeScale(t cardfield.FieldType) *int32 {
	if t.Kind != cardfield.KindDecimal {
		return nil
	}
	s := int32(t.Scale)
	return &s
}
