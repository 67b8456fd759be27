package load

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/cardsync/cardsync/load/internal/cardmove"
	"github.com/cardsync/cardsync/redact"
)

// rescanRowByPolicy applies policy to one stored row of phase: the row to store
// and true when anything changed, and the secrets removed. Without a card
// id key, a rejected item's card id that holds a card number is masked
// (Rescan passes the warehouse's key: see cardMove).
func rescanRowByPolicy(policy *redact.Policy, phase string, r StoredRow) (StoredRow, int, bool) {
	return rescanRow(ItemRules{Policy: policy}, phase, r)
}

// cardMove is the move of the card whose card_state row is r (key: its
// id; Texts[0]: its data) when its id holds a card number: its StoredID
// under rules, and its data redacted, canonical, with that "id" member.
// The error wraps ErrNoIDKey when the warehouse has no key.
func cardMove(rules ItemRules, r StoredRow) (cardmove.Move, bool, error) {
	id, changed, err := StoredID(rules.Policy, rules.IDKey, r.Key.Text)
	if !changed {
		return cardmove.Move{}, false, nil
	}
	if err != nil {
		return cardmove.Move{}, false, fmt.Errorf("move a card id that is a card number: %w", err)
	}
	var data []byte
	if len(r.Texts) > 0 && r.Texts[0] != nil {
		data = []byte(*r.Texts[0])
	}
	if canon, _, _, err := rules.Policy.JSONCount(data); err == nil {
		data = canon
	}
	if ms, ok := topMembers(data); ok {
		data = withID(data, ms, id)
	}
	return cardmove.Move{Old: r.Key.Text, New: id, Data: string(data), Hash: DataHash(data)}, true, nil
}

// rescanRow is rescanRowByPolicy under rules (the policy and the card id key).
func rescanRow(rules ItemRules, phase string, r StoredRow) (StoredRow, int, bool) {
	policy := rules.Policy
	out := StoredRow{Key: r.Key, Texts: append([]*string(nil), r.Texts...), Hash: r.Hash}
	secrets := 0
	changed := false
	set := func(i int, s string, n int) bool {
		secrets += n
		if r.Texts[i] == nil || *r.Texts[i] != s {
			out.Texts[i] = &s
			changed = true
			return true
		}
		return false
	}
	text := func(i int) {
		if i < len(r.Texts) && r.Texts[i] != nil {
			s, scrubbed := policy.Text(*r.Texts[i])
			n := 0
			if scrubbed && s != *r.Texts[i] {
				n = 1
			}
			set(i, s, n)
		}
	}
	jsonText := func(i int) bool {
		if i >= len(r.Texts) || r.Texts[i] == nil {
			return false
		}
		data, _, n, err := policy.JSONCount([]byte(*r.Texts[i]))
		if err != nil {
			// What the policy cannot walk is treated as text.
			text(i)
			return false
		}
		return set(i, string(data), n)
	}
	switch phase {
	case PhaseCards:
		if jsonText(0) {
			out.Hash = DataHash([]byte(*out.Texts[0]))
			// minor: decimal fields' minor units by field name; a name
			// the rules change changes there too.
			if len(r.Texts) > 1 && r.Texts[1] != nil && *r.Texts[1] != "" {
				jsonText(1)
			}
		}
	case PhaseVersions:
		jsonText(0)
	case PhaseSnapshots:
		text(0)
		text(1)
		text(2)
		jsonText(3)
	case PhaseRejected:
		if r.Texts[0] != nil {
			if policy.HoldsSecret(*r.Texts[0]) {
				out.Texts[0], changed = nil, true
				secrets++
			} else if id, moved, err := StoredID(policy, rules.IDKey, *r.Texts[0]); moved && err == nil {
				// The id a sync stores for the same item (its
				// duplicate check compares it).
				set(0, id, 0)
			} else {
				text(0)
			}
		}
		text(1)
		if r.Texts[2] != nil {
			s, n, _ := quarantineData(ItemRules{Policy: policy, IDKey: rules.IDKey}, []byte(*r.Texts[2]))
			if s != *r.Texts[2] {
				set(2, s, n)
				sum := sha256.Sum256([]byte(s))
				out.Hash = []byte(hex.EncodeToString(sum[:]))
			}
		}
	case PhaseRuns:
		text(0)
		text(1)
	case PhaseFields:
		name := *r.Texts[0]
		if redacted, ok := fieldNameUnderRules(policy, name); !ok || redacted != name {
			out.Texts[0] = nil
			changed = true
		}
	}
	return out, secrets, changed
}

// fieldNameUnderRules is what a walk records of a top-level field named
// name (holding a text) under policy: its name as redacted (a card number
// in it masked, a secret removed), or false when the rules drop the field.
func fieldNameUnderRules(policy *redact.Policy, name string) (string, bool) {
	key, err := json.Marshal(name)
	if err != nil {
		return "", false
	}
	_, fields, err := policy.JSON(append(append([]byte("{"), key...), `:"x"}`...))
	if err != nil || len(fields) != 1 {
		return "", false
	}
	return fields[0].Name, true
}
