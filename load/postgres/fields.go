package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/internal/english"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// Keys of the transaction-scoped advisory locks that serialize writers of
// the shared, account-less objects (next to migrationLock): card_fields'
// rows, the cards_flat view and column_docs' rows.
const (
	fieldsLock = migrationLock + 1
	flatLock   = migrationLock + 2
	docsLock   = migrationLock + 3
)

// flatLimits are cards_flat's bounds in PostgreSQL: a relation has at most
// 1,600 columns (three are card_id, removed_at and account) and a name at
// most 63 bytes (longer ones are cut by the server, which could make two
// columns one).
func flatLimits() cardfield.FlatLimits {
	return cardfield.FlatLimits{Fields: min(cardfield.MaxFlatFields, 1600-3), ColumnBytes: 63}
}

// fieldLimits are flatLimits with the scale card_fields gives a field
// typed decimal: amounts' Scale ([cards] amount_scale).
func fieldLimits(amounts load.AmountRules) cardfield.FlatLimits {
	lim := flatLimits()
	lim.AmountScale = amounts.Scale
	return lim
}

// pageFields collects the top-level fields of a page's cards for
// card_fields. A name PostgreSQL text cannot hold (NUL, invalid UTF-8) is
// left out: its card is quarantined anyway (pgUnstorable).
func pageFields(fields []load.Field) cardfield.FieldSet {
	var s cardfield.FieldSet
	for _, f := range fields {
		if clean(f.Name) == f.Name {
			s.Add(f.Name, f.Type)
		}
	}
	return s
}

// recordFields updates card_fields with a batch's fields inside the page
// commit's transaction (cardfield.PlanFields, within the walk's budget b) and
// stamps last_seen_at on every field it adds or updates. It reads the rows
// first and writes only when something changes, then under fieldsLock,
// reading them again: replicas of other accounts adding the same or
// case-colliding fields wait for each other instead of picking the same
// column name. It reports whether cards_flat must follow (syncFlat, after
// the commit), the new fields it left out and the types of card_fields'
// fields (a type is set under the lock too, so two replicas never give a
// field two types).
func (w *Warehouse) recordFields(ctx context.Context, tx pgx.Tx, runID, walkID int64, now time.Time, s *cardfield.FieldSet, b *cardfield.FieldBudget) (bool, []string, map[string]cardfield.FieldType, error) {
	if len(s.Names()) == 0 {
		return false, nil, nil, nil
	}
	if !b.Known() {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM card_fields
			WHERE first_run IN (SELECT run_id FROM sync_runs WHERE account = $1
				AND run_id >= (SELECT started_run FROM sync_walks WHERE walk_id = $2))`, w.account, walkID).Scan(&n); err != nil {
			return false, nil, nil, fmt.Errorf("count the walk's fields: %w", err)
		}
		b.Start(n)
	}
	have, err := readFields(ctx, tx)
	if err != nil {
		return false, nil, nil, err
	}
	if add, update, skipped := cardfield.PlanFields(have, s, runID, fieldLimits(w.amounts), b.Room()); len(add) == 0 && len(update) == 0 {
		return false, skipped, cardfield.TypesOf(have, nil, nil), nil
	}
	if err := advisoryLock(ctx, tx, fieldsLock, peerLockTimeout, "card_fields' lock (another replica is adding fields)"); err != nil {
		return false, nil, nil, err
	}
	if have, err = readFields(ctx, tx); err != nil {
		return false, nil, nil, err
	}
	add, update, skipped := cardfield.PlanFields(have, s, runID, fieldLimits(w.amounts), b.Room())
	flat, err := insertFields(ctx, tx, runID, now, add)
	if err != nil {
		return false, nil, nil, err
	}
	b.Added(len(add))
	typed, err := updateFields(ctx, tx, runID, now, have, update)
	if err != nil {
		return false, nil, nil, err
	}
	return flat || typed, skipped, cardfield.TypesOf(have, add, update), nil
}

// readFields reads card_fields in the order fields first appeared.
func readFields(ctx context.Context, tx pgx.Tx) ([]cardfield.FieldRow, error) {
	rows, err := tx.Query(ctx, `SELECT name, json_types, last_run, coalesce(column_name, ''), in_flat_view = 1, last_seen_at,
			type, coalesce(scale, 0), coalesce(minor_column, '')
		FROM card_fields ORDER BY first_run, first_seen_at, name COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("read fields: %w", err)
	}
	have, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cardfield.FieldRow, error) {
		var f cardfield.FieldRow
		var kind string
		var scale int32
		err := r.Scan(&f.Name, &f.JSONTypes, &f.LastRun, &f.Column, &f.InFlatView, &f.LastSeen, &kind, &scale, &f.Type.MinorColumn)
		f.Type.Kind, f.Type.Scale = cardfield.ParseKind(kind), int(scale)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("read fields: %w", err)
	}
	return have, nil
}

