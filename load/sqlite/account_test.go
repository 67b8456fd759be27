package sqlite

import (
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"

	"github.com/cardsync/cardsync/account"
	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/redact"
)

func TestSaveAccountExactMoney(t *testing.T) {
	tests := []struct {
		name  string
		json  string // the amount as the API sends it
		minor sql.NullInt64
		text  sql.NullString // account_balances
	}{
		{"string cents", `"0.10"`, sql.NullInt64{Int64: 10, Valid: true}, sql.NullString{String: "0.10", Valid: true}},
		{"number one decimal", `98765.4`, sql.NullInt64{Int64: 9876540, Valid: true}, sql.NullString{String: "98765.40", Valid: true}},
		{"16 digits string", `"12345678901234.56"`, sql.NullInt64{Int64: 1234567890123456, Valid: true}, sql.NullString{String: "12345678901234.56", Valid: true}},
		{"16 digits number", `99999999999999.99`, sql.NullInt64{Int64: 9999999999999999, Valid: true}, sql.NullString{String: "99999999999999.99", Valid: true}},
		{"negative cents", `"-0.07"`, sql.NullInt64{Int64: -7, Valid: true}, sql.NullString{String: "-0.07", Valid: true}},
		{"negative number", `-12.07`, sql.NullInt64{Int64: -1207, Valid: true}, sql.NullString{String: "-12.07", Valid: true}},
		{"zero", `0`, sql.NullInt64{Int64: 0, Valid: true}, sql.NullString{String: "0.00", Valid: true}},
		{"exponent", `1.5e2`, sql.NullInt64{Int64: 15000, Valid: true}, sql.NullString{String: "150.00", Valid: true}},
		{"null", `null`, sql.NullInt64{}, sql.NullString{}},
	}
	w, _, _ := openTest(t, load.Options{})
	ctx := t.Context()
	run := startRun(t, w)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := money.ParseJSON([]byte(tt.json), 2)
			if err != nil {
				t.Fatal(err)
			}
			name := "Acme " + tt.name
			count := int64(3)
			acct := load.Account{Snapshot: account.Snapshot{Name: &name, Balance: a, CardsBalance: a, AvailableRechargeBalance: a,
				TransferAmount: a, ReachAmount: a, Authorizations: a, AppliedCardCount: &count},
				Raw: []byte(`{"name":"` + name + `","balance":` + tt.json + `}`)}
			if err := w.SaveAccount(ctx, run, acct); err != nil {
				t.Fatal(err)
			}
			var minor sql.NullInt64
			var texts [6]sql.NullString
			var applied sql.NullInt64
			err = w.db.QueryRowContext(ctx, `SELECT s.balance_minor, b.transfer_amount, b.reach_amount, b.authorizations,
					b.balance, b.cards_balance, b.available_recharge_balance, b.applied_card_count
				FROM account_snapshots s JOIN account_balances b USING (snapshot_id)
				ORDER BY snapshot_id DESC LIMIT 1`).
				Scan(&minor, &texts[0], &texts[1], &texts[2], &texts[3], &texts[4], &texts[5], &applied)
			if err != nil {
				t.Fatal(err)
			}
			if minor != tt.minor {
				t.Errorf("balance_minor = %+v, want %+v", minor, tt.minor)
			}
			for i, got := range texts {
				if got != tt.text {
					t.Errorf("account_balances column %d = %+v, want %+v", i, got, tt.text)
				}
			}
			if a != nil && tt.text.String != a.String() {
				t.Errorf("view text %q differs from money.Amount.String %q", tt.text.String, a.String())
			}
			if applied.Int64 != 3 {
				t.Errorf("applied_card_count = %+v", applied)
			}
		})
	}
	// Raw keeps the exact number text.
	if got := queryString(t, w, `SELECT raw FROM account_snapshots WHERE name = 'Acme number one decimal'`); !strings.Contains(got, `"balance":98765.4,`) {
		t.Errorf("raw = %s, want the number text kept", got)
	}
	// Changes between snapshots as exact text.
	if got := queryString(t, w, `SELECT old_value || ' -> ' || new_value || ' = ' || change FROM account_balance_changes
		WHERE amount = 'balance' AND new_value = '-0.07'`); got != "99999999999999.99 -> -0.07 = -100000000000000.06" {
		t.Errorf("account_balance_changes = %q", got)
	}
}

// TestAccountNumbersCarryingSecrets: an amount or a count of the account
// whose text is the password (or holds a token) stays NULL in its typed
// column, counted, since a number column cannot say [REDACTED]; raw says
// it; ordinary numbers are kept.
func TestAccountNumbersCarryingSecrets(t *testing.T) {
	const password = "31415926535897932"
	secrets := &redact.Secrets{}
	secrets.Add(password)
	policy := redact.NewSecretPolicy(nil, secrets)
	bal, err := money.ParseJSON([]byte(password), 2)
	if err != nil {
		t.Fatal(err)
	}
	ok, _ := money.ParseJSON([]byte(`"12.34"`), 2)
	count, fine := int64(31415926535897932), int64(3)
	a := load.Account{Snapshot: account.Snapshot{Balance: bal, CardsBalance: ok, AvailableToApplyCardCount: &count, AppliedCardCount: &fine},
		Raw: []byte(`{"balance":` + password + `,"cards_balance":"12.34","available_to_apply_card_count":` + password + `,"applied_card_count":3}`)}
	row, err := load.PrepareAccount(policy, a)
	if err != nil {
		t.Fatal(err)
	}
	if row.Minor[3] != nil || row.AvailableToApplyCardCount != nil {
		t.Errorf("balance_minor %v, available_to_apply_card_count %v: want NULL for the password's digits", row.Minor[3], row.AvailableToApplyCardCount)
	}
	if row.Minor[4] == nil || *row.Minor[4] != 1234 || row.AppliedCardCount == nil || *row.AppliedCardCount != 3 {
		t.Errorf("ordinary numbers lost: cards_balance %v, applied_card_count %v", row.Minor[4], row.AppliedCardCount)
	}
	if row.Raw == nil || strings.Contains(*row.Raw, password[:8]) || row.Secrets < 4 {
		t.Errorf("raw %v, secrets %d: want the password out of raw and every removal counted", row.Raw, row.Secrets)
	}
}

// TestSaveAccountRefusesSubCent: an amount finer than a cent is refused
// with load.ErrAmountScale (load.Cents is the rule).
func TestSaveAccountRefusesSubCent(t *testing.T) {
	w, _, _ := openTest(t, load.Options{})
	bad := money.FromMinor(1234, 3)
	if err := w.SaveAccount(t.Context(), startRun(t, w), load.Account{Snapshot: account.Snapshot{Balance: &bad}}); !errors.Is(err, load.ErrAmountScale) {
		t.Errorf("SaveAccount with 1.234 = %v, want load.ErrAmountScale", err)
	}
}
