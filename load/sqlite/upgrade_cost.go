package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cardsync/cardsync/load"
)

// hashChunk is how many card rows upgradeRunCost hashes per query, so the
// upgrade's memory does not grow with the warehouse.
const hashChunk = 1000

// upgradeRunCost is migration 3's Go step: SQL has no SHA-256, so it fills
// card_state.data_hash for the rows already stored, in chunks of hashChunk
// cards in card_id order.
func (w *Warehouse) upgradeRunCost(ctx context.Context, tx *sql.Tx) error {
	after := ""
	for {
		type card struct {
			id   string
			hash []byte
		}
		var chunk []card
		err := eachRow(ctx, tx, `SELECT card_id, data FROM card_state WHERE card_id > ? ORDER BY card_id LIMIT ?`, []any{after, hashChunk},
			func(scan func(...any) error) error {
				var id, data string
				if err := scan(&id, &data); err != nil {
					return err
				}
				chunk = append(chunk, card{id, load.DataHash([]byte(data))})
				return nil
			})
		if err != nil {
			return fmt.Errorf("hash cards: %w", err)
		}
		for _, c := range chunk {
			if _, err := tx.ExecContext(ctx, `UPDATE card_state SET data_hash = ? WHERE card_id = ?`, c.hash, c.id); err != nil {
				return fmt.Errorf("hash card %s: %w", c.id, err)
			}
		}
		if len(chunk) < hashChunk {
			break
		}
		after = chunk[len(chunk)-1].id
	}
	return nil
}
