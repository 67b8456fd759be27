package load

import (
	"fmt"
	"slices"

	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/redact"
)

// PageItems is a page after the steps every destination takes before it
// reads or writes a database: each card redacted by the policy into
// canonical JSON and hashed; items that cannot be stored set aside as
// rejections (an empty id, an id used twice on the page, a document the
// policy cannot walk); and the ids the page listed.
type PageItems struct {
	// Cards are the storable cards in page order, each id once.
	Cards []PreparedCard
	// Rejected are the page's Rejected followed by the items set aside
	// here, Data as received (QuarantineData redacts it for storage).
	Rejected []Rejection
	// IDs are the ids the page listed: its cards' then the rejected
	// items', a rejected item without an id standing by its place (so that
	// the walk's distinct count still adds up to the API's total).
	IDs []string
	// Fields are the cards' top-level fields with the JSON type of each
	// value, possibly repeated.
	Fields []Field
	// Secrets counts the strings, keys and numbers of the page's cards and
	// rejected items (data and reason) in which the policy replaced a
	// secret (sync_runs.secrets_redacted).
	Secrets int
	// Counts are the page's other counters (sync_runs.card_numbers_masked,
	// codes_dropped, track_data_dropped, fields_dropped).
	Counts RuleCounts
}

// RuleCounts count what the rules took out of what a run stored, besides
// secrets (sync_runs' counters of the same names).
type RuleCounts struct {
	// CardNumbers counts the card numbers masked, a card id stored by
	// its pseudonym (StoredID) included.
	CardNumbers int `json:"card_numbers_masked"`
	// Codes counts the security codes and PINs dropped.
	Codes int `json:"codes_dropped"`
	// TrackData counts the track data and EMV card tags dropped.
	TrackData int `json:"track_data_dropped"`
	// FieldsDropped counts the top-level card fields [cards] keep_fields
	// left out (ItemRules.KeepFields).
	FieldsDropped int `json:"fields_dropped"`
}

// Add returns the sum of c and o.
func (c RuleCounts) Add(o RuleCounts) RuleCounts {
	return RuleCounts{
		CardNumbers:   c.CardNumbers + o.CardNumbers,
		Codes:         c.Codes + o.Codes,
		TrackData:     c.TrackData + o.TrackData,
		FieldsDropped: c.FieldsDropped + o.FieldsDropped,
	}
}

// addStats adds the counts of a redaction to c.
func (c *RuleCounts) addStats(st redact.Stats) {
	c.CardNumbers += st.CardNumbers
	c.Codes += st.Codes
	c.TrackData += st.TrackData
}

// ItemRules are the rules a page's items are stored by: the redaction
// policy, the warehouse's card id key (StoredID) and the top-level fields
// kept ([cards] keep_fields).
type ItemRules struct {
	// Policy redacts every item (Settings.Policy).
	Policy *redact.Policy
	// IDKey is the warehouse's card id key (IDKeyBytes, read at open):
	// without one, a card whose id holds a card number is rejected, its
	// id masked.
	IDKey []byte
	keep  keepSet
}

// NewItemRules returns the rules of policy, the card id key and keep (the
// top-level fields kept, "id" always among them; nil: every field).
func NewItemRules(policy *redact.Policy, idKey []byte, keep []string) ItemRules {
	return ItemRules{Policy: policy, IDKey: idKey, keep: newKeepSet(keep)}
}

// PreparedCard is a card ready to store: Data is its redacted, canonical
// JSON and Hash its DataHash (card_state.data_hash).
type PreparedCard struct {
	// ID is the id as stored (StoredID).
	ID string
	// Index is the card's position in the page's Cards.
	Index int
	Data  []byte
	Hash  []byte
	// Fields are the card's top-level fields, in Data's order: the
	// classes of their values (card_fields.type, card_state.minor) are
	// read for the cards a commit writes (Compare).
	Fields []redact.Field
}

// Field is a top-level card field and the JSON type of one of its values.
type Field struct{ Name, Type string }

