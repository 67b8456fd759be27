package load

import (
	"fmt"
	"strconv"

	"github.com/cardsync/cardsync/account"
	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/redact"
)

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

// AccountRow is an account snapshot as account_snapshots stores it,
// whatever the database (a NULL is a nil pointer).
type AccountRow struct {
	Name, Email, Timezone *string
	// Minor are the amounts in exact cents in the order of the columns
	// transfer_amount_minor, reach_amount_minor, authorizations_minor,
	// balance_minor, cards_balance_minor and
	// available_recharge_balance_minor.
	Minor                                       [6]*int64
	AvailableToApplyCardCount, AppliedCardCount *int64
	// Raw is the account JSON redacted, in canonical form (nil: none was
	// received).
	Raw *string
	// AmountsRounded is 1 when an amount was rounded, else 0.
	AmountsRounded int16
	// Secrets counts the fields, and the strings, keys and numbers of Raw,
	// in which a secret was replaced (added to sync_runs.secrets_redacted).
	Secrets int
	// Counts are the card numbers, codes and track data the policy found
	// in Raw (added to sync_runs' counters of the same names).
	Counts RuleCounts
}

// Args are the values of the account snapshot's columns
// (load/internal/sqlshare.AccountSnapshotColumns): the row of run runID
// taken at takenAt for account.
func (r AccountRow) Args(runID int64, takenAt any, account string) []any {
	return []any{runID, takenAt, r.Name, r.Email, r.Timezone,
		r.Minor[0], r.Minor[1], r.Minor[2], r.Minor[3], r.Minor[4], r.Minor[5],
		r.AvailableToApplyCardCount, r.AppliedCardCount, r.Raw, r.AmountsRounded, account}
}

// PrepareAccount takes the database-independent steps of SaveAccount: the
// snapshot's fields mapped to account_snapshots' columns, each amount
// converted to cents exactly (ErrAmountScale, naming the field, when it
// cannot be), the text fields redacted as text (RedactText) and Raw as JSON
// by policy (ErrBadData when it cannot be walked). Raw's duplicate keys
// resolve as the decoded fields do: the last one wins.
func PrepareAccount(policy *redact.Policy, a Account) (AccountRow, error) {
	var row AccountRow
	row.AvailableToApplyCardCount = row.plainNumber(policy, a.AvailableToApplyCardCount)
	row.AppliedCardCount = row.plainNumber(policy, a.AppliedCardCount)
	for _, f := range []struct{ dst, src **string }{{&row.Name, &a.Name}, {&row.Email, &a.Email}, {&row.Timezone, &a.Timezone}} {
		if *f.src == nil {
			continue
		}
		s, scrubbed := policy.Text(**f.src)
		if scrubbed {
			row.Secrets++
		}
		*f.dst = &s
	}
	if a.AmountsRounded {
		row.AmountsRounded = 1
	}
	amounts := [...]*money.Amount{a.TransferAmount, a.ReachAmount, a.Authorizations, a.Balance, a.CardsBalance, a.AvailableRechargeBalance}
	names := [...]string{"transfer_amount", "reach_amount", "authorizations", "balance", "cards_balance", "available_recharge_balance"}
	for i, am := range amounts {
		if am == nil {
			continue
		}
		m, err := centsOf(*am)
		if err != nil {
			return AccountRow{}, fmt.Errorf("%s: %w", names[i], err)
		}
		if policy.HoldsSecret(am.String()) {
			// The API echoed the password or a token as an amount: the
			// column stays NULL (raw says [REDACTED]).
			row.Secrets++
			continue
		}
		if redact.PANs(am.String()) != am.String() {
			row.Counts.CardNumbers++ // a card number as an amount: NULL, as above
			continue
		}
		row.Minor[i] = row.plainNumber(policy, &m)
	}
	if len(a.Raw) > 0 {
		red, _, st, err := policy.JSONStats(a.Raw)
		row.Secrets += st.Secrets
		row.Counts.addStats(st)
		if err != nil {
			return AccountRow{}, fmt.Errorf("raw: %w: %w", ErrBadData, err)
		}
		// The policy keeps a top-level "id" as sent (a card's identity):
		// an account's id that holds a card number is stored masked.
		if o, masked := pseudonymizeData(policy, nil, red); masked {
			red = o
			row.Counts.CardNumbers++
		}
		raw := string(red)
		row.Raw = &raw
	}
	return row, nil
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

// plainNumber returns n, or nil when its decimal text holds the password
// or a token (counted in Secrets) or a card number (counted in
// Counts.CardNumbers): a number column can say neither [REDACTED] nor a
// masked number, so it stays NULL (raw shows the redacted value).
func (row *AccountRow) plainNumber(policy *redact.Policy, n *int64) *int64 {
	if n == nil {
		return nil
	}
	text := strconv.FormatInt(*n, 10)
	if policy.HoldsSecret(text) {
		row.Secrets++
		return nil
	}
	if redact.PANs(text) != text {
		row.Counts.CardNumbers++
		return nil
	}
	return n
}
