package extract

import (
	"encoding/json"
	"fmt"

	"github.com/cardsync/cardsync/money"
)

// Decoding the /account body.

// decodeAccount decodes the body of GET /account; scrub cleans upstream
// text quoted in errors (nil: none).
func decodeAccount(body []byte, scale int, scrub func(string) string) (*Account, error) {
	if scrub == nil {
		scrub = noScrub
	}
	// Only data is read: other members (meta, links, debug output) are
	// skipped whatever their depth, a leading BOM too.
	body, top, err := topMembers(body, "account body")
	if err != nil {
		return nil, err
	}
	var data json.RawMessage
	if sp, ok := top["data"]; ok {
		data = body[sp.start:sp.end]
	}
	if len(data) == 0 || data[0] != '{' {
		return nil, protoErr("data", "must be an object, got "+jsonKind(data), nil)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, protoErr("data", "", err)
	}
	a := &Account{Raw: data}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"name", &a.Name}, {"email", &a.Email}, {"timezone", &a.Timezone}} {
		raw, ok := a.field(m, f.name)
		if !ok || string(raw) == "null" {
			continue
		}
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return nil, protoErr("account."+f.name, "must be a string, got "+jsonKind(raw), nil)
		}
		*f.dst = &s
	}
	for _, f := range []struct {
		name string
		dst  **money.Amount
	}{
		{"transfer_amount", &a.TransferAmount},
		{"reach_amount", &a.ReachAmount},
		{"authorizations", &a.Authorizations},
		{"balance", &a.Balance},
		{"cards_balance", &a.CardsBalance},
		{"available_recharge_balance", &a.AvailableRechargeBalance},
	} {
		raw, ok := a.field(m, f.name)
		if !ok {
			continue
		}
		amt, rounded, err := money.ParseJSONRound(raw, scale)
		if err != nil && carriesSecret(raw, scrub) {
			// A value that is (or holds) the password or a token is no
			// amount: the column stays null, the snapshot is kept and
			// load counts and redacts the value in raw.
			continue
		}
		if err != nil {
			// The error quotes the value, which may carry a secret.
			return nil, protoErr("account."+f.name, "", scrubbed(err, scrub))
		}
		if rounded {
			a.Rounded = append(a.Rounded, f.name)
		}
		*f.dst = amt
	}
	for _, f := range []struct {
		name string
		dst  **int64
	}{{"available_to_apply_card_count", &a.AvailableToApplyCardCount}, {"applied_card_count", &a.AppliedCardCount}} {
		raw, ok := a.field(m, f.name)
		if !ok || string(raw) == "null" {
			continue
		}
		n, err := parseInt(raw, scrub)
		if err != nil && carriesSecret(raw, scrub) {
			continue // as an amount that carries a secret
		}
		if err != nil {
			return nil, protoErr("account."+f.name, "", err)
		}
		if n < 0 {
			return nil, protoErr("account."+f.name, fmt.Sprintf("negative count %d", n), nil)
		}
		*f.dst = &n
	}
	return a, nil
}

// carriesSecret says whether scrub changes raw: the value holds the
// password, a token or a card number.
func carriesSecret(raw json.RawMessage, scrub func(string) string) bool {
	return scrub(string(raw)) != string(raw)
}

// field returns the raw value of a member of the account object, noting
// it in Missing when the server left it out.
func (a *Account) field(m map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	raw, ok := m[name]
	if !ok {
		a.Missing = append(a.Missing, name)
	}
	return raw, ok
}
