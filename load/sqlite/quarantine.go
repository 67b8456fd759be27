package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"

	"github.com/cardsync/cardsync/load"
)

// quarantine stores one rejected item, or counts a repeat of the latest
// identical rejection (same card id, reason and data) so that an odd card
// upstream adds no row per run.
func (w *Warehouse) quarantine(ctx context.Context, tx *sql.Tx, runID int64, page int, r load.Rejection, now string) error {
	data := load.QuarantineData(w.rules, r.Data)
	sum := sha256.Sum256([]byte(data))
	digest := hex.EncodeToString(sum[:])
	reason := w.redactText(r.Reason)
	var cardID any
	if r.CardID != "" {
		cardID = r.CardID
	}
	res, err := tx.ExecContext(ctx, `UPDATE rejected_cards SET last_run_id = ?, last_rejected_at = ?, times = times + 1, page = ?
		WHERE rejected_id = (SELECT max(rejected_id) FROM rejected_cards
			WHERE account = ? AND card_id IS ? AND reason = ? AND data_sha256 = ?)`, runID, now, page, w.account, cardID, reason, digest)
	if err != nil {
		return fmt.Errorf("quarantine item %d: %w", r.Index, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO rejected_cards (run_id, page, card_id, reason, data, rejected_at, last_run_id, last_rejected_at, data_sha256, account)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, runID, page, cardID, reason, data, now, runID, now, digest, w.account); err != nil {
		return fmt.Errorf("quarantine item %d: %w", r.Index, err)
	}
	return nil
}

// redactText masks card numbers in text the warehouse stores (reasons,
// error messages) and removes the policy's secrets: the callers scrub
// secrets first; this is the last line.
func (w *Warehouse) redactText(s string) string { return load.RedactText(w.policy, s) }
