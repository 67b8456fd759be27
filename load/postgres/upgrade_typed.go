package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
)

// typedChunk is how many cards typeFields reads per query, so the
// upgrade's memory does not grow with the warehouse.
const typedChunk = 1000

// typeFields is migration 10's Go step, as sqlite's migration 13: it types
// the fields card_fields holds from the cards already stored
// (load.TypeUpgrade: their first values are every stored card's), then
// fills card_state.minor of each card with decimal values and counts the
// conflicts, reading the cards in chunks of typedChunk by (account,
// card_id). It runs under the migration lock, in the migration's
// transaction.
func typeFields(ctx context.Context, tx pgx.Tx) error {
	var u load.TypeUpgrade
	if err := eachCardChunk(ctx, tx, func(_, _ string, data []byte, _ bool) error {
		u.See(data)
		return nil
	}); err != nil {
		return fmt.Errorf("type fields: %w", err)
	}
	have, err := readFields(ctx, tx)
	if err != nil {
		return err
	}
	for _, f := range u.Plan(have, flatLimits()) {
		if _, err := tx.Exec(ctx, `UPDATE card_fields SET type = $2, scale = $3, minor_column = nullif($4, '') WHERE name = $1`,
			f.Name, f.Type.Kind.String(), typeScale(f.Type), f.Type.MinorColumn); err != nil {
			return fmt.Errorf("type field %q: %w", f.Name, err)
		}
	}
	if err := fillMinor(ctx, tx, &u); err != nil {
		return err
	}
	return addConflicts(ctx, tx, u.Conflicts)
}

// fillMinor sets card_state.minor of every card that holds minor units
// or gets some under u's types, counting the misfits in u.Conflicts: the
// cards are read in chunks of typedChunk and updated with one statement
// per chunk.
func fillMinor(ctx context.Context, tx pgx.Tx, u *load.TypeUpgrade) error {
	var accounts, ids, minors []string
	flush := func() error {
		if len(ids) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, `UPDATE card_state c SET minor = nullif(u.minor, '')::jsonb
			FROM unnest($1::text[], $2::text[], $3::text[]) AS u(account, id, minor)
			WHERE c.account = u.account AND c.card_id = u.id`, accounts, ids, minors)
		accounts, ids, minors = accounts[:0], ids[:0], minors[:0]
		return err
	}
	err := eachCardChunk(ctx, tx, func(account, id string, data []byte, had bool) error {
		minor := u.Minor(data)
		if minor == "" && !had {
			return nil
		}
		accounts, ids, minors = append(accounts, account), append(ids, id), append(minors, minor)
		if len(ids) < typedChunk {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("fill minor units: %w", err)
	}
	return nil
}

// eachCardChunk calls fn with the account, id, data (jsonb's text) and
// whether minor is set of every card_state row, reading typedChunk rows per query; fn runs
// between queries.
func eachCardChunk(ctx context.Context, tx pgx.Tx, fn func(account, id string, data []byte, minor bool) error) error {
	type card struct {
		account, id string
		data        []byte
		minor       bool
	}
	after := card{}
	for first := true; ; first = false {
		rows, err := tx.Query(ctx, `SELECT account, card_id, data::text, minor IS NOT NULL FROM card_state
			WHERE $1 OR (account, card_id) > ($2, $3) ORDER BY account, card_id LIMIT $4`,
			first, after.account, after.id, typedChunk)
		if err != nil {
			return err
		}
		chunk, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (c card, err error) {
			var data string
			err = r.Scan(&c.account, &c.id, &data, &c.minor)
			c.data = []byte(data)
			return c, err
		})
		if err != nil {
			return err
		}
		for _, c := range chunk {
			if err := fn(c.account, c.id, c.data, c.minor); err != nil {
				return err
			}
		}
		if len(chunk) < typedChunk {
			return nil
		}
		after = chunk[len(chunk)-1]
	}
}

// growFields is batchTx.GrowFields: under fieldsLock, in the commit's
// transaction, it grows the fields of want (load.GrowTypes), recomputes
// every stored card's minor units (all accounts) under the grown types
// and sets the grown fields' conflicts to the misfits found: the new
// scale and the cards' minor units commit together. It reports whether a
// field gained a minor-units column (cards_flat follows after the
// commit, with CREATE OR REPLACE: the column comes last).
func growFields(ctx context.Context, tx pgx.Tx, want map[string]load.FieldType) (map[string]load.FieldType, bool, error) {
	if err := advisoryLock(ctx, tx, fieldsLock, peerLockTimeout, "card_fields' lock (another replica is adding fields)"); err != nil {
		return nil, false, err
	}
	have, err := readFields(ctx, tx)
	if err != nil {
		return nil, false, err
	}
	grown := load.GrowTypes(have, want, flatLimits())
	flat := load.GainsMinor(have, grown)
	for _, f := range grown {
		if _, err := tx.Exec(ctx, `UPDATE card_fields SET type = $2, scale = $3, minor_column = nullif($4, '') WHERE name = $1`,
			f.Name, f.Type.Kind.String(), typeScale(f.Type), f.Type.MinorColumn); err != nil {
			return nil, false, fmt.Errorf("grow field %q: %w", f.Name, err)
		}
	}
	types := load.TypesOf(have, nil, grown)
	if len(grown) == 0 {
		return types, false, nil
	}
	u := load.Recompute(types)
	if err := fillMinor(ctx, tx, u); err != nil {
		return nil, false, err
	}
	for _, f := range grown {
		if _, err := tx.Exec(ctx, `UPDATE card_fields SET conflicts = $2 WHERE name = $1`, f.Name, u.Conflicts[f.Name]); err != nil {
			return nil, false, fmt.Errorf("recount conflicts of field %q: %w", f.Name, err)
		}
	}
	return types, flat, nil
}

// numberTypes is batchTx.NumberTypes: card_fields' integer and decimal
// types, read under fieldsLock shared, held to the commit, so no growth
// (which takes it exclusive) commits between the read and this
// transaction's cards. A transaction that holds the lock exclusive
// (recordFields, growFields) is granted it at once; the shared lock is
// the last one a commit asks for.
func numberTypes(ctx context.Context, tx pgx.Tx) (map[string]load.FieldType, error) {
	if err := advisoryLockShared(ctx, tx, fieldsLock, peerLockTimeout, "card_fields' lock (another replica is growing a field's scale)"); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT name, type, coalesce(scale, 0), coalesce(minor_column, '') FROM card_fields WHERE type IN ('integer', 'decimal')`)
	if err != nil {
		return nil, fmt.Errorf("read number fields' types: %w", err)
	}
	out := map[string]load.FieldType{}
	var name, kind string
	var t load.FieldType
	var scale int32
	if _, err := pgx.ForEachRow(rows, []any{&name, &kind, &scale, &t.MinorColumn}, func() error {
		t.Kind, t.Scale = load.ParseKind(kind), int(scale)
		out[name] = t
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read number fields' types: %w", err)
	}
	return out, nil
}
