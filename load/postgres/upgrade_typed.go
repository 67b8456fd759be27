package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// typedChunk is how many cards typeFields reads per query, so the
// upgrade's memory does not grow with the warehouse.
const typedChunk = 1000

// typeFields is migration 10's Go step, as sqlite's migration 13: it types
// the fields card_fields holds from the cards already stored
// (cardfield.TypeUpgrade: their first values are every stored card's), then
// fills card_state.minor of each card with decimal values and counts the
// conflicts, reading the cards in chunks of typedChunk by (account,
// card_id). It runs under the migration lock, in the migration's
// transaction.
func typeFields(ctx context.Context, tx pgx.Tx, amounts load.AmountRules) error {
	var u cardfield.TypeUpgrade
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
	for _, f := range u.Plan(have, fieldLimits(amounts)) {
		if _, err := tx.Exec(ctx, `UPDATE card_fields SET type = $2, scale = $3, minor_column = nullif($4, '') WHERE name = $1`,
			f.Name, f.Type.Kind.String(), typeScale(f.Type), f.Type.MinorColumn); err != nil {
			return fmt.Errorf("type field %q: %w", f.Name, err)
		}
	}
	if err := fillMinor(ctx, tx, &u); err != nil {
		return err
	}
	return addConflicts(ctx, tx, u.Conflicts, nil)
}

// currencyScales is migration 14's Go step, as sqlite's migration 17: a
// decimal field's scale no longer grows with the most decimals seen.
// Every decimal field gets amounts' Scale ([cards] amount_scale of the
// process that migrates) as card_fields.scale, every stored card its money
// at its own scale (cardfield.Recompute: its currency's ISO 4217 minor unit,
// else that scale), the values with more decimals rounded half to even
// and marked, and every decimal field's conflicts and rounded are
// recounted from the cards stored.
func currencyScales(ctx context.Context, tx pgx.Tx, amounts load.AmountRules) error {
	if _, err := tx.Exec(ctx, `UPDATE card_fields SET scale = $1 WHERE type = 'decimal'`, amounts.Scale); err != nil {
		return fmt.Errorf("set the scale of decimal fields: %w", err)
	}
	have, err := readFields(ctx, tx)
	if err != nil {
		return err
	}
	u := cardfield.Recompute(cardfield.TypesOf(have, nil, nil), amounts)
	if err := fillMoney(ctx, tx, u); err != nil {
		return err
	}
	return recount(ctx, tx, have, u)
}

