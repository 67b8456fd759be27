package extract

import (
	"errors"
	"math"
	"reflect"
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
		{"too many decimals are rounded half to even", func(a *sim.Account) { a.CardsBalance = ptr("12.345") }, "", func(t *testing.T, a *Account) {
			if a.CardsBalance.String() != "12.34" || !slices.Equal(a.Rounded, []string{"cards_balance"}) {
				t.Errorf("cards_balance %v, rounded %v; want 12.34, [cards_balance]", a.CardsBalance, a.Rounded)
			}
		}},
		{"PHP float noise is rounded", func(a *sim.Account) {
			a.Balance, a.AvailableRechargeBalance = ptr("1234.5600000000002"), ptr("0.30000000000000004")
		}, "", func(t *testing.T, a *Account) {
			if a.Balance.Minor() != 123456 || a.AvailableRechargeBalance.Minor() != 30 || !slices.Equal(a.Rounded, []string{"balance", "available_recharge_balance"}) {
				t.Errorf("balance %v, available_recharge_balance %v, rounded %v", a.Balance, a.AvailableRechargeBalance, a.Rounded)
			}
			if !strings.Contains(string(a.Raw), `"balance":1234.5600000000002`) {
				t.Errorf("raw lost the exact text: %s", a.Raw)
			}
		}},
		{"exact amounts are not marked rounded", func(a *sim.Account) {}, "", func(t *testing.T, a *Account) {
			if len(a.Rounded) != 0 {
				t.Errorf("rounded %v, want none", a.Rounded)
			}
		}},
		{"boolean", func(a *sim.Account) { a.Balance = ptr("true") }, "account.balance", nil},
		{"object", func(a *sim.Account) { a.AvailableRechargeBalance = ptr(`{"v":1}`) }, "account.available_recharge_balance", nil},
		{"huge exponent", func(a *sim.Account) { a.Balance = ptr("1e400") }, "account.balance", nil},
		{"beyond int64 minor units", func(a *sim.Account) { a.Balance = ptr("12345678901234567890.12") }, "account.balance", nil},
		{"exponent below the scale rounds to zero", func(a *sim.Account) { a.Balance = ptr("1e-5") }, "", func(t *testing.T, a *Account) {
			if a.Balance.Minor() != 0 || len(a.Rounded) != 1 {
				t.Errorf("balance %v rounded %v", a.Balance, a.Rounded)
			}
		}},
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
			a, err := decodeAccount([]byte(tt.body), 2, nil)
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
	a, err := decodeAccount([]byte(`{"data":{"name":"A","email":null,"balance":"1.00","applied_card_count":2}}`), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"timezone", "transfer_amount", "reach_amount", "authorizations", "cards_balance",
		"available_recharge_balance", "available_to_apply_card_count"}
	if !slices.Equal(a.Missing, want) {
		t.Errorf("Missing = %v, want %v (null is present, not missing)", a.Missing, want)
	}
	full, err := decodeAccount([]byte(`{"data":{"name":null,"email":null,"timezone":null,"transfer_amount":null,"reach_amount":null,"authorizations":null,"balance":null,"cards_balance":null,"available_recharge_balance":null,"available_to_apply_card_count":null,"applied_card_count":null}}`), 2, nil)
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
		{"ok whitespace everywhere", " {\n\"data\" : [ {\"id\":1} ,\t{\"id\":2} ] ,\r\n" + meta + " }\n", ""},
		{"trailing garbage", `{"data":[{"id":1},{"id":2}],` + meta + `}{}`, "trailing data"},
		{"not JSON", `<html></html>`, "malformed JSON"},
		{"truncated", `{"data":[{"id":1},`, "truncated"},
		{"truncated in a string", `{"data":[{"id":"ab`, "truncated"},
		{"bad escape", `{"data":[{"id":"a\x"}],` + meta + `}`, "malformed JSON"},
		{"raw control character", "{\"data\":[{\"id\":\"a\u0001\"}]," + meta + "}", "malformed JSON"},
		{"body not an object", `[{"id":1}]`, "page body must be an object"},
		{"data not an array", `{"data":{"id":1},` + meta + `}`, "data: must be an array"},
		{"count mismatch", `{"data":[{"id":1}],` + meta + `}`, "meta.pagination.count"},
		{"missing meta", `{"data":[]}`, "meta.pagination"},
		{"null data", `{"data":null,` + meta + `}`, "data: missing"},
		{"integral counts in every spelling", `{"data":[{"id":1},{"id":2}],"meta":{"pagination":{"total":2.0,"count":"20e-1","per_page":1.5e1,"current_page":"1.000","total_pages":1E0}}}`, ""},
		{"a number that is no number", `{"data":[],"meta":{"pagination":{"total":0,"count":"0x0","current_page":1,"total_pages":1}}}`, "meta.pagination.count"},
		{"bool total", `{"data":[],"meta":{"pagination":{"total":true,"count":0,"current_page":1,"total_pages":1}}}`, "meta.pagination.total"},
		{"current_page 0", `{"data":[],"meta":{"pagination":{"total":0,"count":0,"current_page":0,"total_pages":1}}}`, "meta.pagination.current_page"},
		{"total beyond int32", `{"data":[],"meta":{"pagination":{"total":4294967296,"count":0,"current_page":1,"total_pages":1}}}`, "meta.pagination.total"},
		{"total_pages below 0", `{"data":[],"meta":{"pagination":{"total":0,"count":0,"current_page":1,"total_pages":-1}}}`, "meta.pagination.total_pages"},
		{"ok after a UTF-8 BOM", "\xEF\xBB\xBF" + `{"data":[{"id":1},{"id":2}],` + meta + `}`, ""},
		{"two BOMs", "\xEF\xBB\xBF\xEF\xBB\xBF" + `{"data":[{"id":1},{"id":2}],` + meta + `}`, "malformed JSON"},
		{"ok with a 100,000-deep meta sibling", `{"data":[{"id":1},{"id":2}],"meta":{"debug":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `,"pagination":{"total":2,"count":2,"per_page":15,"current_page":1,"total_pages":1}}}`, ""},
		{"ok with a deep unknown envelope member", `{"trace":` + strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000) + `,"data":[{"id":1},{"id":2}],` + meta + `}`, ""},
		{"ok with a deep pagination member", `{"data":[{"id":1},{"id":2}],"meta":{"pagination":{"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `,"total":2,"count":2,"per_page":15,"current_page":1,"total_pages":1}}}`, ""},
		{"deep meta sibling still checked for syntax", `{"data":[{"id":1},{"id":2}],"meta":{"debug":` + strings.Repeat("[", 100000) + strings.Repeat("]", 99999) + `,"pagination":{"total":2,"count":2,"per_page":15,"current_page":1,"total_pages":1}}}`, "malformed JSON"},
		{"pagination not an object", `{"data":[],"meta":{"pagination":7}}`, "meta.pagination: must be an object"},
		{"duplicate count: the last wins", `{"data":[{"id":1},{"id":2}],"meta":{"pagination":{"total":2,"count":1,"per_page":15,"current_page":1,"total_pages":1,"count":2}}}`, ""},
		{"duplicate count: the last wins, and it is wrong", `{"data":[{"id":1},{"id":2}],"meta":{"pagination":{"total":2,"count":2,"per_page":15,"current_page":1,"total_pages":1,"count":1}}}`, "meta.pagination.count: 1 but data has 2"},
		{"duplicate pagination: the last wins", `{"data":[{"id":1},{"id":2}],"meta":{"pagination":null,"pagination":{"total":2,"count":2,"per_page":15,"current_page":1,"total_pages":1}}}`, ""},
		{"duplicate data: the last wins", `{"data":null,"data":[{"id":1},{"id":2}],` + meta + `}`, ""},
		{"null meta", `{"data":[],"meta":null}`, "meta.pagination: missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := decodePage([]byte(tt.body), nil)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Cards) != 2 || p.Cards[0].ID != "1" || string(p.Cards[1].Raw) == "" || len(p.Rejected) != 0 {
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

// TestDecodePaginationNumbers: meta.pagination's numbers are read exactly
// in any integral spelling; a fraction is named in Fractional and read as
// the next integer up (per_page as unknown, count as the items); a
// total_pages beyond int32 is capped.
func TestDecodePaginationNumbers(t *testing.T) {
	for _, tt := range []struct {
		pagination string
		want       Pagination
	}{
		{`"total":30.0,"count":1.0,"per_page":15.0,"current_page":1.0,"total_pages":2.0`,
			Pagination{Total: 30, Count: 1, PerPage: 15, CurrentPage: 1, TotalPages: 2}},
		{`"total":"3e1","count":"1","per_page":"15.000","current_page":"10e-1","total_pages":"2"`,
			Pagination{Total: 30, Count: 1, PerPage: 15, CurrentPage: 1, TotalPages: 2}},
		{`"total":30,"count":1,"per_page":15,"current_page":1,"total_pages":2.5`,
			Pagination{Total: 30, Count: 1, PerPage: 15, CurrentPage: 1, TotalPages: 3, Fractional: []string{"total_pages"}}},
		{`"total":29.5,"count":1.5,"per_page":14.5,"current_page":0.5,"total_pages":1e-1`,
			Pagination{Total: 30, Count: 1, CurrentPage: 1, TotalPages: 1, Fractional: []string{"total", "count", "per_page", "current_page", "total_pages"}}},
		{`"total":30,"count":1,"per_page":15,"current_page":1,"total_pages":4294967296`,
			Pagination{Total: 30, Count: 1, PerPage: 15, CurrentPage: 1, TotalPages: math.MaxInt32}},
		{`"total":30,"count":1,"per_page":15,"current_page":1,"total_pages":1e999999999999999999`,
			Pagination{Total: 30, Count: 1, PerPage: 15, CurrentPage: 1, TotalPages: math.MaxInt32}},
	} {
		body := `{"data":[{"id":1}],"meta":{"pagination":{` + tt.pagination + `}}}`
		p, err := decodePage([]byte(body), nil)
		if err != nil {
			t.Errorf("%s: %v", tt.pagination, err)
			continue
		}
		if !reflect.DeepEqual(p.Pagination, tt.want) {
			t.Errorf("%s:\n got  %+v\n want %+v", tt.pagination, p.Pagination, tt.want)
		}
	}
}

// TestDecodePageItems: ids real servers send are accepted, and an item that
// cannot be a card is set aside with a reason while the rest of its page
// decodes.
func TestDecodePageItems(t *testing.T) {
	long := strings.Repeat("x", MaxIDBytes)
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	tests := []struct {
		name   string
		item   string
		wantID string // for an accepted card
		reason string // for a rejected item ("" = accepted)
		readID string // the id a rejected item still carries
	}{
		{name: "integer", item: `{"id":1003}`, wantID: "1003"},
		{name: "negative integer", item: `{"id":-7}`, wantID: "-7"},
		{name: "25-digit integer", item: `{"id":1234567890123456789012345}`, wantID: "1234567890123456789012345"},
		{name: "string with space and Unicode", item: `{"id":"card 42 \u2713"}`, wantID: "card 42 ✓"},
		{name: "base64", item: `{"id":"YWJj+/=="}`, wantID: "YWJj+/=="},
		{name: "UUID", item: `{"id":"6f1c2f5e-8a47-4f0b-9a43-2b8c6d1e0f11"}`, wantID: "6f1c2f5e-8a47-4f0b-9a43-2b8c6d1e0f11"},
		{name: "255 bytes", item: `{"id":"` + long + `"}`, wantID: long},
		{name: "escaped key", item: `{"\u0069d":"k1"}`, wantID: "k1"},
		{name: "deep nesting elsewhere", item: `{"id":5,"x":` + deep + `}`, wantID: "5"},
		{name: "256 bytes", item: `{"id":"` + long + `y"}`, reason: "256 bytes"},
		{name: "control character", item: `{"id":"ab\u0007c"}`, reason: "control character"},
		{name: "invalid UTF-8", item: "{\"id\":\"ab\xffc\"}", reason: "not valid UTF-8"},
		{name: "empty string", item: `{"id":""}`, reason: "empty"},
		{name: "null", item: `{"id":null}`, reason: "null"},
		{name: "missing", item: `{"name":"x"}`, reason: `no "id"`},
		{name: "fraction", item: `{"id":12.5}`, reason: "not an integer"},
		{name: "exponent", item: `{"id":1e3}`, reason: "not an integer"},
		{name: "boolean", item: `{"id":true}`, reason: "a boolean"},
		{name: "object", item: `{"id":{"n":1}}`, reason: "an object"},
		{name: "two id keys: the last wins", item: `{"id":1,"id":2}`, wantID: "2"},
		{name: "two id keys, the last unusable", item: `{"id":1,"id":null}`, reason: "null"},
		{name: "two id keys, the first unusable", item: `{"id":null,"id":"k9"}`, wantID: "k9"},
		{name: "zero", item: `{"id":0}`, wantID: "0"},
		{name: "minus zero is zero", item: `{"id":-0}`, wantID: "0"},
		{name: "the string -0 is kept as sent", item: `{"id":"-0"}`, wantID: "-0"},
		{name: "0.0 is not an integer", item: `{"id":0.0}`, reason: "not an integer"},
		{name: "-0.0 is not an integer", item: `{"id":-0.0}`, reason: "not an integer"},
		{name: "string item", item: `"oops"`, reason: "a string, not an object"},
		{name: "number item", item: `42`, reason: "a number, not an object"},
		{name: "same id twice on the page", item: `{"id":"first"}`, reason: "already used by data[0]", readID: "first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := []string{`{"id":"first"}`, tt.item, `{"id":"last"}`}
			body := `{"data":[` + strings.Join(items, ",") + `],"meta":{"pagination":{"total":3,"count":3,"per_page":15,"current_page":1,"total_pages":1}}}`
			p, err := decodePage([]byte(body), nil)
			if err != nil {
				t.Fatalf("the page failed: %v", err)
			}
			if tt.reason == "" {
				if len(p.Rejected) != 0 || len(p.Cards) != 3 || p.Cards[1].ID != tt.wantID || string(p.Cards[1].Raw) != tt.item {
					t.Fatalf("cards %d rejected %+v; want 3 cards, the middle one with id %q", len(p.Cards), p.Rejected, tt.wantID)
				}
				return
			}
			if len(p.Cards) != 2 || p.Cards[0].ID != "first" || p.Cards[1].ID != "last" {
				t.Errorf("the rest of the page was not kept: %+v", p.Cards)
			}
			if len(p.Rejected) != 1 {
				t.Fatalf("rejected %+v, want one item", p.Rejected)
			}
			r := p.Rejected[0]
			if r.Index != 1 || !strings.Contains(r.Reason, tt.reason) || string(r.Raw) != tt.item || r.ID != tt.readID {
				t.Errorf("rejected %+v; want index 1, reason containing %q, id %q and the raw item", r, tt.reason, tt.readID)
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
		{"180/min", Rate{180, 60e9}, true},
		{"180/Minute", Rate{180, 60e9}, true},
		{"3/sec", Rate{3, 1e9}, true},
		{"100/hour", Rate{100, 3600e9}, true},
		{"180/fortnight", Rate{}, false},
	} {
		got, err := ParseRate(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), "window") && !strings.Contains(err.Error(), `"180/1m"`) {
			t.Errorf("ParseRate(%q): %v; want an example of the form", tt.in, err)
		}
	}
}

// TestDecodePageLinks: links is read only for a string links.next; any
// other shape a Fractal or hand-written PHP server may send is skipped.
func TestDecodePageLinks(t *testing.T) {
	tests := []struct {
		name, links, wantNext string
	}{
		{"absent", ``, ""},
		{"null", `,"links":null`, ""},
		{"empty object", `,"links":{}`, ""},
		{"empty array (Fractal < 0.18)", `,"links":[]`, ""},
		{"array", `,"links":["https://api.example.com/cards?page=2"]`, ""},
		{"array of objects", `,"links":[{"rel":"next","href":"/cards?page=2"}]`, ""},
		{"number", `,"links":2`, ""},
		{"string", `,"links":"https://api.example.com/cards?page=2"`, ""},
		{"true", `,"links":true`, ""},
		{"next string", `,"links":{"next":"https://api.example.com/cards?page=2"}`, "https://api.example.com/cards?page=2"},
		{"next null", `,"links":{"next":null}`, ""},
		{"next number", `,"links":{"next":2}`, ""},
		{"next object", `,"links":{"next":{"href":"https://api.example.com/cards?page=2"}}`, ""},
		{"next true", `,"links":{"next":true}`, ""},
		{"next array", `,"links":{"next":["x"]}`, ""},
		{"next twice: the last wins", `,"links":{"next":"https://a.example/cards?page=9","next":"https://api.example.com/cards?page=2"}`, "https://api.example.com/cards?page=2"},
		{"deep", `,"links":{"next":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"data":[{"id":1}],"meta":{"pagination":{"total":2,"count":1,"per_page":1,"current_page":1,"total_pages":2` + tt.links + `}}}`
			p, err := decodePage([]byte(body), nil)
			if err != nil {
				t.Fatalf("decodePage: %v", err)
			}
			if p.Pagination.Next != tt.wantNext || p.Pagination.TotalPages != 2 || len(p.Cards) != 1 {
				t.Errorf("pagination %+v, cards %d; want next %q, total_pages 2, one card", p.Pagination, len(p.Cards), tt.wantNext)
			}
		})
	}
}

// TestDecodeAccountEnvelope: /account reads only data; a BOM and deep
// siblings are skipped, and of duplicate keys the last wins.
func TestDecodeAccountEnvelope(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	for _, tt := range []struct{ name, body string }{
		{"BOM", "\xEF\xBB\xBF" + `{"data":{"name":"A"}}`},
		{"deep sibling", `{"meta":` + deep + `,"data":{"name":"A"}}`},
		{"duplicate data", `{"data":null,"data":{"name":"A"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := decodeAccount([]byte(tt.body), 2, nil)
			if err != nil || a.Name == nil || *a.Name != "A" {
				t.Fatalf("decodeAccount = %+v, %v; want name A", a, err)
			}
		})
	}
}

// TestAccountErrorScrubbed: an amount that is no number is refused, but
// one the server filled with a secret (a token quoted back) is no reason
// to lose the snapshot: it is null, as the README says.
func TestAccountErrorScrubbed(t *testing.T) {
	scrub := func(s string) string { return strings.ReplaceAll(s, "tokTOKtok1234", "[REDACTED]") }
	// An amount that is not a number and holds no secret is refused.
	_, err := decodeAccount([]byte(`{"data":{"balance":"twelve"}}`), 2, scrub)
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Field != "account.balance" {
		t.Errorf("err = %v: want a *ProtocolError of account.balance", err)
	}
	// One that is the token keeps the snapshot: the amount and the count
	// are null (load counts and redacts the values in raw).
	a, err := decodeAccount([]byte(`{"data":{"name":"A","balance":"tokTOKtok1234","cards_balance":"1.00","applied_card_count":"tokTOKtok1234"}}`), 2, scrub)
	if err != nil {
		t.Fatalf("a secret in an amount dropped the snapshot: %v", err)
	}
	if a.Balance != nil || a.AppliedCardCount != nil || a.CardsBalance == nil || a.CardsBalance.String() != "1.00" {
		t.Errorf("account %+v: want balance and applied_card_count null, cards_balance 1.00", a)
	}
}

// TestTruncateKeepsNoPartOfAWord: a cut inside a word or number moves back
// to its start, so a code value is never left in part ("cvv=98…").
func TestTruncateKeepsNoPartOfAWord(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"bad card: cvv=987 rejected", 16, "bad card: cvv=…"},
		{"bad card: cvv=987 rejected", 18, "bad card: cvv=987 …"},
		{"short", 10, "short"},
		{"aaaaaaaaaaaaaaaaaaaa", 8, "aaaaaaaa…"}, // one long word: cut where it must
		{"pin 4821 for 卡验证码", 19, "pin 4821 for …"},
	} {
		if got := truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
