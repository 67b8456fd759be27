package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cardsync/cardsync/load/internal/hashform"
	"github.com/cardsync/cardsync/redact"
)

// IDKeyBytes is the size of a warehouse's card id key (card_id_key.key):
// 32 random bytes, created once when the warehouse is created or upgraded.
const IDKeyBytes = 32

// ErrNoIDKey is wrapped when a card id holds a card number and the
// warehouse has no card id key to store it by (see StoredID).
var ErrNoIDKey = errors.New("the warehouse has no card id key")

// StoredID is what the warehouse stores of a card id (cards.card_id,
// card_state, card_versions, rejected_cards, walk_seen, and the card's
// "id" member): an id that is or holds a card number becomes its masked
// form, '~' and a keyed hash of the id as sent (redact.CardID with the
// warehouse's key), so the same card keeps one identity across runs and
// two cards whose masked forms agree keep two; every other id is stored as
// sent. An id holds a card number when redact.HoldsCardNumber says so or
// when the policy, applied to the id as a JSON value of its own, masks it
// (the rule every other value follows). changed reports a replaced id; the
// error wraps ErrNoIDKey when the id must be replaced and key is too short.
func StoredID(policy *redact.Policy, key []byte, id string) (stored string, changed bool, err error) {
	v, _ := json.Marshal(id)
	return storedID(policy, key, id, v)
}

// storedID is StoredID of the id whose text is id and whose JSON value is
// value (a string, or a number as sent).
func storedID(policy *redact.Policy, key []byte, id string, value []byte) (string, bool, error) {
	if digitCount(id) < minIDDigits {
		return id, false, nil
	}
	masked, holds := redact.HoldsCardNumber(id)
	if !holds {
		masked, holds = policyMasks(policy, id, value)
	}
	if !holds {
		return id, false, nil
	}
	if len(key) < redact.MinCardIDKey {
		return "", true, ErrNoIDKey
	}
	return redact.PseudonymousID(key, id, masked), true, nil
}

// minIDDigits is the fewest digits a card number has.
const minIDDigits = 12

func digitCount(s string) int {
	n := 0
	for _, r := range s {
		if r < utf8.RuneSelf {
			if r >= '0' && r <= '9' {
				n++
			}
		} else if unicode.IsDigit(r) {
			n++
		}
	}
	return n
}

// policyMasks reports whether the policy masks a card number in value (a
// JSON string or number), and its masked text.
func policyMasks(policy *redact.Policy, text string, value []byte) (string, bool) {
	doc := make([]byte, 0, len(value)+6)
	doc = append(append(append(doc, `{"v":`...), value...), '}')
	out, _, err := policy.JSON(doc)
	if err != nil {
		return "", false
	}
	var m struct{ V json.RawMessage }
	if json.Unmarshal(out, &m) != nil {
		return "", false
	}
	// The value as JSON reads it: text with any invalid UTF-8 as U+FFFD,
	// which the policy's output keeps, so an unchanged value compares equal.
	read := text
	var vs string
	if json.Unmarshal(value, &vs) == nil {
		read = vs
	}
	var s string
	if json.Unmarshal(m.V, &s) != nil || s == text || s == read || s == "" || strings.Contains(s, redact.Redacted) {
		return "", false
	}
	return s, true
}

// member is one member of a canonical JSON object: doc[start:end], its key
// ending at keyEnd (the ':' follows).
type member struct {
	key                string
	start, keyEnd, end int
}

// topMembers splits a canonical JSON object (redact.Policy.JSON's output:
// no whitespace) into its members; ok is false for any other value.
func topMembers(doc []byte) (ms []member, ok bool) {
	if len(doc) < 2 || doc[0] != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	for dec.More() {
		start := int(dec.InputOffset())
		if start < len(doc) && doc[start] == ',' {
			start++
		}
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, isKey := t.(string)
		if !isKey {
			return nil, false
		}
		keyEnd := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		ms = append(ms, member{key: key, start: start, keyEnd: keyEnd, end: int(dec.InputOffset())})
	}
	return ms, true
}

// withID returns the canonical object doc with the value of its top-level
// "id" member replaced by the JSON string id, and the id member's value as
// found (nil: doc has no such member or is no object).
func withID(doc []byte, ms []member, id string) []byte {
	for _, m := range ms {
		if m.key != "id" {
			continue
		}
		out := make([]byte, 0, len(doc)+len(id))
		out = append(out, doc[:m.keyEnd+1]...)
		out = hashform.AppendString(out, id)
		return append(out, doc[m.end:]...)
	}
	return doc
}

// idMember returns the value of the top-level "id" member of a canonical
// object, when it is a string or a number: its text and its JSON.
func idMember(doc []byte, ms []member) (text string, value []byte, ok bool) {
	for _, m := range ms {
		if m.key != "id" {
			continue
		}
		v := doc[m.keyEnd+1 : m.end]
		switch {
		case len(v) > 0 && v[0] == '"':
			if json.Unmarshal(v, &text) != nil {
				return "", nil, false
			}
			return text, v, true
		case len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9'):
			// An integer written with a fraction of zeros or an exponent
			// (4.111111111111111e15) is the id of its digits, as the
			// client reads an integer id; the cap keeps a huge exponent
			// from costing time.
			exp := ""
			if i := bytes.IndexAny(v, "eE"); i >= 0 {
				exp = strings.TrimLeft(string(v[i+1:]), "+-")
			}
			if len(v) <= 64 && len(exp) <= 2 {
				if r, ok := new(big.Rat).SetString(string(v)); ok && r.IsInt() && r.Num().BitLen() <= 80 {
					return r.Num().String(), v, true
				}
			}
			return string(v), v, true
		}
		return "", nil, false
	}
	return "", nil, false
}

// pseudonymizeData replaces, in a rejected item's redacted canonical JSON,
// a top-level "id" that holds a card number by its stored form. It returns
// doc unchanged when there is nothing to replace, and masked reports a
// replacement. Without a key, the id is replaced by its masked form alone.
func pseudonymizeData(policy *redact.Policy, key []byte, doc []byte) ([]byte, bool) {
	if !bytes.Contains(doc, []byte(`"id":`)) {
		return doc, false
	}
	ms, ok := topMembers(doc)
	if !ok {
		return doc, false
	}
	text, value, ok := idMember(doc, ms)
	if !ok {
		return doc, false
	}
	stored, changed, err := storedID(policy, key, text, value)
	if !changed {
		return doc, false
	}
	if err != nil {
		stored = maskedOnly(policy, text, value)
	}
	return withID(doc, ms, stored), true
}

// maskedOnly is an id's masked form without its hash, for an id that cannot
// be stored by its hash (no key).
func maskedOnly(policy *redact.Policy, text string, value []byte) string {
	if m, ok := redact.HoldsCardNumber(text); ok {
		return m
	}
	if m, ok := policyMasks(policy, text, value); ok {
		return m
	}
	return "[card number]"
}

// checkIDKey checks a key read from a warehouse.
func checkIDKey(key []byte) error {
	if len(key) != IDKeyBytes {
		return fmt.Errorf("%w: card_id_key.key has %s bytes, want %d", ErrNoIDKey, strconv.Itoa(len(key)), IDKeyBytes)
	}
	return nil
}

// CheckIDKey checks a card id key read from a warehouse: IDKeyBytes long
// (the error wraps ErrNoIDKey).
func CheckIDKey(key []byte) error { return checkIDKey(key) }