// recount sets card_fields.conflicts and rounded of the decimal fields of
// rows to what u found in the stored cards.
func recount(ctx context.Context, tx pgx.Tx, rows []cardfield.FieldRow, u *cardfield.TypeUpgrade) error {
	for _, f := range rows {
		if f.Type.Kind != cardfield.KindDecimal {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE card_fields SET conflicts = $2, rounded = $3 WHERE name = $1`,
			f.Name, u.Conflicts[f.Name], u.Rounded[f.Name]); err != nil {
			return fmt.Errorf("recount conflicts of field %q: %w", f.Name, err)
		}
	}
	return nil
}

// fillMoney sets card_state's minor, amount_scale, amount_currency and
// amounts_rounded of every card whose money under u (TypeUpgrade.Card,
// the card's stored scale kept when it names no known currency) differs
// from what it holds, counting its misfits and rounded values in u: the
// cards are read in chunks of typedChunk and updated with one statement
// per chunk.
func fillMoney(ctx context.Context, tx pgx.Tx, u *cardfield.TypeUpgrade) error {
	type card struct {
		account, id string
		data        []byte
		old         cardfield.StoredMoney
		has         bool // amount_scale is set
	}
	var accounts, ids []string
	var m moneyColumns
	flush := func() error {
		if len(ids) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, `UPDATE card_state c SET minor = u.minor::jsonb, amount_scale = u.scale, amount_currency = u.currency, amounts_rounded = u.rounded
			FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::smallint[]) AS u(account, id, minor, scale, currency, rounded)
			WHERE c.account = u.account AND c.card_id = u.id`, accounts, ids, m.minor, m.scale, m.currency, m.rounded)
		accounts, ids, m = accounts[:0], ids[:0], moneyColumns{}
		return err
	}
	after := card{}
	for first := true; ; first = false {
		rows, err := tx.Query(ctx, `SELECT account, card_id, data::text, coalesce(minor::text, ''), amount_scale IS NOT NULL,
				coalesce(amount_scale, 0), coalesce(amount_currency, ''), amounts_rounded = 1
			FROM card_state
			WHERE $1 OR (account, card_id) > ($2, $3) ORDER BY account, card_id LIMIT $4`,
			first, after.account, after.id, typedChunk)
		if err != nil {
			return fmt.Errorf("fill minor units: %w", err)
		}
		chunk, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (c card, err error) {
			var data string
			var scale int32
			err = r.Scan(&c.account, &c.id, &data, &c.old.Minor, &c.has, &scale, &c.old.Currency, &c.old.Rounded)
			c.data, c.old.Scale = []byte(data), int(scale)
			return c, err
		})
		if err != nil {
			return fmt.Errorf("fill minor units: %w", err)
		}
		for _, c := range chunk {
			var stored *cardfield.StoredMoney
			if c.has {
				stored = &c.old
			}
			got := u.Card(c.data, stored)
			if c.has && sameMoney(got, c.old) {
				continue
			}
			accounts, ids = append(accounts, c.account), append(ids, c.id)
			m.addMoney(got)
		}
		if err := flush(); err != nil {
			return fmt.Errorf("fill minor units: %w", err)
		}
		if len(chunk) < typedChunk {
			return nil
		}
		after = chunk[len(chunk)-1]
	}
}

// sameMoney: a and b are the same money, minor units compared as JSON
// (jsonb's text puts a space after each colon).
func sameMoney(a, b cardfield.StoredMoney) bool {
	return a.Scale == b.Scale && a.Currency == b.Currency && a.Rounded == b.Rounded && cardfield.SameMinor(a.Minor, b.Minor)
}

// fillMinor sets card_state.minor of every card that holds minor units
// or gets some under u's types, counting the misfits in u.Conflicts: the
// cards are read in chunks of typedChunk and updated with one statement
// per chunk.
func fillMinor(ctx context.Context, tx pgx.Tx, u *cardfield.TypeUpgrade) error {
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
// transaction, it widens the fields of want (cardfield.GrowTypes, at amounts'
// scale), recomputes every stored card's minor units (all accounts) under
// the widened types, each at its card's scale, and sets the widened
// fields' conflicts and rounded to the values found: the new type and the
// cards' minor units commit together. It reports whether a
// field gained a minor-units column (cards_flat follows after the
// commit, with CREATE OR REPLACE: the column comes last).
func growFields(ctx context.Context, tx pgx.Tx, want map[string]cardfield.FieldType, amounts load.AmountRules) (map[string]cardfield.FieldType, bool, error) {
	if err := advisoryLock(ctx, tx, fieldsLock, peerLockTimeout, "card_fields' lock (another replica is adding fields)"); err != nil {
		return nil, false, err
	}
	have, err := readFields(ctx, tx)
	if err != nil {
		return nil, false, err
	}
	grown := cardfield.GrowTypes(have, want, fieldLimits(amounts))
	flat := cardfield.GainsMinor(have, grown)
	for _, f := range grown {
		if _, err := tx.Exec(ctx, `UPDATE card_fields SET type = $2, scale = $3, minor_column = nullif($4, '') WHERE name = $1`,
			f.Name, f.Type.Kind.String(), typeScale(f.Type), f.Type.MinorColumn); err != nil {
			return nil, false, fmt.Errorf("grow field %q: %w", f.Name, err)
		}
	}
	types := cardfield.TypesOf(have, nil, grown)
	if len(grown) == 0 {
		return types, false, nil
	}
	u := cardfield.Recompute(types, amounts)
	if err := fillMoney(ctx, tx, u); err != nil {
		return nil, false, err
	}
	if err := recount(ctx, tx, grown, u); err != nil {
		return nil, false, err
	}
	return types, flat, nil
}

// numberTypes is batchTx.NumberTypes: card_fields' integer and decimal
// types, read under fieldsLock shared, held to the commit, so no growth
// (which takes it exclusive) commits between the read and this
// transaction's cards. A transaction that holds the lock exclusive
// (recordFields, growFields) is granted it at once; the shared lock is
// the last one a commit asks for.
func numberTypes(ctx context.Context, tx pgx.Tx) (map[string]cardfield.FieldType, error) {
	if err := advisoryLockShared(ctx, tx, fieldsLock, peerLockTimeout, "card_fields' lock (another replica is widening a field to decimal)"); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT name, type, coalesce(scale, 0), coalesce(minor_column, '') FROM card_fields WHERE type IN ('integer', 'decimal')`)
	if err != nil {
		return nil, fmt.Errorf("read number fields' types: %w", err)
	}
	out := map[string]cardfield.FieldType{}
	var name, kind string
	var t cardfield.FieldType
	var scale int32
	if _, err := pgx.ForEachRow(rows, []any{&name, &kind, &scale, &t.MinorColumn}, func() error {
		t.Kind, t.Scale = cardfield.ParseKind(kind), int(scale)
		out[name] = t
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read number fields' types: %w", err)
	}
	return out, nil
}