// PreparePageItems takes the database-independent steps of a page commit
// (see PageItems). It fails only for a page number below 1; what it cannot
// store goes to Rejected.
func PreparePageItems(rules ItemRules, p Page) (PageItems, error) {
	if p.Number < 1 {
		return PageItems{}, fmt.Errorf("page numbers start at 1, got %d", p.Number)
	}
	policy := rules.Policy
	it := PageItems{
		Cards:    make([]PreparedCard, 0, len(p.Cards)),
		IDs:      make([]string, 0, len(p.Cards)+len(p.Rejected)),
		Rejected: append([]Rejection(nil), p.Rejected...),
	}
	it.storeRejectedIDs(rules)
	first := make(map[string]int, len(p.Cards))
	var lastFields []redact.Field
	for i, c := range p.Cards {
		if c.ID == "" {
			it.Rejected = append(it.Rejected, Rejection{Index: i, Reason: "empty card id", Data: c.Data})
			continue
		}
		if idCarriesSecret(policy, c.ID) {
			it.Rejected = append(it.Rejected, Rejection{Index: i, Reason: secretIDReason, Data: c.Data})
			continue
		}
		id, pseudonym, err := StoredID(policy, rules.IDKey, c.ID)
		if err != nil {
			it.Counts.CardNumbers++
			it.Rejected = append(it.Rejected, Rejection{Index: i, Reason: noKeyReason, Data: c.Data})
			continue
		}
		if j, dup := first[id]; dup {
			it.Rejected = append(it.Rejected, Rejection{Index: i, CardID: id, Reason: fmt.Sprintf("card id already used by data[%d] on this page", j), Data: c.Data})
			continue
		}
		first[id] = i
		data, fields, st, err := policy.JSONStats(c.Data)
		it.Secrets += st.Secrets
		it.Counts.addStats(st)
		if err != nil {
			it.Rejected = append(it.Rejected, Rejection{Index: i, CardID: id, Reason: "cannot be stored: " + err.Error(), Data: c.Data})
			continue
		}
		if pseudonym {
			// The "id" member, kept as sent by the policy (the card's
			// identity), says what cards.card_id says.
			if ms, ok := topMembers(data); ok {
				data = withID(data, ms, id)
				for k, f := range fields {
					if f.Name == "id" {
						fields[k].Type = "string"
					}
				}
			}
			it.Counts.CardNumbers++
		}
		var dropped int
		data, fields, dropped = rules.keep.apply(data, fields)
		it.Counts.FieldsDropped += dropped
		// Cards of one API mostly share their fields, in the same order:
		// only a card whose list differs from the previous one's adds to
		// the list.
		if !slices.Equal(fields, lastFields) {
			for _, f := range fields {
				it.Fields = append(it.Fields, Field{Name: f.Name, Type: f.Type})
			}
			lastFields = fields
		}
		it.Cards = append(it.Cards, PreparedCard{ID: id, Index: i, Data: data, Hash: dataHash(data), Fields: fields})
		it.IDs = append(it.IDs, id)
	}
	for _, r := range it.Rejected {
		_, n, st := quarantineData(rules, r.Data)
		if _, scrubbed := policy.Text(r.Reason); scrubbed {
			n++
		}
		it.Secrets += n
		it.Counts.addStats(st)
		id := r.CardID
		if id == "" {
			id = anonymousID(p.Number, r.Index)
		}
		it.IDs = append(it.IDs, id)
	}
	return it, nil
}

// storeRejectedIDs gives the rejected items their ids as stored. An id is
// stored as sent, in columns no scrubber rewrites: one that carries the
// password or a token is not stored at all, and one that holds a card
// number is stored by its pseudonym (StoredID).
func (it *PageItems) storeRejectedIDs(rules ItemRules) {
	for k, r := range it.Rejected {
		if idCarriesSecret(rules.Policy, r.CardID) {
			it.Rejected[k].CardID = ""
			it.Rejected[k].Reason += "; " + secretIDReason
			continue
		}
		id, changed, err := StoredID(rules.Policy, rules.IDKey, r.CardID)
		switch {
		case err != nil:
			it.Rejected[k].CardID = ""
			it.Counts.CardNumbers++
		case changed:
			it.Rejected[k].CardID = id
			it.Counts.CardNumbers++
		}
	}
}

// DataHash is what card_state.data_hash holds of a card's redacted,
// canonical JSON (PreparedCard.Hash): the first 16 bytes of the SHA-256 of
// its hash form, in which numbers are written by their exact value and
// strings in NFC, so that equal values hash alike however they are
// written. Any JSON text of the card (PostgreSQL's jsonb output included)
// hashes the same.
func DataHash(data []byte) []byte { return dataHash(data) }

// QuarantineData is what rejected_cards.data stores of a rejected item:
// redacted by the rules' policy (see Warehouse's quarantine), a top-level
// "id" that holds a card number replaced by its stored form (StoredID), and
// cut to MaxRejectedBytes.
func QuarantineData(rules ItemRules, raw []byte) string {
	s, _, _ := quarantineData(rules, raw)
	return s
}

// RedactText is what the warehouse stores of a text it did not write
// (reasons, error messages): card numbers masked and the policy's secrets
// removed.
func RedactText(policy *redact.Policy, s string) string {
	s, _ = policy.Text(s)
	return s
}

// Cents converts an amount of any scale to cents exactly, or fails with
// ErrAmountScale (more than two decimals, or beyond int64).
func Cents(a money.Amount) (int64, error) { return centsOf(a) }

// secretIDReason is the rejection reason of an item whose id carries a
// secret.
const secretIDReason = "the card id carries the password or a token: the item is quarantined without its id"

// noKeyReason is the rejection reason of a card whose id holds a card
// number when the warehouse has no card id key to store it by.
const noKeyReason = "the card id holds a card number and the warehouse has no card id key: the item is quarantined without its id"

// idCarriesSecret reports whether id holds a secret the policy removes
// (the password, a token, or a piece of one).
func idCarriesSecret(policy *redact.Policy, id string) bool {
	return policy.HoldsSecret(id)
}
