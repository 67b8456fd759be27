package load

import (
	"errors"
	"testing"

	"github.com/cardsync/cardsync/money"
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
