package sqlite

import (
	"context"
	"database/sql"

	"github.com/cardsync/cardsync/load"
)

// upgradeValueHash is migration 18's Go step: card_state.data_hash is
// computed again as load.DataHash, the hash of the card's hash form
// (numbers by exact value, strings in NFC), for every stored card whose
// hash that changes. data stays as it is and no version is added, so the
// next walk of an unchanged upstream writes nothing.
func (w *Warehouse) upgradeValueHash(ctx context.Context, tx *sql.Tx) error {
	same := func(data string) (string, error) { return data, nil }
	return w.rehashColumn(ctx, tx, "card_state", "data", "data_hash", []string{"account", "card_id"}, same,
		func(s string) any { return load.DataHash([]byte(s)) })
}