// PruneFields deletes the card_fields rows last seen before cutoff
// (cardfield.StaleFields) under fieldsLock, then, when one of them had a
// cards_flat column, re-creates cards_flat without it (followFlat: a view
// built on that column makes it a warning, not an error), as
// sqlite.Warehouse.PruneFields. It returns the number of rows deleted.
func (w *Warehouse) PruneFields(ctx context.Context, cutoff time.Time) (_ int, err error) {
	defer classify(&err)
	n, flat := 0, false
	err = w.write(ctx, func(tx pgx.Tx) error {
		n, flat = 0, false
		if err := advisoryLock(ctx, tx, fieldsLock, peerLockTimeout, "card_fields' lock (another replica is adding fields)"); err != nil {
			return err
		}
		have, err := readFields(ctx, tx)
		if err != nil {
			return err
		}
		stale := cardfield.StaleFields(have, cutoff)
		if len(stale) == 0 {
			return nil
		}
		names := make([]string, len(stale))
		for i, f := range stale {
			names[i] = f.Name
			flat = flat || f.InFlatView
		}
		if _, err := tx.Exec(ctx, `DELETE FROM card_fields WHERE name = ANY($1::text[])`, names); err != nil {
			return fmt.Errorf("delete %s: %w", english.Count(len(names), "field"), err)
		}
		n = len(stale)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune fields: %w", err)
	}
	if flat {
		w.followFlat(ctx)
	}
	return n, nil
}

// flatColumn is a field column of cards_flat, or (minor) a decimal
// field's minor-units column.
type flatColumn struct {
	name, field string
	minor       bool
}

// sqlType is the column's SQL type in cards_flat: flatType, or bigint for
// minor units.
func (c flatColumn) sqlType() string {
	if c.minor {
		return minorType
	}
	return flatType
}

// minorType is the SQL type of a minor-units column of cards_flat: exact
// integer minor units at the card's amount_scale, read from card_state.minor.
const minorType = "bigint"

// flatType is the SQL type of every field column of cards_flat: text
// (->>, numbers in the API's form, objects and arrays as jsonb text),
// whatever JSON types the field has held, so that a field whose JSON type
// changes (an id sent as a number, then as text) never changes its
// column's type and never needs the view dropped.
const flatType = "text"

// flatFixed are cards_flat's own columns, first so that a new field is a
// new last column.
var flatFixed = []string{"card_id", "removed_at", "account"}

// flatAction is what cards_flat needs to follow card_fields.
type flatAction int

const (
	flatCurrent  flatAction = iota // nothing: the view has the columns
	flatReplace                    // CREATE OR REPLACE VIEW: columns added at the end
	flatRecreate                   // DROP and CREATE: a column goes or changes type
)

// rowsQuerier is what planFlat reads through: a transaction or the pool.
type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// planFlat compares cards_flat with card_fields and returns what the view
// needs and the field columns it should have. It only reads.
func planFlat(ctx context.Context, q rowsQuerier) (flatAction, []flatColumn, error) {
	current, err := queryPairs(ctx, q, "cards_flat's columns", `SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = to_regclass('cards_flat') AND attnum > 0 AND NOT attisdropped ORDER BY attnum`)
	if err != nil {
		return 0, nil, err
	}
	fields, err := flatFields(ctx, q)
	if err != nil {
		return 0, nil, err
	}
	want := flatColumns(current, fields)
	have := make([]string, len(current))
	for i, c := range current {
		have[i] = c[0] + " " + c[1]
	}
	spec := make([]string, 0, len(flatFixed)+len(want))
	for _, c := range flatFixed {
		spec = append(spec, c+" ")
	}
	for _, c := range want {
		spec = append(spec, c.name+" "+c.sqlType())
	}
	same := len(current) > 0 && len(have) <= len(spec)
	for i := range have {
		same = same && (i < len(flatFixed) && strings.HasPrefix(have[i], spec[i]) || have[i] == spec[i])
	}
	switch {
	case same && len(have) == len(spec):
		return flatCurrent, want, nil
	case same || len(current) == 0:
		return flatReplace, want, nil
	default:
		return flatRecreate, want, nil
	}
}

// syncFlat brings cards_flat in line with card_fields, in a transaction
// of its own under flatLock (never inside a page commit, whose locks it
// would hold on to): nothing when the view already has the columns; CREATE
// OR REPLACE VIEW when the change only adds columns at the end (it locks
// the view alone, and views built on cards_flat survive); DROP and CREATE
// only when a column must go (its field pruned) or has another type (a
// view made by an older binary, whose columns could be numeric). Existing
// columns keep their place, and every field column is text (flatType).
// Neither is tried by a role that does not own the view, nor while
// another session holds it (canRecreateFlat): its readers would queue
// behind the ACCESS EXCLUSIVE lock; that lock is awaited at most
// flatLockTimeout.
//
// An error means cards_flat still has its old columns: callers log it,
// mark the view stale (flatStale) and go on; it never fails a run.
func (w *Warehouse) syncFlat(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if err := advisoryLock(ctx, tx, flatLock, peerLockTimeout, "cards_flat's lock (another replica is re-creating it)"); err != nil {
			return err
		}
		action, want, err := planFlat(ctx, tx)
		if err != nil || action == flatCurrent {
			return err
		}
		if err := canRecreateFlat(ctx, tx); err != nil {
			return err
		}
		// Every reader of cards_flat queues behind a pending ACCESS
		// EXCLUSIVE lock: never ask for it while a session holds the
		// view, and give up soon if one takes it meanwhile. The next
		// commit tries again.
		if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, millis(flatLockTimeout)); err != nil {
			return err
		}
		if action == flatReplace {
			_, err = tx.Exec(ctx, "SET LOCAL standard_conforming_strings = on;\nCREATE OR REPLACE VIEW "+flatViewSQL(want))
		} else {
			_, err = tx.Exec(ctx, "SET LOCAL standard_conforming_strings = on;\nDROP VIEW IF EXISTS cards_flat;\nCREATE VIEW "+flatViewSQL(want)+";\n"+flatComments())
		}
		if err != nil {
			return waitedFor(err, flatHeldWhat, flatLockTimeout)
		}
		w.log.Info("cards_flat re-created", "fields", len(want))
		return nil
	})
	if err != nil {
		return fmt.Errorf("re-create cards_flat: %w", err)
	}
	return nil
}

