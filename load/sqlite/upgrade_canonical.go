package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/cardsync/cardsync/load"
)

// upgradeCanonical is migration 10's Go step. Release 5 stored card JSON
// with its members in the order received, duplicate keys included, and
// hashed that text: a card served in another member order was a new
// version. It rewrites every stored document into the current canonical
// form (members sorted, the last of duplicate keys kept; the secrets of
// Options.Secrets removed), in place:
//   - card_state.data, and data_hash computed again from it, so that the
//     next walk finds the same card unchanged;
//   - card_versions.data: history keeps its rows and versions, none added;
//   - account_snapshots.raw;
//   - rejected_cards.data, and data_sha256 from it (an item cut to
//     MaxRejectedBytes is no longer JSON and stays as it was).
//
// A document the policy refuses is left as it was, with a warning.
func (w *Warehouse) upgradeCanonical(ctx context.Context, tx *sql.Tx) error {
	canonical := func(data string) (string, error) {
		out, _, err := w.policy.JSON([]byte(data))
		return string(out), err
	}
	if err := w.rehashColumn(ctx, tx, "card_state", "data", "data_hash", []string{"account", "card_id"}, canonical,
		func(s string) any { return load.DataHash([]byte(s)) }); err != nil {
		return err
	}
	for _, t := range []struct {
		table, column string
		keys          []string
	}{
		{"card_versions", "data", []string{"account", "card_id", "version"}},
		{"account_snapshots", "raw", []string{"snapshot_id"}},
	} {
		if err := w.rewriteColumn(ctx, tx, t.table, t.column, t.keys, canonical); err != nil {
			return err
		}
	}
	return w.rehashColumn(ctx, tx, "rejected_cards", "data", "data_sha256", []string{"rejected_id"}, canonical,
		func(s string) any {
			sum := sha256.Sum256([]byte(s))
			return hex.EncodeToString(sum[:])
		})
}

// rehashColumn applies fn to every value of table.column and, where the
// value or its hash changes, stores the new value and hash(value) in
// hashColumn. A value fn refuses is left as it was, with a warning.
func (w *Warehouse) rehashColumn(ctx context.Context, tx *sql.Tx, table, column, hashColumn string, keys []string,
	fn func(string) (string, error), hash func(string) any) error {
	type row struct {
		key  []any
		text string
		hash any
	}
	var changed []row
	query := fmt.Sprintf(`SELECT %s, %s, %s FROM %s WHERE %s IS NOT NULL`, strings.Join(keys, ", "), column, hashColumn, table, column)
	err := eachRow(ctx, tx, query, nil, func(scan func(...any) error) error {
		key := make([]any, len(keys))
		dst := make([]any, len(keys)+2)
		for i := range key {
			dst[i] = &key[i]
		}
		var s string
		var old any
		dst[len(keys)], dst[len(keys)+1] = &s, &old
		if err := scan(dst...); err != nil {
			return err
		}
		out, err := fn(s)
		if err != nil {
			w.log.Warn("upgrade: a stored value cannot be made canonical; left as it was", "table", table, "key", key, "err", err)
			return nil
		}
		h := hash(out)
		if out != s || fmt.Sprint(h) != fmt.Sprint(old) {
			changed = append(changed, row{key, out, h})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("upgrade %s.%s: %w", table, column, err)
	}
	where := make([]string, len(keys))
	for i, k := range keys {
		where[i] = k + " = ?"
	}
	update := fmt.Sprintf(`UPDATE %s SET %s = ?, %s = ? WHERE %s`, table, column, hashColumn, strings.Join(where, " AND "))
	for _, r := range changed {
		if _, err := tx.ExecContext(ctx, update, append([]any{r.text, r.hash}, r.key...)...); err != nil {
			return fmt.Errorf("upgrade %s.%s: %w", table, column, err)
		}
	}
	if len(changed) > 0 {
		w.log.Info("upgrade: canonical form applied", "table", table, "column", column, "rows_changed", len(changed))
	}
	return nil
}
