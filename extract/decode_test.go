package extract

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/sim"
)

func ptr[T any](v T) *T { return &v }

func TestAccountAmounts(t *testing.T) {
	tests := []struct {
		name  string
		set   func(a *sim.Account)
		field string // "" = accepted
		check func(t *testing.T, a *Account)
	}{
		{"null stays null", func(a *sim.Account) { a.Balance, a.TransferAmount, a.AppliedCardCount = nil, nil, nil }, "", func(t *testing.T, a *Account) {
			if a.Balance != nil || a.TransferAmount != nil || a.AppliedCardCount != nil {
				t.Errorf("null became a value: %v %v %v", a.Balance, a.TransferAmount, a.AppliedCardCount)
			}
		}},
		{"number with exponent", func(a *sim.Account) { a.Balance = ptr("1.5e2") }, "", func(t *testing.T, a *Account) {
			if a.Balance.String() != "150.00" || a.Balance.Minor() != 15000 {
				t.Errorf("balance %v", a.Balance)
			}
		}},
		{"precision trap", func(a *sim.Account) { a.Balance = ptr("90071992547409.93") }, "", func(t *testing.T, a *Account) {
			if a.Balance.Minor() != 9007199254740993 {
				t.Errorf("balance minor %d", a.Balance.Minor())
			}
		}},
		{"trailing zeros beyond scale", func(a *sim.Account) { a.CardsBalance = ptr("12.3400") }, "", func(t *testing.T, a *Account) {
			if a.CardsBalance.String() != "12.34" {
				t.Errorf("cards_balance %v", a.CardsBalance)
			}
		}},
		{"locale format", func(a *sim.Account) { a.TransferAmount = ptr("1,234.50") }, "account.transfer_amount", nil},
		{"NaN", func(a *sim.Account) { a.ReachAmount = ptr("NaN") }, "account.reach_amount", nil},
		{"Infinity", func(a *sim.Account) { a.ReachAmount = ptr("Infinity") }, "account.reach_amount", nil},
		{"empty string", func(a *sim.Account) { a.Authorizations = ptr("") }, "account.authorizations", nil},
		{"too many decimals", func(a *sim.Account) { a.CardsBalance = ptr("12.345") }, "account.cards_balance", nil},
		{"too many decimals as number", func(a *sim.Account) { a.Balance = ptr("0.001") }, "account.balance", nil},
		{"boolean", func(a *sim.Account) { a.Balance = ptr("true") }, "account.balance", nil},
		{"object", func(a *sim.Account) { a.AvailableRechargeBalance = ptr(`{"v":1}`) }, "account.available_recharge_balance", nil},
		{"huge exponent", func(a *sim.Account) { a.Balance = ptr("1e400") }, "account.balance", nil},
		{"beyond int64 minor units", func(a *sim.Account) { a.Balance = ptr("12345678901234567890.12") }, "account.balance", nil},
		{"exponent that does not fit the scale", func(a *sim.Account) { a.Balance = ptr("1e-5") }, "account.balance", nil},
		{"plus-minus", func(a *sim.Account) { a.TransferAmount = ptr("+-1") }, "account.transfer_amount", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, sim.Options{}, nil)
			a := e.sim.Account()
			tt.set(&a)
			e.sim.SetAccount(a)
			got, err := e.c.Account(t.Context())
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Account: %v", err)
				}
				tt.check(t, got)
				return
			}
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Field != tt.field || !strings.Contains(err.Error(), tt.field+": ") {
				t.Fatalf("err = %v, want a *ProtocolError naming %s", err, tt.field)
			}
			if tt.name != "object" && tt.name != "boolean" && !errors.Is(err, money.ErrInvalid) {
				t.Errorf("err does not wrap money.ErrInvalid: %v", err)
			}
			if errors.Is(err, ErrUnavailable) || e.sim.Stats().Requests[sim.EndpointAccount] != 1 {
				t.Errorf("bad data retried or classified as unavailable")
			}
		})
	}
}

