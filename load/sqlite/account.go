package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/sqlshare"
)

// Account snapshots: one row per account read, amounts in exact cents.

// SaveAccount stores one account snapshot for the run. Amounts are stored as
// cents; an amount with another scale is converted exactly or rejected.
func (w *Warehouse) SaveAccount(ctx context.Context, runID int64, a load.Account) (err error) {
	defer classify(&err)
	row, err := load.PrepareAccount(w.policy, a)
	if err != nil {
		return fmt.Errorf("save account: %w", err)
	}
	err = w.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO account_snapshots (`+sqlshare.AccountSnapshotColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, row.Args(runID, w.stamp(), w.account)...); err != nil {
			return err
		}
		if row.Secrets == 0 && row.Counts == (load.RuleCounts{}) {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE sync_runs SET secrets_redacted = secrets_redacted + ?,
				card_numbers_masked = card_numbers_masked + ?, codes_dropped = codes_dropped + ?, track_data_dropped = track_data_dropped + ?
			WHERE run_id = ? AND account = ?`,
			row.Secrets, row.Counts.CardNumbers, row.Counts.Codes, row.Counts.TrackData, runID, w.account)
		return err
	})
	if err != nil {
		return fmt.Errorf("save account: %w", err)
	}
	return nil
}

// RecordAccountError notes in sync_runs.account_error why the run took no
// account snapshot (the card walk goes on without it). The text is stored
// with card numbers masked; the caller removes secrets.
func (w *Warehouse) RecordAccountError(ctx context.Context, runID int64, msg string) (err error) {
	defer classify(&err)
	err = w.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE sync_runs SET account_error = ? WHERE run_id = ? AND account = ?`, w.redactText(msg), runID, w.account)
		return err
	})
	if err != nil {
		return fmt.Errorf("record account error of run %d: %w", runID, err)
	}
	return nil
}
