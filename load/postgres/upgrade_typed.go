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
	if err := eachCardChunk(ctx, tx, func(_, _ string, data []byte) error {
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
	if err := eachCardChunk(ctx, tx, func(account, id string, data []byte) error {
		minor := u.Minor(data)
		if minor == "" {
			return nil
		}
		_, err := tx.Exec(ctx, `UPDATE card_state SET minor = $3::jsonb WHERE account = $1 AND card_id = $2`, account, id, minor)
		return err
	}); err != nil {
		return fmt.Errorf("fill minor units: %w", err)
	}
	return addConflicts(ctx, tx, u.Conflicts)
}

// eachCardChunk calls fn with the account, id and data (jsonb's text) of
// every card_state row, reading typedChunk rows per query; fn runs
// between queries.
func eachCardChunk(ctx context.Context, tx pgx.Tx, fn func(account, id string, data []byte) error) error {
	type card struct {
		account, id string
		data        []byte
	}
	after := card{}
	for first := true; ; first = false {
		rows, err := tx.Query(ctx, `SELECT account, card_id, data::text FROM card_state
			WHERE $1 OR (account, card_id) > ($2, $3) ORDER BY account, card_id LIMIT $4`,
			first, after.account, after.id, typedChunk)
		if err != nil {
			return err
		}
		chunk, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (c card, err error) {
			var data string
			err = r.Scan(&c.account, &c.id, &data)
			c.data = []byte(data)
			return c, err
		})
		if err != nil {
			return err
		}
		for _, c := range chunk {
			if err := fn(c.account, c.id, c.data); err != nil {
				return err
			}
		}
		if len(chunk) < typedChunk {
			return nil
		}
		after = chunk[len(chunk)-1]
	}
}