// flatHeldWhat is what a re-creation of cards_flat waits for.
const flatHeldWhat = "cards_flat, held by another session (an analyst's open transaction?)"

// canRecreateFlat refuses, before any lock is asked for, a re-creation of
// cards_flat that could not succeed or would stall its readers: a role
// that is not (a member of) the view's owner, or another session holding
// the view (flatHeld).
func canRecreateFlat(ctx context.Context, tx pgx.Tx) error {
	var owner, role string
	var member bool
	err := tx.QueryRow(ctx, `SELECT pg_get_userbyid(c.relowner)::text, current_user::text, pg_has_role(c.relowner, 'USAGE')
		FROM pg_class c WHERE c.oid = to_regclass('cards_flat')`).Scan(&owner, &role, &member)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read cards_flat's owner: %w", err)
	}
	if err == nil && !member {
		return fmt.Errorf("cards_flat is owned by role %s, not by role %s: it keeps its columns until a sync as %s (or ALTER VIEW cards_flat OWNER TO %s)", owner, role, owner, role)
	}
	held, err := flatHeld(ctx, tx)
	if err != nil {
		return fmt.Errorf("read cards_flat's locks: %w", err)
	}
	if held {
		return &LockTimeoutError{What: flatHeldWhat, Err: errors.New("not re-created while another session holds the view")}
	}
	return nil
}

