// Package account holds the one shape of the account resource (GET
// /account) that the client decodes and the warehouse stores: Snapshot.
// It owns that type only; it must not do I/O, parse JSON or import any
// other cardsync package but money.
package account

import "github.com/cardsync/cardsync/money"

// Snapshot is what one read of the account says. Nil fields were null or
// absent upstream; amounts are exact decimals.
type Snapshot struct {
	Name, Email, Timezone *string

	TransferAmount, ReachAmount, Authorizations, Balance, CardsBalance, AvailableRechargeBalance *money.Amount

	AvailableToApplyCardCount, AppliedCardCount *int64
}