func TestDecodeAccountCountsAndStrings(t *testing.T) {
	tests := []struct {
		body, err string
	}{
		{`{"data":{"applied_card_count":"12","available_to_apply_card_count":3,"name":"A","unknown":{"x":[1]}}}`, ""},
		{`{"data":{"applied_card_count":1.5}}`, "account.applied_card_count"},
		{`{"data":{"applied_card_count":"1.0"}}`, "account.applied_card_count"},
		{`{"data":{"applied_card_count":true}}`, "account.applied_card_count"},
		{`{"data":{"applied_card_count":1e2}}`, "account.applied_card_count"},
		{`{"data":{"applied_card_count":-1}}`, "account.applied_card_count"},
		{`{"data":{"applied_card_count":99999999999999999999}}`, "account.applied_card_count"},
		{`{"data":{"name":5}}`, "account.name"},
		{`{"data":null}`, "data"},
		{`{"data":[]}`, "data"},
		{`{"data":{}} x`, "trailing data"},
		{`{"data":{}`, "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			a, err := decodeAccount([]byte(tt.body), 2)
			if tt.err == "" {
				if err != nil || *a.AppliedCardCount != 12 || *a.AvailableToApplyCardCount != 3 || *a.Name != "A" || !strings.Contains(string(a.Raw), "unknown") {
					t.Fatalf("got %+v, %v", a, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
		})
	}
}

func TestDecodeAccountMissingFields(t *testing.T) {
	a, err := decodeAccount([]byte(`{"data":{"name":"A","email":null,"balance":"1.00","applied_card_count":2}}`), 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"timezone", "transfer_amount", "reach_amount", "authorizations", "cards_balance",
		"available_recharge_balance", "available_to_apply_card_count"}
	if !slices.Equal(a.Missing, want) {
		t.Errorf("Missing = %v, want %v (null is present, not missing)", a.Missing, want)
	}
	full, err := decodeAccount([]byte(`{"data":{"name":null,"email":null,"timezone":null,"transfer_amount":null,"reach_amount":null,"authorizations":null,"balance":null,"cards_balance":null,"available_recharge_balance":null,"available_to_apply_card_count":null,"applied_card_count":null}}`), 2)
	if err != nil || len(full.Missing) != 0 {
		t.Errorf("all-null account: Missing %v, err %v; want none", full.Missing, err)
	}
}

func TestDecodePage(t *testing.T) {
	const meta = `"meta":{"pagination":{"total":2,"count":2,"per_page":15,"current_page":1,"total_pages":1,"links":{}}}`
	tests := []struct {
		name, body, err string
	}{
		{"ok", `{"data":[{"id":1},{"id":"a-2"}],` + meta + `}`, ""},
		{"ok string counts and [] links", `{"data":[{"id":1},{"id":2}],"meta":{"pagination":{"total":"2","count":"2","per_page":"15","current_page":"1","total_pages":"1","links":[]}}}`, ""},
		{"trailing garbage", `{"data":[{"id":1},{"id":2}],` + meta + `}{}`, "trailing data"},
		{"not JSON", `<html></html>`, "malformed JSON"},
		{"truncated", `{"data":[{"id":1},`, "truncated"},
		{"count mismatch", `{"data":[{"id":1}],` + meta + `}`, "meta.pagination.count"},
		{"missing meta", `{"data":[]}`, "meta.pagination"},
		{"null data", `{"data":null,` + meta + `}`, "data: missing"},
		{"id object", `{"data":[{"id":{"x":1}},{"id":2}],` + meta + `}`, "data[0].id"},
		{"id null", `{"data":[{"id":null},{"id":2}],` + meta + `}`, "data[0].id"},
		{"id missing", `{"data":[{"name":"x"},{"id":2}],` + meta + `}`, "data[0].id"},
		{"id bool", `{"data":[{"id":true},{"id":2}],` + meta + `}`, "data[0].id"},
		{"id fraction", `{"data":[{"id":1.5},{"id":2}],` + meta + `}`, "data[0].id"},
		{"id negative", `{"data":[{"id":-1},{"id":2}],` + meta + `}`, "data[0].id"},
		{"id empty string", `{"data":[{"id":""},{"id":2}],` + meta + `}`, "data[0].id"},
		{"id with space", `{"data":[{"id":"a b"},{"id":2}],` + meta + `}`, "data[0].id"},
		{"card not an object", `{"data":[1,{"id":2}],` + meta + `}`, "data[0]"},
		{"fractional count", `{"data":[],"meta":{"pagination":{"total":0,"count":0.0,"current_page":1,"total_pages":1}}}`, "meta.pagination.count"},
		{"bool total", `{"data":[],"meta":{"pagination":{"total":true,"count":0,"current_page":1,"total_pages":1}}}`, "meta.pagination.total"},
		{"current_page 0", `{"data":[],"meta":{"pagination":{"total":0,"count":0,"current_page":0,"total_pages":1}}}`, "meta.pagination.current_page"},
		{"links non-empty array", `{"data":[],"meta":{"pagination":{"total":0,"count":0,"current_page":1,"total_pages":1,"links":["x"]}}}`, "meta.pagination.links"},
		{"links.next number", `{"data":[],"meta":{"pagination":{"total":0,"count":0,"current_page":1,"total_pages":1,"links":{"next":3}}}}`, "meta.pagination.links.next"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := decodePage([]byte(tt.body))
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Cards) != 2 || p.Cards[0].ID != "1" || string(p.Cards[1].Raw) == "" {
					t.Errorf("got %+v", p)
				}
				return
			}
			var pe *ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want a *ProtocolError containing %q", err, tt.err)
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Rate
		ok   bool
	}{
		{"180/1m", Rate{180, 60e9}, true},
		{"10/60s", Rate{10, 60e9}, true},
		{" 5 / h ", Rate{5, 3600e9}, true},
		{"0/1m", Rate{}, false},
		{"-1/1m", Rate{}, false},
		{"10", Rate{}, false},
		{"10/0s", Rate{}, false},
		{"x/1m", Rate{}, false},
	} {
		got, err := ParseRate(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
