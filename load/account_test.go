package load

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/account"
	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/redact/redacttest"
)

func TestCentsOf(t *testing.T) {
	tests := []struct {
		in      money.Amount
		want    int64
		wantErr bool
	}{
		{money.FromMinor(5, 0), 500, false},
		{money.FromMinor(-5, 1), -50, false},
		{money.FromMinor(12340, 3), 1234, false},
		{money.FromMinor(1234, 3), 0, true},
		{money.FromMinor(1<<62, 0), 0, true},
	}
	for _, tt := range tests {
		got, err := centsOf(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("centsOf(%s) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrAmountScale) {
			t.Errorf("error %v does not wrap ErrAmountScale", err)
		}
	}
}

// TestAccountNumbersHoldNoCardNumber: a count or an amount of the account
// whose digits hold a card number (in any window the text rule reads:
// 4111111111111111 as a count, 4111111111111111.00 as a balance, whose
// cents are 411111111111111100) is stored as NULL, counted; raw shows it
// masked. Generated card numbers of several networks, and look-alikes that
// stay.
func TestAccountNumbersHoldNoCardNumber(t *testing.T) {
	policy := redact.NewPolicy(nil)
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	for range 200 {
		pan := randomPAN(rng)
		n, err := strconv.ParseInt(pan, 10, 64)
		if err != nil {
			continue // 19 digits past int64
		}
		bal, err := money.Parse(pan+".00", 2)
		if err != nil {
			continue // past int64 cents: the decoder refuses it before
		}
		raw := []byte(`{"available_to_apply_card_count":` + pan + `,"balance":"` + pan + `.00"}`)
		row, err := PrepareAccount(policy, Account{Snapshot: account.Snapshot{AvailableToApplyCardCount: &n, Balance: &bal}, Raw: raw})
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, pan, err)
		}
		if row.AvailableToApplyCardCount != nil || row.Minor[3] != nil {
			t.Fatalf("seed %d: card number %s stored as a count %v or cents %v", seed, pan, row.AvailableToApplyCardCount, row.Minor[3])
		}
		if row.Counts.CardNumbers < 2 || row.Raw == nil || strings.Contains(*row.Raw, pan) {
			t.Fatalf("seed %d: %s: counted %d card numbers, raw %v", seed, pan, row.Counts.CardNumbers, row.Raw)
		}
	}
	count, bal := int64(1234567), money.FromMinor(98765432, 2)
	row, err := PrepareAccount(policy, Account{Snapshot: account.Snapshot{AvailableToApplyCardCount: &count, Balance: &bal}})
	if err != nil || row.AvailableToApplyCardCount == nil || *row.AvailableToApplyCardCount != count || row.Minor[3] == nil || *row.Minor[3] != 98765432 {
		t.Fatalf("ordinary numbers: %+v, %v", row, err)
	}
}

// randomPAN returns a random card number of a random network and length.
func randomPAN(rng *rand.Rand) string {
	nets := redacttest.Networks()
	nw := nets[rng.IntN(len(nets))]
	b := []byte(nw.Prefixes[rng.IntN(len(nw.Prefixes))])
	for n := nw.Lengths[rng.IntN(len(nw.Lengths))]; len(b) < n-1; {
		b = append(b, byte('0'+rng.IntN(10)))
	}
	return string(append(b, redacttest.LuhnDigit(string(b))))
}
