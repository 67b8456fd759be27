package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/redact"
)

// TestRescanRowAgreesWithAWalk generates cards stored by "older rules"
// (holding a code under a key the newer rules drop and a secret at random
// places, at random depths) and checks that a rescan stores exactly what a
// walk of the same card under the newer rules stores, with its hash, that
// nothing of the code or the secret is left, and that a second rescan
// changes nothing.
func TestRescanRowAgreesWithAWalk(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 1))
	const secret = "Gen3rated-Secret-Value"
	var secrets redact.Secrets
	secrets.Add(secret)
	policy := Options{RedactFields: []string{"vendorCheck"}, Secrets: &secrets}.Settings().Policy
	for i := range 2000 {
		doc := genCard(r, secret, 0)
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		stored := string(raw)
		row := StoredRow{Key: RescanKey{Text: fmt.Sprint(i)}, Texts: []*string{&stored, nil}, Hash: DataHash(raw)}
		out, _, changed := rescanRowByPolicy(policy, PhaseCards, row)
		want, _, err := policy.JSON(raw)
		if err != nil {
			t.Fatalf("seed %d case %d: policy: %v", seed, i, err)
		}
		if !changed && stored != string(want) {
			t.Fatalf("seed %d case %d: unchanged, but a walk stores %s", seed, i, want)
		}
		got := stored
		if changed {
			got = *out.Texts[0]
			if !bytes.Equal(out.Hash, DataHash(want)) {
				t.Fatalf("seed %d case %d: hash is not a walk's", seed, i)
			}
		}
		if got != string(want) {
			t.Fatalf("seed %d case %d:\nrescan %s\nwalk   %s", seed, i, got, want)
		}
		if strings.Contains(got, secret) || strings.Contains(got, "vendorCheck") {
			t.Fatalf("seed %d case %d: left %s", seed, i, got)
		}
		again := StoredRow{Key: row.Key, Texts: []*string{&got, nil}, Hash: DataHash([]byte(got))}
		if _, _, changed := rescanRowByPolicy(policy, PhaseCards, again); changed {
			t.Fatalf("seed %d case %d: a second rescan changes %s", seed, i, got)
		}
	}
}

// genCard returns a random card-like object: plain fields, nested objects
// and arrays, and now and then the code key or the secret inside a text.
func genCard(r *rand.Rand, secret string, depth int) map[string]any {
	m := map[string]any{}
	for range 1 + r.IntN(6) {
		k := fmt.Sprintf("f%d", r.IntN(50))
		switch r.IntN(7) {
		case 0:
			m[k] = r.IntN(100000)
		case 1:
			m[k] = fmt.Sprintf("text %d", r.IntN(1000))
		case 2:
			s := fmt.Sprintf("%d", r.IntN(1000))
			at := r.IntN(len(s) + 1)
			m[k] = s[:at] + " " + secret + " " + s[at:]
		case 3:
			m["vendorCheck"] = fmt.Sprintf("%03d", r.IntN(1000))
		case 4:
			if depth < 3 {
				m[k] = genCard(r, secret, depth+1)
			}
		case 5:
			if depth < 3 {
				m[k] = []any{genCard(r, secret, depth+1), r.IntN(10)}
			}
		default:
			m[k] = r.IntN(2) == 0
		}
	}
	return m
}

// TestFieldNameUnderRules: a field a walk drops, or records under another
// name, is one a rescan removes from card_fields; others stay.
func TestFieldNameUnderRules(t *testing.T) {
	policy := Options{RedactFields: []string{"vendorCheck"}}.Settings().Policy
	for name, want := range map[string]bool{"status": true, "balance": true, "vendorCheck": false, "4111111111111111": false, "cvv": false, "pin_verified": true} {
		got, ok := fieldNameUnderRules(policy, name)
		if (ok && got == name) != want {
			t.Errorf("fieldNameUnderRules(%q) = %q, %v; kept want %v", name, got, ok, want)
		}
		row := StoredRow{Key: RescanKey{Text: name}, Texts: []*string{&name}}
		if _, _, changed := rescanRowByPolicy(policy, PhaseFields, row); changed == want {
			t.Errorf("rescanRowByPolicy(fields, %q) changed %v, want %v", name, changed, !want)
		}
	}
}

// TestCardMoveAgreesWithASync generates cards whose id is a card number
// (random networks, a string with any separator and script's digits, or a
// JSON number) stored by an older release (the id in full, the data as
// received or as redacted) and checks that the move a rescan makes stores
// exactly the id, data and hash a sync of the same card stores now, holds
// no card number, and that the moved card is neither moved nor rewritten
// again.
func TestCardMoveAgreesWithASync(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 2))
	const secret = "Gen3rated-Secret-Value"
	var secrets redact.Secrets
	secrets.Add(secret)
	policy := Options{RedactFields: []string{"vendorCheck"}, Secrets: &secrets}.Settings().Policy
	rules := NewItemRules(policy, testKey, nil)
	for i := range 1000 {
		pan := genPAN(r)
		id, idJSON := pan, []byte(pan)
		if r.IntN(3) > 0 {
			id = respell(r, pan)
			idJSON, _ = json.Marshal(id)
		}
		doc := genCard(r, secret, 0)
		delete(doc, "id")
		body, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		raw := append(append(append([]byte(`{"id":`), idJSON...), ','), body[1:]...)
		if len(body) == 2 {
			raw = append(append([]byte(`{"id":`), idJSON...), '}')
		}
		it, err := PreparePageItems(rules, Page{Number: 1, Cards: []Card{{ID: id, Data: raw}}})
		if err != nil || len(it.Cards) != 1 {
			t.Fatalf("seed %d case %d: a sync stores %+v, %v", seed, i, it, err)
		}
		want := it.Cards[0]
		stored := string(raw)
		if r.IntN(2) == 0 {
			out, _, err := policy.JSON(raw)
			if err != nil {
				t.Fatal(err)
			}
			stored = string(out)
		}
		mv, ok, err := cardMove(rules, StoredRow{Key: RescanKey{Text: id}, Texts: []*string{&stored, nil}})
		if err != nil || !ok {
			t.Fatalf("seed %d case %d: id %q not moved: %v", seed, i, id, err)
		}
		if mv.Old != id || mv.New != want.ID || mv.Data != string(want.Data) || !bytes.Equal(mv.Hash, want.Hash) {
			t.Fatalf("seed %d case %d: id %q\nmove %s %s\nsync %s %s", seed, i, id, mv.New, mv.Data, want.ID, want.Data)
		}
		if strings.Contains(mv.Data, pan) || strings.Contains(mv.New, pan) {
			t.Fatalf("seed %d case %d: the card number is left in %s", seed, i, mv.Data)
		}
		again := StoredRow{Key: RescanKey{Text: mv.New}, Texts: []*string{&mv.Data, nil}, Hash: mv.Hash}
		if _, ok, _ := cardMove(rules, again); ok {
			t.Fatalf("seed %d case %d: a moved id %q moves again", seed, i, mv.New)
		}
		if _, _, changed := rescanRowByPolicy(policy, PhaseCards, again); changed {
			t.Fatalf("seed %d case %d: the moved card is rewritten again: %s", seed, i, mv.Data)
		}
	}
}