// followFlat is syncFlat for the callers that must not fail on it (open,
// a commit, PruneFields): a cards_flat that cannot follow card_fields (a
// view built on it blocking a DROP, a lock, a permission) is logged as a
// warning and left stale (Summary's CardsFlatStale, the
// cardsync_cards_flat_stale gauge, status); the next commit tries again.
func (w *Warehouse) followFlat(ctx context.Context) {
	if err := w.syncFlat(ctx); err != nil {
		w.flatStale.Store(true)
		w.log.Warn("cards_flat not re-created; it keeps its old columns and the next commit tries again", "err", err)
		return
	}
	w.flatStale.Store(false)
}

// CardsFlatStale reports whether cards_flat lags behind card_fields: a
// column is missing, or one must go or change type and the view could not
// be re-created (see followFlat). It only reads, so a read-only open may
// call it.
func (w *Warehouse) CardsFlatStale(ctx context.Context) (_ bool, err error) {
	defer classify(&err)
	action, _, err := planFlat(ctx, w.pool)
	if err != nil {
		return false, fmt.Errorf("check cards_flat: %w", err)
	}
	return action != flatCurrent, nil
}

// flatFields are the columns card_fields gives cards_flat, in its order:
// each field in the view, then its minor-units column when it has one.
func flatFields(ctx context.Context, q rowsQuerier) ([]flatColumn, error) {
	rows, err := q.Query(ctx, `SELECT name, col, minor FROM (
			SELECT name, column_name AS col, false AS minor, first_run, first_seen_at FROM card_fields
			WHERE in_flat_view = 1 AND column_name IS NOT NULL
			UNION ALL
			SELECT name, minor_column, true, first_run, first_seen_at FROM card_fields
			WHERE in_flat_view = 1 AND minor_column IS NOT NULL) c
		ORDER BY first_run, first_seen_at, name COLLATE "C", minor`)
	if err != nil {
		return nil, fmt.Errorf("read card_fields: %w", err)
	}
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (c flatColumn, err error) {
		err = r.Scan(&c.field, &c.name, &c.minor)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("read card_fields: %w", err)
	}
	return cols, nil
}

// flatColumns are the field columns cards_flat should have: those it has
// still in card_fields, in their place, then the others in card_fields'
// order (so a minor-units column given to a known field comes last, and
// CREATE OR REPLACE adds it). fields are card_fields' columns of the view
// (flatFields).
func flatColumns(current [][2]string, fields []flatColumn) []flatColumn {
	byColumn := make(map[string]flatColumn, len(fields))
	for _, f := range fields {
		byColumn[f.name] = f
	}
	var out []flatColumn
	placed := map[string]bool{}
	for _, c := range current {
		f, ok := byColumn[c[0]] // never a fixed column: load reserves their names
		if !ok {
			continue
		}
		out = append(out, f)
		placed[f.name] = true
	}
	for _, f := range fields {
		if !placed[f.name] {
			out = append(out, f)
		}
	}
	return out
}

// flatViewSQL is the body of cards_flat's CREATE VIEW: card_state's fixed
// columns, then a jsonb lookup per field (the key as a string literal, the
// column as a quoted identifier; both come from the API), and per minor
// column the field's minor units from card_state.minor as bigint.
func flatViewSQL(cols []flatColumn) string {
	var b strings.Builder
	b.WriteString("cards_flat AS\nSELECT card_id, removed_at, account")
	for _, c := range cols {
		key := "'" + strings.ReplaceAll(c.field, "'", "''") + "'"
		b.WriteString(",\n    ")
		if c.minor {
			b.WriteString("(minor ->> " + key + ")::" + minorType)
		} else {
			b.WriteString("data ->> " + key)
		}
		b.WriteString(" AS " + pgx.Identifier{c.name}.Sanitize())
	}
	b.WriteString("\nFROM card_state")
	return b.String()
}

// queryPairs runs query, whose rows are two text columns, and returns them;
// its error names what was read.
func queryPairs(ctx context.Context, q rowsQuerier, what, query string) ([][2]string, error) {
	rows, err := q.Query(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	pairs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (p [2]string, err error) {
		err = r.Scan(&p[0], &p[1])
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return pairs, nil
}
