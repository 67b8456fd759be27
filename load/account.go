package load

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cardsync/cardsync/account"
	"github.com/cardsync/cardsync/money"
)

// Account snapshots: one row per account read, amounts in exact cents.

// Account is one account read to store: the snapshot package extract
// decoded, and what the decoding noticed.
type Account struct {
	account.Snapshot
	// AmountsRounded says an amount came with more decimals than the amount
	// scale and was rounded half to even (Raw keeps the exact text).
	AmountsRounded bool
	// Raw is the account JSON as received; it is redacted before storage.
	Raw []byte
}

// SaveAccount stores one account snapshot for the run. Amounts are stored as
// cents; an amount with another scale is converted exactly or rejected.
func (w *Warehouse) SaveAccount(ctx context.Context, runID int64, a Account) (err error) {
	defer classify(&err)
	amounts := []*money.Amount{a.TransferAmount, a.ReachAmount, a.Authorizations, a.Balance, a.CardsBalance, a.AvailableRechargeBalance}
	names := []string{"transfer_amount", "reach_amount", "authorizations", "balance", "cards_balance", "available_recharge_balance"}
	minor := make([]any, len(amounts))
	for i, am := range amounts {
		if am == nil {
			continue
		}
		m, err := centsOf(*am)
		if err != nil {
			return fmt.Errorf("save account: %s: %w", names[i], err)
		}
		minor[i] = m
	}
	var raw any
	if len(a.Raw) > 0 {
		red, _, err := w.policy.JSON(a.Raw)
		if err != nil {
			return fmt.Errorf("save account: raw: %w: %w", ErrBadData, err)
		}
		raw = string(red)
	}
	err = w.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO account_snapshots (run_id, taken_at, name, email, timezone,
				transfer_amount_minor, reach_amount_minor, authorizations_minor, balance_minor, cards_balance_minor,
				available_recharge_balance_minor, available_to_apply_card_count, applied_card_count, raw, amounts_rounded, account)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			runID, w.stamp(), a.Name, a.Email, a.Timezone,
			minor[0], minor[1], minor[2], minor[3], minor[4], minor[5],
			a.AvailableToApplyCardCount, a.AppliedCardCount, raw, boolInt(a.AmountsRounded), w.account)
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

// ErrAmountScale is wrapped when an amount cannot be stored exactly in cents.
var ErrAmountScale = fmt.Errorf("%w: amount not representable in cents", ErrBadData)

// centsOf converts an amount of any scale to cents exactly.
func centsOf(a money.Amount) (int64, error) {
	m, s := a.Minor(), a.Scale()
	for ; s < 2; s++ {
		if m > (1<<63-1)/10 || m < (-1<<63)/10 {
			return 0, fmt.Errorf("%w: %s overflows", ErrAmountScale, a.String())
		}
		m *= 10
	}
	for ; s > 2; s-- {
		if m%10 != 0 {
			return 0, fmt.Errorf("%w: %s has more than 2 decimals", ErrAmountScale, a.String())
		}
		m /= 10
	}
	return m, nil
}
